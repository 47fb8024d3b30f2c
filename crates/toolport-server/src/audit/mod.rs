//! The audit stream: one JSON line per tool call, apart from the logs,
//! tamper-evident without trusting the file's owner:
//!
//! - every line carries its sequence number `seq` (consecutive across the
//!   file), the MAC of the line before it (`prev`) and its own `mac`, an
//!   HMAC-SHA256 under the audit key ([`AuditKey`]): an edited, removed or
//!   reordered line breaks the chain, and nobody without the key can
//!   rewrite the file and recompute it;
//! - each run of a server opens with an `open` line (the key's id, and how
//!   the run before it ended), and writes a signed `checkpoint` every
//!   [`AuditOptions::checkpoint_every`] records and a closing one when it
//!   shuts down: a file cut short ends without its closing checkpoint, and
//!   [`verify_file`] says so, naming the record where the cut begins.
//!
//! Records are written by a thread of their own, in the order calls end; a
//! call waits only if the writer has fallen far behind (bounded queue). One
//! process writes a file at a time (an exclusive `flock`).

mod key;
mod verify;
mod writer;

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::key::AuditKey;
pub use self::verify::{AuditBroken, Tail, Verified, verify, verify_file};
use self::writer::Chain;

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

/// How the audit stream is written.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// Argument fields whose values are never written (matched at any
    /// depth, ignoring case).
    pub redact: Vec<String>,
    /// A signed checkpoint after this many records (and one at shutdown).
    pub checkpoint_every: u64,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            redact: Vec::new(),
            checkpoint_every: 1000,
        }
    }
}

/// Where audit records go.
#[derive(Debug)]
pub struct AuditLog {
    queue: Arc<Queue>,
    redact: Vec<String>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
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
/// How often the writer looks for records when not woken.
const WRITE_INTERVAL: Duration = Duration::from_millis(5);

const REDACTED: &str = "[redacted]";

impl AuditLog {
    /// Appends to a file (created if needed), continuing its chain; `-`
    /// writes to standard output. Fails when another process writes the
    /// file, or when it was signed with another key.
    pub fn open(path: &str, key: AuditKey, options: AuditOptions) -> io::Result<AuditLog> {
        let chain = if path == "-" {
            Chain::start(Box::new(io::stdout()), key, options.checkpoint_every, None)?
        } else {
            Chain::append(Path::new(path), key, options.checkpoint_every)?
        };
        Ok(AuditLog::spawn(chain, options.redact))
    }

    /// Writes to any writer, starting a new chain.
    pub fn to_writer(out: Box<dyn Write + Send>, key: AuditKey, options: AuditOptions) -> AuditLog {
        let chain = Chain::start(out, key, options.checkpoint_every, None).expect("a new chain starts in memory");
        AuditLog::spawn(chain, options.redact)
    }

    fn spawn(chain: Chain, redact: Vec<String>) -> AuditLog {
        let queue = Arc::new(Queue::default());
        let writer = queue.clone();
        let thread = std::thread::Builder::new()
            .name("toolport-audit".into())
            .spawn(move || write_records(chain, &writer))
            .expect("spawn the audit writer");
        AuditLog {
            queue,
            redact: redact.into_iter().map(|f| f.to_ascii_lowercase()).collect(),
            writer: Mutex::new(Some(thread)),
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
        if state.closed {
            tracing::error!(tool = %record.tool, "an audit record came after the stream was closed; it is not written");
            return;
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

    /// Writes what is queued, then the closing checkpoint, and ends the
    /// stream; records that come later are refused (and logged). Called at
    /// shutdown; dropping the log does it too.
    pub fn close(&self) {
        self.sync();
        self.queue.state.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.queue.wake.notify_one();
        let thread = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.close();
    }
}

fn write_records(mut chain: Chain, queue: &Queue) {
    // Two record buffers swapped between the callers and this thread: no
    // allocation per batch.
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
            chain.call(record);
        }
        if !batch.is_empty() {
            chain.flush();
            let mut state = queue.state.lock().unwrap_or_else(|p| p.into_inner());
            state.flushed += batch.len() as u64;
            queue.written.notify_all();
        }
        if closed {
            chain.close();
            queue.written.notify_all();
            return;
        }
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
pub fn rfc3339(now: Duration) -> String {
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
mod tests;
