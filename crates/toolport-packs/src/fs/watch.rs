//! Change notifications from the operating system's file watcher (inotify
//! through `notify`): a file that changed under a root becomes one
//! `notifications/resources/updated` for its `file://` URI, delivered by the
//! server to legacy subscribers and to 2026-07-28 `subscriptions/listen`
//! streams that asked for it. The burst of events one write makes (modify,
//! close, rename of a temporary file) is folded into one update once the
//! file has been quiet for a moment.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio::time::Instant;
use toolport_server::Server;

use super::error::FsError;
use super::resources::refresh_listing;
use super::sandbox::Root;
use super::write::TEMP_MARK;
use super::{FsPack, Shared};

/// How long a path must be quiet before its update goes out.
const QUIET: Duration = Duration::from_millis(150);

/// Watches the roots while it lives; dropping it stops the notifications.
pub struct FsWatcher {
    _watcher: Option<RecommendedWatcher>,
    task: tokio::task::JoinHandle<()>,
}

impl fmt::Debug for FsWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FsWatcher")
            .field("watching", &self._watcher.is_some())
            .finish()
    }
}

impl Drop for FsWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FsPack {
    /// Starts watching the roots (when the configuration asks for it) and
    /// announcing changed files on `server`. Needs a Tokio runtime.
    pub fn watch(&self, server: &Server) -> Result<FsWatcher, FsError> {
        let (tx, rx) = mpsc::unbounded_channel::<PathBuf>();
        let task = tokio::spawn(announce(self.shared.clone(), server.clone(), rx));
        if !self.shared.watch {
            return Ok(FsWatcher { _watcher: None, task });
        }
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| match event {
            Ok(event) if relevant(&event.kind) => {
                for path in event.paths {
                    let _ = tx.send(path);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "file watcher error"),
        })
        .map_err(|e| FsError::Invalid(format!("the file watcher could not start: {e}")))?;
        for root in &self.shared.sandbox.roots {
            watcher.watch(&root.path, RecursiveMode::Recursive).map_err(|e| {
                FsError::Invalid(format!(
                    "cannot watch {} for changes: {e} (on Linux, raise fs.inotify.max_user_watches, or set watch = false)",
                    root.path.display()
                ))
            })?;
        }
        Ok(FsWatcher {
            _watcher: Some(watcher),
            task,
        })
    }
}

/// Changes, not reads: opening or closing a file without writing is not one.
fn relevant(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
        EventKind::Any | EventKind::Other => true,
    }
}

/// Collects changed paths and sends each one's update after it went quiet.
async fn announce(shared: Arc<Shared>, server: Server, mut rx: mpsc::UnboundedReceiver<PathBuf>) {
    let mut pending: HashMap<PathBuf, Instant> = HashMap::new();
    loop {
        let next_due = pending.values().min().copied();
        let received = match next_due {
            Some(due) => tokio::select! {
                path = rx.recv() => Some(path),
                _ = tokio::time::sleep_until(due) => None,
            },
            None => Some(rx.recv().await),
        };
        match received {
            Some(None) => return,
            Some(Some(path)) => {
                pending.insert(path, Instant::now() + QUIET);
            }
            None => {
                let now = Instant::now();
                let due: Vec<PathBuf> = pending
                    .iter()
                    .filter(|(_, t)| **t <= now)
                    .map(|(p, _)| p.clone())
                    .collect();
                for path in due {
                    pending.remove(&path);
                    changed(&shared, &server, &path);
                }
            }
        }
    }
}

/// Announces one changed path.
fn changed(shared: &Arc<Shared>, server: &Server, path: &Path) {
    if path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().contains(TEMP_MARK))
    {
        return;
    }
    let Some((root, rel)) = shared.sandbox.locate(path) else {
        return;
    };
    if rel.components().count() == 1 {
        // A file directly inside the root may have come or gone.
        refresh_listing(shared, server, &root);
    }
    server.resource_updated_version(&Root::uri(&root, &rel), &version(path));
}

/// Names a change by what it left: the file's modification time and size,
/// or its absence. Replicas watching one shared folder see the same change
/// alike, so a shared bus announces it once, not once per replica.
fn version(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{modified}:{}", meta.len())
        }
        Err(_) => "gone".into(),
    }
}
