//! `toolport serve`'s audit stream (on by default, to `audit.jsonl` in the
//! data directory, signed with `audit.key` there) and `toolport audit verify`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toolport::config::{AuditSection, default_key_file};
use toolport_server::audit::{AuditKey, AuditLog, AuditOptions, Tail, verify_file};

/// Opens the audit stream the configuration asks for; with it, the line
/// `toolport serve` prints about it.
pub(crate) fn open(section: &AuditSection) -> Result<(Option<AuditLog>, String)> {
    if !section.enabled {
        return Ok((None, "audit: off ([audit] enabled = false)".into()));
    }
    let (path, default_path) = section.path_or_default();
    let (key_file, default_key) = section.key_file_or_default();
    let key = if default_key {
        AuditKey::load_or_create(&key_file)
    } else {
        AuditKey::load(&key_file)
    }
    .with_context(|| format!("the audit key (audit.key_file = {:?})", key_file.display().to_string()))?;
    if default_path && let Some(dir) = Path::new(&path).parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating the data directory {}", dir.display()))?;
    }
    let options = AuditOptions {
        redact: section.redact.clone(),
        checkpoint_every: section.checkpoint_every,
    };
    match AuditLog::open(&path, key.clone(), options) {
        Ok(log) => Ok((
            Some(log),
            format!("audit: {path} (key {}, id {})", key_file.display(), key.id()),
        )),
        // One writer per file: a second server on the same data directory
        // (a stdio server an editor started beside an HTTP one) runs
        // without the default stream rather than not at all, and says so.
        Err(e) if default_path && e.kind() == std::io::ErrorKind::WouldBlock => Ok((
            None,
            format!("audit: OFF for this process: {e}; set [audit] path or TOOLPORT_DATA_DIR for it"),
        )),
        Err(e) => Err(e)
            .with_context(|| format!("audit.path = {path:?} (set another [audit] path, or [audit] enabled = false)")),
    }
}

/// `toolport audit verify FILE [--key-file PATH]`.
pub(crate) fn verify(file: &Path, key_file: Option<PathBuf>) -> ExitCode {
    match verify_report(file, key_file) {
        Ok(report) => {
            let _ = writeln!(std::io::stdout(), "{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolport: {}: {e:#}", file.display());
            ExitCode::from(1)
        }
    }
}

fn verify_report(file: &Path, key_file: Option<PathBuf>) -> Result<String> {
    let key_file = key_file
        .or_else(|| std::env::var_os("TOOLPORT_AUDIT_KEY_FILE").map(PathBuf::from))
        .unwrap_or_else(default_key_file);
    let key = AuditKey::load(&key_file).context("give the key the file was written with: --key-file PATH")?;
    let verified = match verify_file(file, &key) {
        Ok(verified) => verified,
        Err(broken) => bail!("{broken}"),
    };
    let mut report = format!(
        "{}: {} records in {} runs, chain intact",
        file.display(),
        verified.calls,
        verified.runs
    );
    match verified.tail {
        Tail::Closed => report.push_str(", closed"),
        Tail::Open { last_checkpoint, .. } => report.push_str(&format!(
            "; a server is writing it now (records after {} are not sealed by a checkpoint yet)",
            last_checkpoint.map_or("its run's start".to_owned(), |c| format!("record {c}"))
        )),
    }
    for record in verified.unclosed_before {
        report.push_str(&format!(
            "\nnote: the run opening at record {record} follows one that did not close (a crash, or records cut before that server started)"
        ));
    }
    Ok(report)
}
