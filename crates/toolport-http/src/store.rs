//! Where handshake-era session and event state lives, behind small traits.
//!
//! The in-memory implementations are the embedded default; the traits are
//! small and their data serializable so that a shared store (Redis) can stand
//! in when several replicas serve one endpoint.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use toolport_server::Negotiated;

/// What a session is, apart from the live connections it has on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// What `initialize` settled.
    pub negotiated: Negotiated,
    /// The principal that created the session, if authenticated.
    pub principal: Option<String>,
}

/// Sessions by id.
pub trait SessionStore: Send + Sync + std::fmt::Debug + 'static {
    /// Stores a new session.
    fn insert(&self, id: &str, record: SessionRecord);
    /// The session, if it exists and has not expired; marks it used.
    fn touch(&self, id: &str) -> Option<SessionRecord>;
    /// Ends a session; `false` if there was none.
    fn remove(&self, id: &str) -> bool;
    /// Removes and returns the sessions unused for longer than `idle`.
    fn reap(&self, idle: Duration) -> Vec<String>;
    /// How many sessions exist.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Sessions in this process's memory.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    sessions: Mutex<HashMap<String, (SessionRecord, Instant)>>,
}

impl MemorySessionStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (SessionRecord, Instant)>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SessionStore for MemorySessionStore {
    fn insert(&self, id: &str, record: SessionRecord) {
        self.lock().insert(id.to_owned(), (record, Instant::now()));
    }

    fn touch(&self, id: &str) -> Option<SessionRecord> {
        let mut sessions = self.lock();
        let (record, seen) = sessions.get_mut(id)?;
        *seen = Instant::now();
        Some(record.clone())
    }

    fn remove(&self, id: &str) -> bool {
        self.lock().remove(id).is_some()
    }

    fn reap(&self, idle: Duration) -> Vec<String> {
        let mut sessions = self.lock();
        let expired: Vec<String> = sessions
            .iter()
            .filter(|(_, (_, seen))| seen.elapsed() > idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            sessions.remove(id);
        }
        expired
    }

    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Events of handshake-era SSE streams, for `Last-Event-ID` resumption.
/// Sequence numbers count from 1 per stream.
pub trait EventStore: Send + Sync + std::fmt::Debug + 'static {
    /// Records an event; returns its sequence number in the stream.
    fn append(&self, session: &str, stream: u64, data: Bytes) -> u64;
    /// The events of a stream after `seq`, oldest first. `None` when the
    /// stream is unknown or events after `seq` were already dropped, so a
    /// resumption would lose messages.
    fn after(&self, session: &str, stream: u64, seq: u64) -> Option<Vec<(u64, Bytes)>>;
    /// Forgets a session's events.
    fn forget(&self, session: &str);
    /// Forgets one stream's events (a finished stream past its resumption window).
    fn forget_stream(&self, session: &str, stream: u64);
}

/// Events in this process's memory, the newest `per_stream` of each stream.
#[derive(Debug)]
pub struct MemoryEventStore {
    per_stream: usize,
    streams: Mutex<HashMap<(String, u64), Log>>,
}

#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<(u64, Bytes)>,
}

impl MemoryEventStore {
    /// Keeps at most `per_stream` events per stream.
    pub fn new(per_stream: usize) -> Self {
        MemoryEventStore {
            per_stream: per_stream.max(1),
            streams: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Log>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: u64, data: Bytes) -> u64 {
        let mut streams = self.lock();
        let log = streams.entry((session.to_owned(), stream)).or_default();
        log.next += 1;
        log.events.push_back((log.next, data));
        while log.events.len() > self.per_stream {
            log.events.pop_front();
        }
        log.next
    }

    fn after(&self, session: &str, stream: u64, seq: u64) -> Option<Vec<(u64, Bytes)>> {
        let streams = self.lock();
        let log = streams.get(&(session.to_owned(), stream))?;
        if seq > log.next {
            return None;
        }
        let oldest = log.events.front().map_or(log.next + 1, |(s, _)| *s);
        if seq + 1 < oldest {
            return None;
        }
        Some(log.events.iter().filter(|(s, _)| *s > seq).cloned().collect())
    }

    fn forget(&self, session: &str) {
        self.lock().retain(|(s, _), _| s != session);
    }

    fn forget_stream(&self, session: &str, stream: u64) {
        self.lock().remove(&(session.to_owned(), stream));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_replay_after_an_id_and_refuse_gaps() {
        let store = MemoryEventStore::new(3);
        for i in 1..=5u8 {
            assert_eq!(store.append("s", 1, Bytes::from(vec![i])), u64::from(i));
        }
        // Events 3, 4, 5 are kept.
        assert_eq!(
            store
                .after("s", 1, 3)
                .unwrap()
                .iter()
                .map(|(s, _)| *s)
                .collect::<Vec<_>>(),
            [4, 5]
        );
        assert_eq!(store.after("s", 1, 2).unwrap().len(), 3);
        assert_eq!(store.after("s", 1, 1), None, "event 2 is gone: resuming would lose it");
        assert_eq!(store.after("s", 1, 9), None);
        assert_eq!(store.after("s", 2, 0), None);
        assert_eq!(store.after("other", 1, 3), None);
        store.forget("s");
        assert_eq!(store.after("s", 1, 3), None);
    }
}
