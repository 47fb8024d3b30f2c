//! Ready tool packs for Toolport servers.
//!
//! - [`fs`]: files inside configured roots, with containment enforced by the
//!   kernel when a path is opened (`openat2` with `RESOLVE_BENEATH`), write
//!   tools only under writable roots, files as resources with change
//!   notifications.
//! - [`sql`]: one read-only statement at a time against SQLite or
//!   PostgreSQL, with read-only enforced by the database and statements
//!   checked by a parser first.
//!
//! [`PacksConfig`] holds both packs' settings with safe defaults: the current
//! directory read-only, and a small demo SQLite database created on first run.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolport_packs::{Packs, PacksConfig};
//! use toolport_server::Server;
//!
//! let packs = Packs::open(&PacksConfig::default()).await?;
//! let server = packs.install(Server::builder("packs", "1.0.0")).build()?;
//! let _running = packs.start(&server)?; // keep it: it owns the file watcher
//! server.serve_stdio().await;
//! # Ok(()) }
//! ```

mod config;
mod data_dir;
pub mod fs;
#[doc(hidden)]
pub mod fuzzing;
pub mod sql;
mod time;

pub use config::{Packs, PacksConfig, PacksError, PacksRuntime};
pub use data_dir::default_data_dir;
pub use fs::{FsConfig, FsPack, FsWatcher, RootConfig};
pub use sql::{SqlConfig, SqlPack};
