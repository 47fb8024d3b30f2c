//! Writing the chain: each line sealed with its sequence number, the MAC of
//! the line before it and its own MAC; an `open` line per run, checkpoints
//! every N records and at the close.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use hmac::Mac;
use serde::Serialize;
use serde_json::Value;

use super::key::{AuditKey, hex};
use super::{AuditRecord, now_rfc3339};

/// The `prev` of the first line of a file.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// The writer's buffer: a batch of records goes out in a few large writes.
const WRITE_BUFFER: usize = 64 * 1024;
/// How far from the end a file's last line is looked for first.
const TAIL_WINDOW: u64 = 1 << 20;

/// A call record as it is signed: its fields, `kind`, `prev` and `seq`, in
/// alphabetical order, which is how [`super::verify`] re-serializes a line
/// (serde_json's maps are sorted), so no intermediate `Value` is needed.
#[derive(Serialize)]
struct CallLine<'a> {
    arguments: &'a Value,
    duration_ms: u64,
    kind: &'static str,
    outcome: &'a str,
    prev: &'a str,
    principal: &'a Option<String>,
    request_id: &'a Value,
    seq: u64,
    session: &'a Option<String>,
    time: &'a str,
    tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: &'a Option<String>,
}

/// The first line of a run: which key signs it, and how the run before it
/// ended (`none`: a new file; `closed`; `unclosed`: the file ended without
/// a closing checkpoint — a crash, or a cut).
#[derive(Serialize)]
struct OpenLine<'a> {
    key_id: &'a str,
    kind: &'static str,
    prev: &'a str,
    previous_run: &'a str,
    seq: u64,
    time: String,
}

/// A checkpoint: the chain so far, signed; `closing` at a clean shutdown.
#[derive(Serialize)]
struct CheckpointLine<'a> {
    closing: bool,
    key_id: &'a str,
    kind: &'static str,
    prev: &'a str,
    records: u64,
    seq: u64,
    time: String,
}

/// What the last line of an existing file says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LastLine {
    seq: u64,
    mac: String,
    closing: bool,
}

/// One file's chain, written line by line.
pub(crate) struct Chain {
    out: BufWriter<Box<dyn Write + Send>>,
    key: AuditKey,
    key_id: String,
    /// The last line's sequence number and MAC.
    seq: u64,
    prev: String,
    checkpoint_every: u64,
    since_checkpoint: u64,
    /// Call records written in this run.
    records: u64,
    line: Vec<u8>,
}

impl Chain {
    /// Starts a run on `out`, after `last` (the file's last line, if any).
    pub(crate) fn start(
        out: Box<dyn Write + Send>,
        key: AuditKey,
        checkpoint_every: u64,
        last: Option<LastLine>,
    ) -> io::Result<Chain> {
        let previous_run = match &last {
            None => "none",
            Some(l) if l.closing => "closed",
            Some(_) => "unclosed",
        };
        let (seq, prev) = last.map_or((0, GENESIS.to_owned()), |l| (l.seq, l.mac));
        let mut chain = Chain {
            out: BufWriter::with_capacity(WRITE_BUFFER, out),
            key_id: key.id(),
            key,
            seq,
            prev,
            checkpoint_every: checkpoint_every.max(1),
            since_checkpoint: 0,
            records: 0,
            line: Vec::with_capacity(1024),
        };
        let key_id = chain.key_id.clone();
        chain.seal(|out, prev, seq| {
            serde_json::to_writer(
                out,
                &OpenLine {
                    key_id: &key_id,
                    kind: "open",
                    prev,
                    previous_run,
                    seq,
                    time: now_rfc3339(),
                },
            )
        });
        chain.flush();
        Ok(chain)
    }

    /// Appends a run to the file at `path` (created if needed), holding an
    /// exclusive lock on it while the chain lives.
    pub(crate) fn append(path: &Path, key: AuditKey, checkpoint_every: u64) -> io::Result<Chain> {
        let mut file = OpenOptions::new().create(true).append(true).read(true).open(path)?;
        if let Err(e) = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!(
                    "another process writes the audit file {} ({e}); give each server its own [audit] path",
                    path.display()
                ),
            ));
        }
        let (last, ends_with_newline) = last_line(&mut file, path)?;
        if let Some(last) = &last
            && let Some(id) = &last.1
            && *id != key.id()
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is signed with another audit key (id {id}; this key is {}): move the file aside with its key to start a new one (key rotation, docs/operations.md)",
                    path.display(),
                    key.id()
                ),
            ));
        }
        if !ends_with_newline {
            // A line cut short (a crash mid-write) stays, as evidence; the
            // new run starts on a line of its own.
            file.write_all(b"\n")?;
        }
        Chain::start(Box::new(file), key, checkpoint_every, last.map(|(l, _)| l))
    }

    /// Writes one line: `body` with `prev` and `seq`, then its MAC.
    fn seal(&mut self, body: impl FnOnce(&mut Vec<u8>, &str, u64) -> serde_json::Result<()>) {
        let seq = self.seq + 1;
        let prev = std::mem::take(&mut self.prev);
        self.line.clear();
        if body(&mut self.line, &prev, seq).is_err() {
            self.line.clear();
            self.line.extend_from_slice(b"{}");
        }
        let mut mac = self.key.mac();
        mac.update(&self.line);
        let mac = hex(&mac.finalize().into_bytes());
        // The line ends with `}`: the MAC is its last member.
        self.line.pop();
        self.line.extend_from_slice(b",\"mac\":\"");
        self.line.extend_from_slice(mac.as_bytes());
        self.line.extend_from_slice(b"\"}\n");
        if let Err(e) = self.out.write_all(&self.line) {
            tracing::error!(error = %e, "an audit record could not be written");
        }
        self.seq = seq;
        self.prev = mac;
    }

    /// Writes a call's record, and a checkpoint when one is due.
    pub(crate) fn call(&mut self, record: &AuditRecord) {
        self.seal(|out, prev, seq| {
            serde_json::to_writer(
                out,
                &CallLine {
                    arguments: &record.arguments,
                    duration_ms: record.duration_ms,
                    kind: "call",
                    outcome: &record.outcome,
                    prev,
                    principal: &record.principal,
                    request_id: &record.request_id,
                    seq,
                    session: &record.session,
                    time: &record.time,
                    tool: &record.tool,
                    trace_id: &record.trace_id,
                },
            )
        });
        self.records += 1;
        self.since_checkpoint += 1;
        if self.since_checkpoint >= self.checkpoint_every {
            self.checkpoint(false);
        }
    }

    fn checkpoint(&mut self, closing: bool) {
        let (key_id, records) = (self.key_id.clone(), self.records);
        self.seal(|out, prev, seq| {
            serde_json::to_writer(
                out,
                &CheckpointLine {
                    closing,
                    key_id: &key_id,
                    kind: "checkpoint",
                    prev,
                    records,
                    seq,
                    time: now_rfc3339(),
                },
            )
        });
        self.since_checkpoint = 0;
        // Outside the file too: a log shipper then holds an anchor that a
        // cut of the whole tail cannot take away.
        tracing::info!(seq = self.seq, mac = %self.prev, closing, "audit checkpoint");
    }

    pub(crate) fn flush(&mut self) {
        if let Err(e) = self.out.flush() {
            tracing::error!(error = %e, "the audit stream could not be flushed");
        }
    }

    /// The closing checkpoint, flushed.
    pub(crate) fn close(&mut self) {
        self.checkpoint(true);
        self.flush();
    }
}

/// The file's last line (its seq, MAC, whether it closed a run, and the
/// key id it names, if any) and whether the file ends with a newline.
#[allow(clippy::type_complexity)]
fn last_line(file: &mut File, path: &Path) -> io::Result<(Option<(LastLine, Option<String>)>, bool)> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((None, true));
    }
    let mut start = len.saturating_sub(TAIL_WINDOW);
    let text = loop {
        file.seek(SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        // The window must hold the whole last line: a newline before it,
        // or the start of the file.
        if start == 0 || body.contains(&b'\n') {
            break bytes;
        }
        start = start.saturating_sub(TAIL_WINDOW * 8);
    };
    let ends_with_newline = text.ends_with(b"\n");
    let whole = |line: &[u8]| serde_json::from_slice::<serde_json::Map<String, Value>>(line).ok();
    // The last whole line: a cut-short one (no newline) is skipped over.
    let mut lines = text.split(|b| *b == b'\n').filter(|l| !l.trim_ascii().is_empty()).rev();
    let last = lines.find_map(whole);
    let Some(last) = last else {
        return Ok((None, ends_with_newline));
    };
    let unkeyed = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is not a keyed audit stream (written by an earlier version, or not an audit file): move it aside to start a new one",
                path.display()
            ),
        )
    };
    let seq = last.get("seq").and_then(Value::as_u64).ok_or_else(unkeyed)?;
    let mac = last.get("mac").and_then(Value::as_str).ok_or_else(unkeyed)?.to_owned();
    let closing = last.get("closing").and_then(Value::as_bool) == Some(true);
    let key_id = last.get("key_id").and_then(Value::as_str).map(str::to_owned);
    Ok((Some((LastLine { seq, mac, closing }, key_id)), ends_with_newline))
}
