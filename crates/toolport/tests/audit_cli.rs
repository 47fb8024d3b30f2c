//! `toolport serve` audits by default, to `audit.jsonl` in its data
//! directory, signed with `audit.key` (mode 0600) made there on first
//! start; `toolport audit verify` reads the same key and finds every kind
//! of tampering at the record where it starts.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use toolport_server::audit::{AuditKey, AuditLog, AuditOptions, AuditRecord};

const TOOLPORT: &str = env!("CARGO_BIN_EXE_toolport");

/// Runs `toolport serve --demo --stdio` with `data` as its data directory,
/// makes `calls` echo calls and closes its input (a clean shutdown).
fn serve_calls(data: &Path, calls: usize, extra: &[&str]) -> Output {
    let mut child = Command::new(TOOLPORT)
        .args(["serve", "--demo", "--stdio"])
        .args(extra)
        .env("TOOLPORT_DATA_DIR", data)
        .env_remove("TOOLPORT_AUDIT_KEY_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    for i in 0..calls {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m{i}"}}}}}}"#,
            i + 1
        )
        .unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answers = String::from_utf8_lossy(&output.stdout).lines().count();
    assert_eq!(answers, calls + 1, "every call answered, nothing else on stdout");
    output
}

fn verify(file: &Path, data: &Path, key_file: Option<&Path>) -> Output {
    let mut command = Command::new(TOOLPORT);
    command
        .args(["audit", "verify"])
        .arg(file)
        .env("TOOLPORT_DATA_DIR", data)
        .env_remove("TOOLPORT_AUDIT_KEY_FILE");
    if let Some(key_file) = key_file {
        command.arg("--key-file").arg(key_file);
    }
    command.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

/// The verify error's `record N (line L)` and its reason.
fn broken_at(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    stderr(output)
}

#[test]
fn serve_audits_by_default_and_verify_finds_every_kind_of_tampering_where_it_starts() {
    let data = tempfile::tempdir().unwrap();
    serve_calls(data.path(), 3, &[]);
    serve_calls(data.path(), 2, &[]);
    let audit = data.path().join("audit.jsonl");
    let key_file = data.path().join("audit.key");
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the key is the owner's alone");
    let key_text = std::fs::read_to_string(&key_file).unwrap();
    let ok = verify(&audit, data.path(), None);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let report = String::from_utf8_lossy(&ok.stdout);
    assert!(report.contains("5 records in 2 runs, chain intact, closed"), "{report}");
    let original = lines_of(&audit);
    // run 1: open(1) call(2..4) closing(5); run 2: open(6) call(7, 8) closing(9)
    assert_eq!(original.len(), 9);
    assert!(!original.concat().contains(key_text.trim()), "the key is never written");

    let truncated = &original[..7];
    write_lines(&audit, truncated);
    let err = broken_at(&verify(&audit, data.path(), None));
    assert!(err.contains("record 8 (line 8)") && err.contains("truncated"), "{err}");

    let mut deleted = original.clone();
    deleted.remove(2);
    write_lines(&audit, &deleted);
    let err = broken_at(&verify(&audit, data.path(), None));
    assert!(err.contains("record 3 (line 3)") && err.contains("missing"), "{err}");

    let mut swapped = original.clone();
    swapped.swap(2, 3);
    write_lines(&audit, &swapped);
    let err = broken_at(&verify(&audit, data.path(), None));
    assert!(err.contains("record 3 (line 3)"), "{err}");

    // Recomputed without the key: the same calls, every MAC consistent under
    // another key, our key's id copied in.
    let forged_key = AuditKey::generate();
    let sink = tempfile::NamedTempFile::new().unwrap();
    {
        let log = AuditLog::open(
            sink.path().to_str().unwrap(),
            forged_key.clone(),
            AuditOptions::default(),
        )
        .unwrap();
        for line in original.iter().filter(|l| l.contains("\"kind\":\"call\"")) {
            let v: Value = serde_json::from_str(line).unwrap();
            log.record(AuditRecord {
                time: v["time"].as_str().unwrap().into(),
                principal: None,
                session: None,
                request_id: v["request_id"].clone(),
                tool: v["tool"].as_str().unwrap().into(),
                arguments: v["arguments"].clone(),
                outcome: v["outcome"].as_str().unwrap().into(),
                duration_ms: 0,
                trace_id: None,
            });
        }
    }
    let ours = AuditKey::load(&key_file).unwrap().id();
    let forged: Vec<String> = lines_of(sink.path())
        .iter()
        .map(|l| l.replace(&forged_key.id(), &ours))
        .collect();
    write_lines(&audit, &forged);
    let err = broken_at(&verify(&audit, data.path(), None));
    assert!(
        err.contains("record 1 (line 1)") && err.contains("without the key"),
        "{err}"
    );

    // The intact file verifies with the key named explicitly, not with another.
    write_lines(&audit, &original);
    assert!(verify(&audit, data.path(), Some(&key_file)).status.success());
    let other = data.path().join("other.key");
    std::fs::write(&other, format!("{}\n", "ab".repeat(32))).unwrap();
    let err = broken_at(&verify(&audit, data.path(), Some(&other)));
    assert!(err.contains("another key"), "{err}");
}

#[test]
fn the_audit_can_be_turned_off_and_stdout_is_never_its_destination_on_stdio() {
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("toolport.toml");
    std::fs::write(&config, "[audit]\nenabled = false\n").unwrap();
    let config_arg = config.to_str().unwrap();
    serve_calls(data.path(), 1, &["--config", config_arg]);
    assert!(!data.path().join("audit.jsonl").exists());
    std::fs::write(&config, "[audit]\npath = \"-\"\n").unwrap();
    let refused = Command::new(TOOLPORT)
        .args(["serve", "--demo", "--stdio", "--config", config_arg])
        .env("TOOLPORT_DATA_DIR", data.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("audit.path"), "{}", stderr(&refused));
}
