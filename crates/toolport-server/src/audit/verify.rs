//! Checking a stream: every line's sequence number, its link to the line
//! before it and its MAC under the key; each run opened and, unless a
//! server still writes the file, the last one closed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use hmac::Mac;
use serde_json::{Map, Value};

use super::key::{AuditKey, hex};
use super::writer::GENESIS;

/// Why an audit stream does not verify, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record {record} (line {line}): {reason}")]
pub struct AuditBroken {
    /// 1-based line number.
    pub line: usize,
    /// The sequence number of the record where the damage starts.
    pub record: u64,
    /// What is wrong.
    pub reason: String,
}

/// How a verified stream ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// With the closing checkpoint of its last run (or empty).
    Closed,
    /// Without one: its server still writes it, or the file was cut, or the
    /// server stopped without shutting down.
    Open {
        /// The last record's sequence number and line.
        last_record: u64,
        /// Its line.
        line: usize,
        /// The last checkpoint, if the run wrote one.
        last_checkpoint: Option<u64>,
    },
}

/// What a stream that verifies holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Tool-call records.
    pub calls: u64,
    /// Lines, records of every kind.
    pub lines: usize,
    /// Runs (servers that opened the file).
    pub runs: u64,
    /// Runs whose server did not close the one before it: where each such
    /// run opens (a crash, or a cut before that server started).
    pub unclosed_before: Vec<u64>,
    /// How the stream ends.
    pub tail: Tail,
}

/// Checks a stream's chain under `key`.
pub fn verify(input: impl Read, key: &AuditKey) -> Result<Verified, AuditBroken> {
    let key_id = key.id();
    let mut prev = GENESIS.to_owned();
    let mut verified = Verified {
        calls: 0,
        lines: 0,
        runs: 0,
        unclosed_before: Vec::new(),
        tail: Tail::Closed,
    };
    let mut seq = 0u64;
    let mut last_checkpoint = None;
    let mut closed = true;
    let mut last_line = 0;
    for (index, line) in BufReader::new(input).lines().enumerate() {
        let line_no = index + 1;
        let expected = seq + 1;
        let broken = |record: u64, reason: String| AuditBroken {
            line: line_no,
            record,
            reason,
        };
        let line = line.map_err(|e| broken(expected, format!("unreadable: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let mut map: Map<String, Value> = serde_json::from_str(&line)
            .map_err(|e| broken(expected, format!("not a whole record (cut short, or edited): {e}")))?;
        let mac = match map.remove("mac") {
            Some(Value::String(mac)) => mac,
            _ if map.contains_key("hash") => {
                return Err(broken(
                    expected,
                    "an unkeyed record of an earlier version: nothing here can be verified with a key".into(),
                ));
            }
            _ => return Err(broken(expected, "no mac".into())),
        };
        let found = map.get("seq").and_then(Value::as_u64);
        match found {
            Some(s) if s == expected => {}
            Some(s) if s > expected => {
                return Err(broken(
                    expected,
                    format!("record {expected} is missing here (this line holds record {s}): removed, or reordered"),
                ));
            }
            Some(s) => {
                return Err(broken(
                    expected,
                    format!("this line holds record {s} where record {expected} belongs: reordered or repeated"),
                ));
            }
            None => return Err(broken(expected, "no seq".into())),
        }
        if map.get("prev").and_then(Value::as_str) != Some(prev.as_str()) {
            return Err(broken(
                expected,
                "its prev does not match the record before it (records removed or reordered)".into(),
            ));
        }
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or("").to_owned();
        if let Some(id) = map.get("key_id").and_then(Value::as_str)
            && id != key_id
        {
            return Err(broken(
                expected,
                format!("signed with another key (key id {id}; the key given has id {key_id})"),
            ));
        }
        let mut computed = key.mac();
        computed.update(&serde_json::to_vec(&map).unwrap_or_default());
        if hex(&computed.finalize().into_bytes()) != mac {
            return Err(broken(
                expected,
                "its MAC does not match: edited, or the chain was recomputed without the key".into(),
            ));
        }
        match kind.as_str() {
            "open" => {
                if map.get("previous_run").and_then(Value::as_str) == Some("unclosed") || !closed {
                    verified.unclosed_before.push(expected);
                }
                verified.runs += 1;
                closed = false;
                last_checkpoint = None;
            }
            _ if verified.runs == 0 || closed => {
                return Err(broken(
                    expected,
                    "a record outside any run (no open record before it)".into(),
                ));
            }
            "call" => verified.calls += 1,
            "checkpoint" => {
                last_checkpoint = Some(expected);
                closed = map.get("closing").and_then(Value::as_bool) == Some(true);
            }
            other => return Err(broken(expected, format!("unknown kind {other:?}"))),
        }
        prev = mac;
        seq = expected;
        last_line = line_no;
        verified.lines += 1;
    }
    if !closed {
        verified.tail = Tail::Open {
            last_record: seq,
            line: last_line,
            last_checkpoint,
        };
    }
    Ok(verified)
}

/// Checks an audit file. A file that ends without the closing checkpoint
/// of its last run is reported as cut there, unless a server holds it open
/// (then its last records are simply not sealed yet).
pub fn verify_file(path: &Path, key: &AuditKey) -> Result<Verified, AuditBroken> {
    let unreadable = |e: std::io::Error| AuditBroken {
        line: 0,
        record: 0,
        reason: format!("cannot read {}: {e}", path.display()),
    };
    let file = File::open(path).map_err(unreadable)?;
    // A writer holds an exclusive lock while it runs.
    let written_now = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared).is_err();
    let verified = verify(file, key)?;
    if let Tail::Open {
        last_record,
        line,
        last_checkpoint,
    } = &verified.tail
        && !written_now
    {
        let sealed = match last_checkpoint {
            Some(c) => format!("its last checkpoint is record {c}"),
            None => "its run wrote no checkpoint".to_owned(),
        };
        return Err(AuditBroken {
            line: line + 1,
            record: last_record + 1,
            reason: format!(
                "truncated: the stream ends after record {last_record} without the closing checkpoint of its run ({sealed}); records from {} on were cut, or the server stopped without shutting down",
                last_record + 1
            ),
        });
    }
    Ok(verified)
}
