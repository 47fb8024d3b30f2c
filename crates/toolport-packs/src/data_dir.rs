//! Where the packs keep data of their own. A leaf: the SQL pack reads it for
//! its demo database, and the packs' settings name it as their default.

use std::path::PathBuf;

/// Where the packs keep data of their own (the demo database):
/// `$TOOLPORT_DATA_DIR`, else `$XDG_DATA_HOME/toolport`, else
/// `~/.local/share/toolport`, else `.toolport` in the current directory.
pub fn default_data_dir() -> PathBuf {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("TOOLPORT_DATA_DIR")
        .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("toolport")))
        .or_else(|| env("HOME").map(|h| h.join(".local/share/toolport")))
        .unwrap_or_else(|| PathBuf::from(".toolport"))
}
