//! The audit stream: one JSON line per tool call, apart from the logs, each
//! carrying the hash of the one before it so that an edited, removed or
//! reordered record is found by [`verify`].
//!
//! Records are written by a thread of their own, in the order calls end; a
//! call waits only if the writer has fallen far behind (bounded queue).

use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// What the audit records of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When the call ended, RFC 3339 UTC with milliseconds.
    pub time: String,
    /// The authenticated caller, if any.
    pub principal: Option<String>,
    /// The handshake-era session, if any.
    pub session: Option<String>,
    /// The JSON-RPC id.
    pub request_id: Value,
    /// The tool.
    pub tool: String,
    /// The arguments, with the configured fields redacted.
    pub arguments: Value,
    /// `ok`, `tool_error`, `cancelled`, or `error <code>`.
    pub outcome: String,
    /// How long the call took.
    pub duration_ms: u64,
    /// The W3C trace id from `_meta.traceparent`, when the client sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// Where audit records go.
#[derive(Debug)]
pub struct AuditLog {
    tx: mpsc::SyncSender<Entry>,
    redact: Vec<String>,
}

#[derive(Debug)]
enum Entry {
    Record(Box<AuditRecord>),
    Sync(mpsc::SyncSender<()>),
}

const REDACTED: &str = "[redacted]";
/// The `prev` of the first record.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

impl AuditLog {
    /// Appends to a file (created if needed), continuing its hash chain;
    /// `-` writes to standard output. `redact` names argument fields whose
    /// values are never written (matched at any depth, ignoring case).
    pub fn open(path: &str, redact: Vec<String>) -> io::Result<AuditLog> {
        let (out, prev): (Box<dyn Write + Send>, String) = if path == "-" {
            (Box::new(io::stdout()), GENESIS.to_owned())
        } else {
            let prev = last_hash(Path::new(path))?.unwrap_or_else(|| GENESIS.to_owned());
            (Box::new(OpenOptions::new().create(true).append(true).open(path)?), prev)
        };
        Ok(AuditLog::from_writer(out, prev, redact))
    }

    /// Writes to any writer, starting a new chain.
    pub fn to_writer(out: Box<dyn Write + Send>, redact: Vec<String>) -> AuditLog {
        AuditLog::from_writer(out, GENESIS.to_owned(), redact)
    }

    fn from_writer(out: Box<dyn Write + Send>, prev: String, redact: Vec<String>) -> AuditLog {
        let (tx, rx) = mpsc::sync_channel(4096);
        std::thread::Builder::new()
            .name("toolport-audit".into())
            .spawn(move || write_records(BufWriter::new(out), prev, rx))
            .expect("spawn the audit writer");
        AuditLog {
            tx,
            redact: redact.into_iter().map(|f| f.to_ascii_lowercase()).collect(),
        }
    }

    /// Queues a record (its arguments redacted first).
    pub fn record(&self, mut record: AuditRecord) {
        redact(&mut record.arguments, &self.redact);
        if self.tx.send(Entry::Record(Box::new(record))).is_err() {
            tracing::error!("the audit writer has stopped; a record was lost");
        }
    }

    /// Waits until every record queued so far is written and flushed.
    pub fn sync(&self) {
        let (tx, rx) = mpsc::sync_channel(1);
        if self.tx.send(Entry::Sync(tx)).is_ok() {
            let _ = rx.recv();
        }
    }
}

fn write_records(mut out: BufWriter<Box<dyn Write + Send>>, mut prev: String, rx: mpsc::Receiver<Entry>) {
    let mut pending_flush = false;
    loop {
        let entry = if pending_flush {
            match rx.try_recv() {
                Ok(entry) => entry,
                Err(_) => {
                    let _ = out.flush();
                    pending_flush = false;
                    continue;
                }
            }
        } else {
            match rx.recv() {
                Ok(entry) => entry,
                Err(_) => break,
            }
        };
        match entry {
            Entry::Record(record) => {
                let line = chain(&record, &prev);
                prev = line.1;
                if let Err(e) = writeln!(out, "{}", line.0) {
                    tracing::error!(error = %e, "the audit record could not be written");
                }
                pending_flush = true;
            }
            Entry::Sync(done) => {
                let _ = out.flush();
                pending_flush = false;
                let _ = done.send(());
            }
        }
    }
    let _ = out.flush();
}

/// The line for a record and its hash: sha256 of the record with `prev`,
/// serialized with sorted keys (serde_json's map order), before `hash` is added.
fn chain(record: &AuditRecord, prev: &str) -> (String, String) {
    let mut map = match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    map.insert("prev".into(), Value::String(prev.to_owned()));
    let hash = hex(&Sha256::digest(serde_json::to_vec(&map).unwrap_or_default()));
    map.insert("hash".into(), Value::String(hash.clone()));
    (Value::Object(map).to_string(), hash)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn redact(value: &mut Value, fields: &[String]) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if fields.iter().any(|f| f.eq_ignore_ascii_case(key)) {
                    *v = Value::String(REDACTED.into());
                } else {
                    redact(v, fields);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, fields)),
        _ => {}
    }
}

fn last_hash(path: &Path) -> io::Result<Option<String>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut last = None;
    for line in BufReader::new(file).lines() {
        let line = line?;
        if !line.trim().is_empty() {
            last = Some(line);
        }
    }
    Ok(last
        .and_then(|l| serde_json::from_str::<Value>(&l).ok())
        .and_then(|v| v["hash"].as_str().map(str::to_owned)))
}

/// Why an audit file does not verify, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record {record} (line {line}): {reason}")]
pub struct AuditBroken {
    /// 1-based line number.
    pub line: usize,
    /// 1-based record number.
    pub record: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Checks an audit stream's hash chain; returns how many records it has.
pub fn verify(input: impl Read) -> Result<usize, AuditBroken> {
    let mut prev = GENESIS.to_owned();
    let mut records = 0;
    for (index, line) in BufReader::new(input).lines().enumerate() {
        let line_no = index + 1;
        let broken = |reason: String| AuditBroken {
            line: line_no,
            record: records + 1,
            reason,
        };
        let line = line.map_err(|e| broken(format!("unreadable: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let mut map: Map<String, Value> = serde_json::from_str(&line).map_err(|e| broken(format!("not JSON: {e}")))?;
        let hash = match map.remove("hash") {
            Some(Value::String(h)) => h,
            _ => return Err(broken("no hash".into())),
        };
        match map.get("prev").and_then(Value::as_str) {
            Some(p) if p == prev => {}
            Some(_) => {
                return Err(broken(
                    "its prev does not match the record before it (removed or reordered records)".into(),
                ));
            }
            None => return Err(broken("no prev".into())),
        }
        let actual = hex(&Sha256::digest(serde_json::to_vec(&map).unwrap_or_default()));
        if actual != hash {
            return Err(broken("its content does not match its hash (edited)".into()));
        }
        prev = hash;
        records += 1;
    }
    Ok(records)
}

/// Now, as RFC 3339 UTC with milliseconds.
pub(crate) fn now_rfc3339() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let (secs, millis) = (now.as_secs(), now.subsec_millis());
    let days = secs / 86_400;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
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

    fn written(records: &[AuditRecord]) -> String {
        let buffer = Shared::default();
        let log = AuditLog::to_writer(Box::new(buffer.clone()), vec!["password".into()]);
        for r in records {
            log.record(r.clone());
        }
        log.sync();
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_written_chain_verifies_and_secrets_are_redacted() {
        let text = written(&[
            record("a", json!({"user": "x", "Password": "hunter2"})),
            record("b", json!([{"password": 1}])),
        ]);
        assert_eq!(verify(text.as_bytes()), Ok(2));
        assert!(!text.contains("hunter2"));
        assert_eq!(text.matches(REDACTED).count(), 2);
    }

    #[test]
    fn edits_removals_and_reordering_are_found() {
        let text = written(&[record("a", json!({})), record("b", json!({})), record("c", json!({}))]);
        let lines: Vec<&str> = text.lines().collect();
        let edited = text.replacen("\"tool\":\"b\"", "\"tool\":\"x\"", 1);
        assert_eq!(verify(edited.as_bytes()).unwrap_err().record, 2);
        let removed = format!("{}\n{}\n", lines[0], lines[2]);
        assert_eq!(verify(removed.as_bytes()).unwrap_err().line, 2);
        let reordered = format!("{}\n{}\n{}\n", lines[1], lines[0], lines[2]);
        assert_eq!(verify(reordered.as_bytes()).unwrap_err().line, 1);
        assert!(verify("not json\n".as_bytes()).is_err());
    }

    #[test]
    fn dates_are_rfc_3339() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'));
    }
}
