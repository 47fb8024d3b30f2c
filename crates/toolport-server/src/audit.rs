//! The audit stream: one JSON line per tool call, apart from the logs, each
//! carrying the hash of the one before it so that an edited, removed or
//! reordered record is found by [`verify`].
//!
//! Records are written by a thread of their own, in the order calls end; a
//! call waits only if the writer has fallen far behind (bounded queue).

use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    queue: Arc<Queue>,
    redact: Vec<String>,
}

/// Records waiting for the writer. The writer wakes on a short timer rather
/// than on every record: at thousands of calls per second, waking a thread
/// per record costs more than writing it.
#[derive(Debug, Default)]
struct Queue {
    state: Mutex<Pending>,
    /// Wakes the writer early (a full queue, a sync, shutdown).
    wake: Condvar,
    /// Wakes callers waiting for room or for a sync.
    written: Condvar,
}

#[derive(Debug, Default)]
struct Pending {
    records: Vec<AuditRecord>,
    /// Records accepted so far, and records written and flushed so far.
    accepted: u64,
    flushed: u64,
    closed: bool,
}

/// Most records waiting at once; a caller beyond it waits for the writer.
const QUEUE_LIMIT: usize = 8192;
/// The writer's buffer: a batch of records goes out in a few large writes.
const WRITE_BUFFER: usize = 64 * 1024;
/// How often the writer looks for records when not woken.
const WRITE_INTERVAL: Duration = Duration::from_millis(5);

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
        let queue = Arc::new(Queue::default());
        let writer = queue.clone();
        std::thread::Builder::new()
            .name("toolport-audit".into())
            .spawn(move || write_records(BufWriter::with_capacity(WRITE_BUFFER, out), prev, &writer))
            .expect("spawn the audit writer");
        AuditLog {
            queue,
            redact: redact.into_iter().map(|f| f.to_ascii_lowercase()).collect(),
        }
    }

    /// Queues a record (its arguments redacted first).
    pub fn record(&self, mut record: AuditRecord) {
        redact(&mut record.arguments, &self.redact);
        let mut state = self.queue.state.lock().unwrap_or_else(|p| p.into_inner());
        while state.records.len() >= QUEUE_LIMIT && !state.closed {
            self.queue.wake.notify_one();
            state = self.queue.written.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.records.push(record);
        state.accepted += 1;
    }

    /// Waits until every record queued so far is written and flushed.
    pub fn sync(&self) {
        let mut state = self.queue.state.lock().unwrap_or_else(|p| p.into_inner());
        let target = state.accepted;
        self.queue.wake.notify_one();
        while state.flushed < target && !state.closed {
            state = self.queue.written.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        // Write what is queued, then let the writer end.
        self.sync();
        self.queue.state.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.queue.wake.notify_one();
    }
}

fn write_records(mut out: BufWriter<Box<dyn Write + Send>>, mut prev: String, queue: &Queue) {
    // One line buffer for every record, and two record buffers swapped
    // between the callers and this thread: no allocation per record or batch.
    let mut line = Vec::with_capacity(1024);
    let mut batch = Vec::new();
    loop {
        batch.clear();
        let closed = {
            let state = queue.state.lock().unwrap_or_else(|p| p.into_inner());
            let (mut state, _) = queue
                .wake
                .wait_timeout_while(state, WRITE_INTERVAL, |s| s.records.is_empty() && !s.closed)
                .unwrap_or_else(|p| p.into_inner());
            std::mem::swap(&mut state.records, &mut batch);
            state.closed
        };
        for record in &batch {
            line.clear();
            chain_into(&mut line, record, &mut prev);
            if let Err(e) = out.write_all(&line) {
                tracing::error!(error = %e, "an audit record could not be written");
            }
        }
        if !batch.is_empty() {
            if let Err(e) = out.flush() {
                tracing::error!(error = %e, "the audit stream could not be flushed");
            }
            let mut state = queue.state.lock().unwrap_or_else(|p| p.into_inner());
            state.flushed += batch.len() as u64;
            queue.written.notify_all();
        }
        if closed {
            return;
        }
    }
}

/// The record as it is hashed: its fields and `prev`, in alphabetical
/// order, which is exactly how [`verify`] re-serializes a line (serde_json's
/// maps are sorted), so no intermediate `Value` is needed here.
#[derive(Serialize)]
struct Chained<'a> {
    arguments: &'a Value,
    duration_ms: u64,
    outcome: &'a str,
    prev: &'a str,
    principal: &'a Option<String>,
    request_id: &'a Value,
    session: &'a Option<String>,
    time: &'a str,
    tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: &'a Option<String>,
}

/// Appends the line for a record (with its newline) to `line`: the record
/// with `prev`, then `hash`, its sha256; `prev` becomes that hash.
fn chain_into(line: &mut Vec<u8>, record: &AuditRecord, prev: &mut String) {
    let chained = Chained {
        arguments: &record.arguments,
        duration_ms: record.duration_ms,
        outcome: &record.outcome,
        prev,
        principal: &record.principal,
        request_id: &record.request_id,
        session: &record.session,
        time: &record.time,
        tool: &record.tool,
        trace_id: &record.trace_id,
    };
    let start = line.len();
    if serde_json::to_writer(&mut *line, &chained).is_err() {
        line.truncate(start);
        line.extend_from_slice(b"{}");
    }
    let digest = Sha256::digest(&line[start..]);
    prev.clear();
    hex_into(prev, &digest);
    // The line ends with `}`: add the hash as the last member.
    line.pop();
    line.extend_from_slice(b",\"hash\":\"");
    line.extend_from_slice(prev.as_bytes());
    line.extend_from_slice(b"\"}\n");
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    hex_into(&mut out, bytes);
    out
}

fn hex_into(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
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

/// A request id as the audit stream writes it.
pub(crate) fn audit_id(id: &toolport_protocol::jsonrpc::RequestId) -> Value {
    match id {
        toolport_protocol::jsonrpc::RequestId::Number(n) => Value::from(*n),
        toolport_protocol::jsonrpc::RequestId::String(s) => Value::String(s.clone()),
    }
}

/// The trace id of a W3C `traceparent` in `_meta` (`00-<trace id>-<span id>-<flags>`).
pub(crate) fn trace_id(meta: &toolport_protocol::meta::Meta) -> Option<String> {
    let parent = meta.get(toolport_protocol::meta::keys::TRACEPARENT)?.as_str()?;
    let mut parts = parent.split('-');
    let (_version, trace) = (parts.next()?, parts.next()?);
    (trace.len() == 32 && trace.bytes().all(|b| b.is_ascii_hexdigit()) && trace != "0".repeat(32))
        .then(|| trace.to_owned())
}

/// Now, as RFC 3339 UTC with milliseconds.
pub(crate) fn now_rfc3339() -> String {
    rfc3339(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default())
}

/// A time since the Unix epoch as RFC 3339 UTC with milliseconds.
pub(crate) fn rfc3339(now: Duration) -> String {
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
    // Written digit by digit: this runs for every audited call.
    let mut out = String::with_capacity(24);
    let mut digits = |value: u64, width: u32, then: char| {
        for power in (0..width).rev() {
            out.push(char::from(b'0' + (value / 10u64.pow(power) % 10) as u8));
        }
        if then != '\0' {
            out.push(then);
        }
    };
    digits(year.clamp(0, 9999) as u64, 4, '-');
    digits(month as u64, 2, '-');
    digits(day as u64, 2, 'T');
    digits(h, 2, ':');
    digits(m, 2, ':');
    digits(s, 2, '.');
    digits(u64::from(millis), 3, 'Z');
    out
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
        assert_eq!(&now[4..5], "-");
        assert_eq!(&now[10..11], "T");
        assert_eq!(&now[19..20], ".");
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
    }
}
