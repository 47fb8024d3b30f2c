//! Pinning of upstream tool definitions, and the poisoned-description
//! scanner run on every listing.
//!
//! With `[gateway] pins = "FILE"`, a tool whose definition is not approved
//! in the file (new, or changed since its approval) is quarantined: not
//! listed, not callable. `toolport pins list` shows what waits, `toolport
//! pins approve NAME` approves it in the file; the gateway sees the file
//! change and serves the tool.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use serde_json::Value;
use toolport_auth::pinning::{PinError, ToolPins, TracingAudit};
use toolport_auth::scan::{ScanContext, scan_tools};
use toolport_protocol::tools::Tool;

/// The pins of a running gateway, kept in step with their file.
#[derive(Debug)]
pub struct Pinning {
    path: PathBuf,
    pins: RwLock<Arc<ToolPins>>,
    loaded: RwLock<Option<SystemTime>>,
}

impl Pinning {
    /// Loads the pins file (a missing file is empty pins).
    pub fn open(path: &Path) -> Result<Pinning, PinError> {
        let pins = ToolPins::load(path, Arc::new(TracingAudit))?;
        Ok(Pinning {
            path: path.to_owned(),
            pins: RwLock::new(Arc::new(pins)),
            loaded: RwLock::new(modified(path)),
        })
    }

    fn pins(&self) -> Arc<ToolPins> {
        self.pins.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reviews an upstream's tools: returns the names that may be served;
    /// records what is new or changed in the file for `toolport pins`.
    pub(crate) fn review(&self, upstream: &str, tools: &[Tool]) -> BTreeSet<String> {
        let values: Vec<Value> = tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
        let pins = self.pins();
        let review = pins.review(upstream, &values);
        for q in &review.quarantined {
            tracing::warn!(target: "toolport::pins", %upstream, tool = %q.tool, event = ?q.event,
                "quarantined: hidden and refused until approved with `toolport pins approve`");
        }
        if let Err(e) = pins.save(&self.path) {
            tracing::warn!(target: "toolport::pins", error = %e, "could not write the pins file");
        }
        *self.loaded.write().unwrap_or_else(|p| p.into_inner()) = modified(&self.path);
        review.callable.into_iter().collect()
    }

    /// Whether the file changed since it was last read or written here; if
    /// so it is read again (approvals made with `toolport pins`).
    pub(crate) fn reload_if_changed(&self) -> bool {
        let now = modified(&self.path);
        if now == *self.loaded.read().unwrap_or_else(|p| p.into_inner()) {
            return false;
        }
        match ToolPins::load(&self.path, Arc::new(TracingAudit)) {
            Ok(pins) => {
                *self.pins.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(pins);
                *self.loaded.write().unwrap_or_else(|p| p.into_inner()) = now;
                true
            }
            Err(e) => {
                tracing::warn!(target: "toolport::pins", error = %e, "the pins file changed but cannot be read; keeping the pins in memory");
                *self.loaded.write().unwrap_or_else(|p| p.into_inner()) = now;
                false
            }
        }
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Runs the scanner on an upstream's tools and logs what it finds.
pub(crate) fn scan(upstream: &str, tools: &[Tool], others: Vec<String>) -> usize {
    let values: Vec<Value> = tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
    let findings = scan_tools(&values, &ScanContext { other_tools: others });
    for f in &findings {
        tracing::warn!(target: "toolport::scan", %upstream, tool = %f.tool, rule = f.rule.name(), location = %f.location, excerpt = %f.excerpt,
            "suspicious text in an upstream tool definition");
    }
    findings.len()
}
