//! The events of handshake-era SSE streams, for `Last-Event-ID` resumption.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use async_trait::async_trait;
use bytes::Bytes;

use super::StateError;

/// A new stream id: 64 random bits, never 0 (the standalone GET stream's).
/// Random rather than counted, so that two replicas writing to one shared
/// log never open the same stream, and a client cannot guess another's.
pub fn new_stream_id() -> u64 {
    loop {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the OS random source is available");
        let id = u64::from_le_bytes(bytes);
        if id != 0 {
            return id;
        }
    }
}

/// The events of each (session, stream), numbered from 1 by the log itself:
/// an SSE event id is `<stream>-<sequence>`, so with random stream ids (see
/// [`new_stream_id`]) and sequences handed out by the (shared) log, no two
/// replicas mint the same id. A log keeps a bounded number of events per
/// stream.
#[async_trait]
pub trait EventLog: Send + Sync + std::fmt::Debug + 'static {
    /// Records an event; returns its sequence number in the stream.
    async fn append(&self, session: &str, stream: u64, data: Bytes) -> Result<u64, StateError>;
    /// The events of a stream after `seq`, oldest first. `None` when the
    /// stream is unknown or events after `seq` were already dropped, so a
    /// resumption would lose messages.
    async fn after(&self, session: &str, stream: u64, seq: u64) -> Result<Option<Vec<(u64, Bytes)>>, StateError>;
    /// Forgets a session's events.
    async fn forget(&self, session: &str) -> Result<(), StateError>;
    /// Forgets one stream's events (a finished stream past its resumption window).
    async fn forget_stream(&self, session: &str, stream: u64) -> Result<(), StateError>;
}

/// Events in this process's memory, the newest `per_stream` of each stream.
#[derive(Debug)]
pub struct MemoryEventLog {
    per_stream: usize,
    streams: Mutex<HashMap<(String, u64), Log>>,
}

#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<(u64, Bytes)>,
}

impl MemoryEventLog {
    /// Keeps at most `per_stream` events per stream.
    pub fn new(per_stream: usize) -> Self {
        MemoryEventLog {
            per_stream: per_stream.max(1),
            streams: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Log>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl EventLog for MemoryEventLog {
    async fn append(&self, session: &str, stream: u64, data: Bytes) -> Result<u64, StateError> {
        let mut streams = self.lock();
        let log = streams.entry((session.to_owned(), stream)).or_default();
        log.next += 1;
        log.events.push_back((log.next, data));
        while log.events.len() > self.per_stream {
            log.events.pop_front();
        }
        Ok(log.next)
    }

    async fn after(&self, session: &str, stream: u64, seq: u64) -> Result<Option<Vec<(u64, Bytes)>>, StateError> {
        let streams = self.lock();
        let Some(log) = streams.get(&(session.to_owned(), stream)) else {
            return Ok(None);
        };
        if seq > log.next {
            return Ok(None);
        }
        let oldest = log.events.front().map_or(log.next + 1, |(s, _)| *s);
        if seq + 1 < oldest {
            return Ok(None);
        }
        Ok(Some(log.events.iter().filter(|(s, _)| *s > seq).cloned().collect()))
    }

    async fn forget(&self, session: &str) -> Result<(), StateError> {
        self.lock().retain(|(s, _), _| s != session);
        Ok(())
    }

    async fn forget_stream(&self, session: &str, stream: u64) -> Result<(), StateError> {
        self.lock().remove(&(session.to_owned(), stream));
        Ok(())
    }
}
