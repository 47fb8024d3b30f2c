//! The durable task engine: work that outlives a request, for MCP tasks
//! (2025-11-25 `basic/utilities/tasks` and the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks`) and A2A tasks alike.
//!
//! - [`TaskRecord`]: one task: an unguessable id, its owner principal, a
//!   [`TaskStatus`], the result or error, a version, and a [`Lease`] naming
//!   the runner working on it.
//! - [`TaskEngine`]: create, get, list, transition by compare and swap,
//!   cancel, watch, and recovery ([`TaskEngine::claim_expired`]). Terminal
//!   states are final; every read is scoped to the owner, and another
//!   principal's task is "not found".
//! - [`TaskStore`]: where records live: [`SqliteStore`] in the data
//!   directory by default, [`PostgresStore`] when several processes share
//!   tasks.

mod clock;
mod engine;
mod error;
mod event;
mod id;
mod keeper;
mod record;
mod recovery;
mod status;
mod store;
#[cfg(feature = "store-suite")]
pub mod suite;
mod watch;

pub use clock::{Clock, ManualClock, SystemClock};
pub use engine::{EngineConfig, TaskEngine};
pub use error::{StoreError, TaskError};
pub use event::TaskEvent;
pub use id::{MAX_ID_LEN, TaskId};
pub use keeper::LeaseKeeper;
pub use record::{Lease, Millis, NewTask, TaskPage, TaskRecord, Transition};
pub use recovery::Recovery;
pub use status::{TaskStatus, UnknownStatus};
pub use store::{ListPosition, PostgresStore, SQLITE_FILE_NAME, SqliteStore, TaskStore};
pub use watch::TaskWatch;
