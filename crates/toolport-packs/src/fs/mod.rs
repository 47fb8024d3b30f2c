//! The filesystem pack: read (and, under writable roots, change) files inside
//! configured roots, with containment enforced by the kernel at open time.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! use toolport_packs::fs::{FsConfig, FsPack};
//! use toolport_server::Server;
//!
//! let pack = FsPack::from_config(&FsConfig::default())?;
//! let server = pack.clone().install(Server::builder("files", "1.0.0")).build()?;
//! let _watcher = pack.watch(&server)?; // resource updates while it lives
//! server.serve_stdio().await;
//! # Ok::<_, Box<dyn std::error::Error>>(()) })
//! # }
//! ```

mod error;
mod media;
mod path;
mod read;
mod resources;
mod sandbox;
mod tree;
mod uri;
mod watch;
mod write;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use toolport_server::{CacheHints, ServerBuilder, ToolError};

pub use error::FsError;
pub use resources::{ETAG_META, IF_NONE_MATCH_META, NOT_MODIFIED_META};
pub use watch::FsWatcher;

use sandbox::{Access, Root, Sandbox};

/// One directory the pack may use.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RootConfig {
    /// The directory.
    pub path: PathBuf,
    /// The name tools address it by; its directory name by default.
    #[serde(default)]
    pub name: Option<String>,
    /// Whether the write tools may change files under it. Off by default.
    #[serde(default)]
    pub writable: bool,
}

impl RootConfig {
    /// A read-only root.
    pub fn read_only(path: impl Into<PathBuf>) -> Self {
        RootConfig {
            path: path.into(),
            name: None,
            writable: false,
        }
    }

    /// A writable root.
    pub fn writable(path: impl Into<PathBuf>) -> Self {
        RootConfig {
            writable: true,
            ..RootConfig::read_only(path)
        }
    }
}

/// Caps on what one call may read, list or write.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsLimits {
    /// Most bytes `read_file` returns at once (a larger file is read in ranges).
    pub max_read_bytes: u64,
    /// Largest file `read_media` and binary resource reads return.
    pub max_media_bytes: u64,
    /// Largest file `write_file` and `edit_file` write, and `edit_file` reads.
    pub max_write_bytes: u64,
    /// Most entries `list_directory` returns.
    pub max_entries: usize,
    /// Deepest `directory_tree` goes.
    pub max_depth: usize,
    /// Most entries `directory_tree` returns in all.
    pub max_tree_entries: usize,
    /// Most matches `search_files` returns.
    pub max_search_results: usize,
    /// Most entries `search_files` looks at before it stops.
    pub max_search_visited: usize,
}

impl Default for FsLimits {
    fn default() -> Self {
        FsLimits {
            max_read_bytes: 1 << 20,
            max_media_bytes: 8 << 20,
            max_write_bytes: 8 << 20,
            max_entries: 1000,
            max_depth: 10,
            max_tree_entries: 2000,
            max_search_results: 500,
            max_search_visited: 50_000,
        }
    }
}

/// Settings of the filesystem pack.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsConfig {
    /// The directories the pack may use; the first is the default for tools
    /// called without `root`. Default: the current directory, read-only.
    pub roots: Vec<RootConfig>,
    /// Whether the client's roots (when it declares the capability) narrow
    /// access further. They can never widen it.
    pub honor_client_roots: bool,
    /// Whether to watch the roots and announce changed files to resource
    /// subscribers.
    pub watch: bool,
    /// How long (ms) a 2026-07-28 client may reuse a file resource read.
    pub cache_ttl_ms: u64,
    /// Files directly inside each root listed as resources (more are still
    /// readable through the template).
    pub listed_files: usize,
    /// Caps per call.
    pub limits: FsLimits,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            roots: vec![RootConfig::read_only(".")],
            honor_client_roots: true,
            watch: true,
            cache_ttl_ms: 2000,
            listed_files: 100,
            limits: FsLimits::default(),
        }
    }
}

/// The filesystem pack. Cheap to clone.
#[derive(Debug, Clone)]
pub struct FsPack {
    pub(crate) shared: Arc<Shared>,
}

/// What every tool of the pack shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) sandbox: Sandbox,
    pub(crate) limits: FsLimits,
    pub(crate) cache: CacheHints,
    pub(crate) listed_files: usize,
    pub(crate) watch: bool,
}

impl FsPack {
    /// Opens the configured roots. Fails when there are none, when one cannot
    /// be opened as a directory, or when two share a name.
    pub fn from_config(config: &FsConfig) -> Result<FsPack, FsError> {
        if config.roots.is_empty() {
            return Err(FsError::Invalid("the filesystem pack needs at least one root".into()));
        }
        let mut names = BTreeSet::new();
        let mut roots = Vec::new();
        for rc in &config.roots {
            let shown = rc.path.display().to_string();
            let root_error = |e| FsError::Invalid(format!("root {shown:?} cannot be opened as a directory: {e}"));
            let canonical = std::fs::canonicalize(&rc.path).map_err(root_error)?;
            let default_name = canonical
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into());
            let name = rc.name.clone().unwrap_or(default_name);
            if name.is_empty() || name.contains(['/', '\0']) {
                return Err(FsError::Invalid(format!(
                    "root name {name:?} must be non-empty, without '/'"
                )));
            }
            if !names.insert(name.clone()) {
                return Err(FsError::Invalid(format!(
                    "two roots are named {name:?}; give one a `name`"
                )));
            }
            roots.push(Arc::new(Root::open(name, &canonical, rc.writable).map_err(root_error)?));
        }
        Ok(FsPack {
            shared: Arc::new(Shared {
                sandbox: Sandbox {
                    roots,
                    honor_client_roots: config.honor_client_roots,
                },
                limits: config.limits.clone(),
                cache: CacheHints {
                    ttl_ms: config.cache_ttl_ms,
                    // A read depends on the caller's roots: never shared.
                    scope: toolport_protocol::result::CacheScope::Private,
                },
                listed_files: config.listed_files,
                watch: config.watch,
            }),
        })
    }

    /// The roots: name, canonical path, writable.
    pub fn roots(&self) -> Vec<(String, PathBuf, bool)> {
        self.shared
            .sandbox
            .roots
            .iter()
            .map(|r| (r.name.clone(), r.path.clone(), r.writable))
            .collect()
    }

    /// Whether any root is writable (and so the write tools are offered).
    pub fn has_writable_root(&self) -> bool {
        self.shared.sandbox.roots.iter().any(|r| r.writable)
    }

    /// Adds the tools, the file resources and the `file://` templates.
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        let builder = read::install(&self.shared, builder);
        let builder = media::install(&self.shared, builder);
        let builder = tree::install(&self.shared, builder);
        let builder = if self.has_writable_root() {
            write::install(&self.shared, builder)
        } else {
            builder
        };
        resources::install(&self.shared, builder)
    }
}

/// Runs blocking file work off the async threads.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, FsError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("the file operation stopped unexpectedly: {e}")))?
        .map_err(ToolError::from)
}

impl Shared {
    /// What this request may touch.
    pub(crate) async fn access(&self, cx: &toolport_server::RequestContext) -> Result<Access, ToolError> {
        self.sandbox.access(cx).await
    }
}
