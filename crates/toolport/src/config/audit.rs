//! The `[audit]` section.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The audit stream's settings. On by default, to `audit.jsonl` in the
/// data directory, signed with `audit.key` there (made on first start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSection {
    /// Whether tool calls are audited.
    pub enabled: bool,
    /// A file to append to, `-` for standard output; none: `audit.jsonl`
    /// in the data directory.
    pub path: Option<String>,
    /// The key file (hex, 32 bytes or more; `TOOLPORT_AUDIT_KEY_FILE`);
    /// none: `audit.key` in the data directory, created on first start.
    pub key_file: Option<PathBuf>,
    /// A signed checkpoint after this many records (and one at shutdown).
    pub checkpoint_every: u64,
    /// Argument fields whose values are never written.
    pub redact: Vec<String>,
}

impl AuditSection {
    /// The audit file: the configured one, or `audit.jsonl` in the data directory.
    pub fn path_or_default(&self) -> (String, bool) {
        match &self.path {
            Some(path) => (path.clone(), false),
            None => (
                toolport_packs::default_data_dir()
                    .join("audit.jsonl")
                    .to_string_lossy()
                    .into_owned(),
                true,
            ),
        }
    }

    /// The key file: the configured one, or `audit.key` in the data directory.
    pub fn key_file_or_default(&self) -> (PathBuf, bool) {
        match &self.key_file {
            Some(path) => (path.clone(), false),
            None => (default_key_file(), true),
        }
    }
}

/// `audit.key` in the data directory: where `toolport serve` keeps its audit
/// key and `toolport audit verify` looks for it.
pub fn default_key_file() -> PathBuf {
    toolport_packs::default_data_dir().join("audit.key")
}

impl Default for AuditSection {
    fn default() -> Self {
        let redact = [
            "password",
            "passwd",
            "secret",
            "token",
            "api_key",
            "apikey",
            "authorization",
            "cookie",
        ];
        AuditSection {
            enabled: true,
            path: None,
            key_file: None,
            checkpoint_every: 1000,
            redact: redact.map(String::from).to_vec(),
        }
    }
}
