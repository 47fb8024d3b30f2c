use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn record(tool: &str, arguments: Value) -> AuditRecord {
    AuditRecord {
        time: now_rfc3339(),
        principal: Some("alice".into()),
        session: None,
        request_id: json!(1),
        tool: tool.into(),
        arguments,
        outcome: "ok".into(),
        duration_ms: 3,
        trace_id: None,
    }
}

fn key() -> AuditKey {
    AuditKey::from_bytes(&[7u8; 32]).unwrap()
}

fn written(records: &[AuditRecord], checkpoint_every: u64) -> String {
    let buffer = Shared::default();
    let options = AuditOptions {
        redact: vec!["password".into()],
        checkpoint_every,
    };
    let log = AuditLog::to_writer(Box::new(buffer.clone()), key(), options);
    for r in records {
        log.record(r.clone());
    }
    log.close();
    String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn a_written_chain_verifies_and_secrets_are_redacted() {
    let text = written(
        &[
            record("a", json!({"user": "x", "Password": "hunter2"})),
            record("b", json!([{"password": 1}])),
        ],
        1000,
    );
    let verified = verify(text.as_bytes(), &key()).unwrap();
    assert_eq!((verified.calls, verified.lines, verified.runs), (2, 4, 1));
    assert_eq!(verified.tail, Tail::Closed);
    assert!(!text.contains("hunter2"));
    assert_eq!(text.matches(REDACTED).count(), 2);
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kinds, ["open", "call", "call", "checkpoint"]);
}

#[test]
fn checkpoints_come_every_n_records_and_at_the_close() {
    let records: Vec<AuditRecord> = (0..7).map(|i| record(&format!("t{i}"), json!({}))).collect();
    let text = written(&records, 3);
    let checkpoints: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "checkpoint")
        .collect();
    assert_eq!(checkpoints.len(), 3, "after 3, after 6, and the closing one");
    assert_eq!(checkpoints[2]["closing"], true);
    assert_eq!(checkpoints[2]["records"], 7);
    assert_eq!(verify(text.as_bytes(), &key()).unwrap().calls, 7);
}

/// Every way of tampering, each found at the record where it starts.
#[test]
fn truncation_deletion_reordering_and_recomputation_are_found_where_they_start() {
    let records: Vec<AuditRecord> = ["a", "b", "c", "d"].iter().map(|t| record(t, json!({}))).collect();
    let text = written(&records, 1000);
    let lines: Vec<&str> = text.lines().collect();
    // open(1) a(2) b(3) c(4) d(5) checkpoint(6)
    let join = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();

    let edited = text.replacen("\"tool\":\"b\"", "\"tool\":\"x\"", 1);
    let err = verify(edited.as_bytes(), &key()).unwrap_err();
    assert_eq!((err.record, err.line), (3, 3), "{err}");
    assert!(err.reason.contains("MAC"), "{err}");

    let deleted = join(&[lines[0], lines[1], lines[3], lines[4], lines[5]]);
    let err = verify(deleted.as_bytes(), &key()).unwrap_err();
    assert_eq!((err.record, err.line), (3, 3), "{err}");
    assert!(err.reason.contains("missing"), "{err}");

    let swapped = join(&[lines[0], lines[1], lines[3], lines[2], lines[4], lines[5]]);
    let err = verify(swapped.as_bytes(), &key()).unwrap_err();
    assert_eq!((err.record, err.line), (3, 3), "{err}");

    let cut = join(&lines[..4]);
    let verified = verify(cut.as_bytes(), &key()).unwrap();
    assert_eq!(
        verified.tail,
        Tail::Open {
            last_record: 4,
            line: 4,
            last_checkpoint: None
        }
    );
    let cut_mid_line = format!("{}{}", join(&lines[..3]), &lines[3][..20]);
    let err = verify(cut_mid_line.as_bytes(), &key()).unwrap_err();
    assert_eq!((err.record, err.line), (4, 4), "{err}");

    // Recomputed with another key (the attacker's), every MAC consistent.
    let forged = {
        let buffer = Shared::default();
        let other = AuditKey::from_bytes(&[9u8; 32]).unwrap();
        let log = AuditLog::to_writer(Box::new(buffer.clone()), other, AuditOptions::default());
        log.record(record("a", json!({})));
        log.close();
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    };
    let err = verify(forged.as_bytes(), &key()).unwrap_err();
    assert_eq!((err.record, err.line), (1, 1), "{err}");
    assert!(err.reason.contains("another key"), "{err}");
    // ... or with the key id copied over, to look like ours.
    let forged_id = forged.replace(&AuditKey::from_bytes(&[9u8; 32]).unwrap().id(), &key().id());
    let err = verify(forged_id.as_bytes(), &key()).unwrap_err();
    assert_eq!((err.record, err.line), (1, 1), "{err}");
    assert!(err.reason.contains("recomputed without the key"), "{err}");
    assert!(verify("not json\n".as_bytes(), &key()).is_err());
}

#[test]
fn a_file_continues_its_chain_across_runs_and_one_writer_holds_it() {
    let dir = std::env::temp_dir().join(format!("toolport-audit-runs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    let name = path.to_str().unwrap();
    let first = AuditLog::open(name, key(), AuditOptions::default()).unwrap();
    first.record(record("a", json!({})));
    first.sync();
    // A second writer is refused while the first runs, and the file reads as being written.
    let refused = AuditLog::open(name, key(), AuditOptions::default()).unwrap_err();
    assert!(refused.to_string().contains("another process"), "{refused}");
    assert!(matches!(verify_file(&path, &key()).unwrap().tail, Tail::Open { .. }));
    drop(first);
    let second = AuditLog::open(name, key(), AuditOptions::default()).unwrap();
    second.record(record("b", json!({})));
    second.close();
    let verified = verify_file(&path, &key()).unwrap();
    assert_eq!(
        (verified.runs, verified.calls, verified.tail.clone()),
        (2, 2, Tail::Closed)
    );
    assert!(verified.unclosed_before.is_empty());
    // Another key cannot continue it.
    let other = AuditKey::from_bytes(&[1u8; 32]).unwrap();
    assert!(
        AuditLog::open(name, other, AuditOptions::default())
            .unwrap_err()
            .to_string()
            .contains("another audit key")
    );
    // Cut the tail: verify_file names the first missing record.
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, kept).unwrap();
    let err = verify_file(&path, &key()).unwrap_err();
    assert_eq!((err.record, err.line), (6, 6), "{err}");
    assert!(err.reason.contains("truncated"), "{err}");
    // A server that starts after the cut says so in its open record.
    let third = AuditLog::open(name, key(), AuditOptions::default()).unwrap();
    third.close();
    let verified = verify_file(&path, &key()).unwrap();
    assert_eq!(verified.unclosed_before, [6]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dates_are_rfc_3339() {
    let now = now_rfc3339();
    assert_eq!(now.len(), 24, "{now}");
    assert!(now.starts_with("20") && now.ends_with('Z'));
    assert_eq!(&now[4..5], "-");
    assert_eq!(&now[10..11], "T");
    assert_eq!(&now[19..20], ".");
}
