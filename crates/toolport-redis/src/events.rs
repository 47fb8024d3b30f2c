//! SSE event logs: per (session, stream) a list of the newest events and a
//! counter that numbers them (so replicas appending to one stream never hand
//! out one number twice), and per session the set of its streams. Every key
//! expires with the record time to live from its last append.

use std::sync::LazyLock;

use async_trait::async_trait;
use bytes::Bytes;
use redis::Script;
use toolport_server::state::{EventLog, StateError};

use crate::conn::{Connection, millis};

/// KEYS: list, counter, streams. ARGV: data, per stream, ttl ms, stream.
static APPEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local seq = redis.call('INCR', KEYS[2])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return seq",
    )
});

/// KEYS: list, counter. ARGV: after. The events after `after`, or nil when
/// the stream is unknown or some of them are gone.
static AFTER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local newest = redis.call('GET', KEYS[2])
if not newest then return false end
newest = tonumber(newest)
local after = tonumber(ARGV[1])
if after > newest then return false end
local oldest = newest - redis.call('LLEN', KEYS[1]) + 1
if after + 1 < oldest then return false end
return redis.call('LRANGE', KEYS[1], after + 1 - oldest, -1)",
    )
});

/// KEYS: streams. ARGV: list key prefix, counter key prefix, session.
static FORGET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "for _, stream in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('DEL', ARGV[1] .. stream .. ':' .. ARGV[3], ARGV[2] .. stream .. ':' .. ARGV[3])
end
redis.call('DEL', KEYS[1])
return 1",
    )
});

/// KEYS: list, counter, streams. ARGV: stream.
static FORGET_STREAM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return 1",
    )
});

#[derive(Debug)]
pub(crate) struct RedisEventLog {
    conn: Connection,
    per_stream: usize,
}

impl RedisEventLog {
    pub(crate) fn new(conn: Connection, per_stream: usize) -> Self {
        RedisEventLog {
            conn,
            per_stream: per_stream.max(1),
        }
    }

    /// The list, the counter and the session's set of streams. The stream
    /// (digits) comes first, so no session id names another's keys.
    fn keys(&self, session: &str, stream: u64) -> (String, String, String) {
        let stream = stream.to_string();
        (
            self.conn.key(&["ev", &stream, session]),
            self.conn.key(&["evseq", &stream, session]),
            self.conn.key(&["evs", session]),
        )
    }
}

#[async_trait]
impl EventLog for RedisEventLog {
    async fn append(&self, session: &str, stream: u64, data: Bytes) -> Result<u64, StateError> {
        let (list, counter, streams) = self.keys(session, stream);
        let per_stream = self.per_stream.to_string();
        let ttl = millis(self.conn.options.record_ttl);
        let stream = stream.to_string();
        self.conn
            .script(
                &APPEND,
                &[&list, &counter, &streams],
                &[&data, per_stream.as_bytes(), ttl.as_bytes(), stream.as_bytes()],
            )
            .await
    }

    async fn after(&self, session: &str, stream: u64, seq: u64) -> Result<Option<Vec<(u64, Bytes)>>, StateError> {
        let (list, counter, _) = self.keys(session, stream);
        let after = seq.to_string();
        let events: Option<Vec<Vec<u8>>> = self
            .conn
            .script(&AFTER, &[&list, &counter], &[after.as_bytes()])
            .await?;
        Ok(events.map(|events| {
            events
                .into_iter()
                .zip(seq + 1..)
                .map(|(data, seq)| (seq, Bytes::from(data)))
                .collect()
        }))
    }

    async fn forget(&self, session: &str) -> Result<(), StateError> {
        let (_, _, streams) = self.keys(session, 0);
        let (lists, counters) = (self.conn.key(&["ev", ""]), self.conn.key(&["evseq", ""]));
        let _: i64 = self
            .conn
            .script(
                &FORGET,
                &[&streams],
                &[lists.as_bytes(), counters.as_bytes(), session.as_bytes()],
            )
            .await?;
        Ok(())
    }

    async fn forget_stream(&self, session: &str, stream: u64) -> Result<(), StateError> {
        let (list, counter, streams) = self.keys(session, stream);
        let stream = stream.to_string();
        let _: i64 = self
            .conn
            .script(&FORGET_STREAM, &[&list, &counter, &streams], &[stream.as_bytes()])
            .await?;
        Ok(())
    }
}
