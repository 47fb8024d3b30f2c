//! Sessions: a hash per session (`r`: negotiated version, capabilities,
//! client and principal; `l`: the log level), a set of its subscriptions,
//! and one sorted set of when each session was last used (Redis's clock), which
//! the idle reaper reads.

use std::sync::LazyLock;
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use serde::{Deserialize, Serialize};
use toolport_protocol::logging::LoggingLevel;
use toolport_server::state::{Negotiated, SessionRecord, SessionSettings, SessionStore, SettingsChange, StateError};

use crate::conn::{Connection, NOW_MS, millis};

/// Sessions reaped per call at most, so one call never blocks Redis long;
/// the reaper runs again soon.
const REAP_BATCH: usize = 1000;

/// KEYS: record, subscriptions, index. ARGV: id, record, level or "", ttl ms, subscriptions...
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW_MS}
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'r', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'l', ARGV[3]) end
for i = 5, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], now, ARGV[1])
return 1"
    ))
});

/// KEYS: record, subscriptions, index. ARGV: id, ttl ms. Marks the session used.
static GET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW_MS}
local r = redis.call('HMGET', KEYS[1], 'r', 'l')
if not r[1] then return false end
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return {{r[1], r[2] or '', redis.call('SMEMBERS', KEYS[2])}}"
    ))
});

/// KEYS: record, subscriptions. ARGV: what (level, sub, unsub), value, ttl ms.
static APPLY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'level' then redis.call('HSET', KEYS[1], 'l', ARGV[2])
elseif ARGV[1] == 'sub' then redis.call('SADD', KEYS[2], ARGV[2]); redis.call('PEXPIRE', KEYS[2], ARGV[3])
else redis.call('SREM', KEYS[2], ARGV[2]) end
return 1",
    )
});

/// KEYS: record, subscriptions, index. ARGV: id.
static REMOVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local n = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return n",
    )
});

/// KEYS: index. ARGV: idle ms, record key prefix, subscriptions key prefix, batch.
static REAP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW_MS}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[2] .. id, ARGV[3] .. id)
  redis.call('ZREM', KEYS[1], id)
end
return ids"
    ))
});

/// What `r` holds: the record without its settings.
#[derive(Serialize, Deserialize)]
struct Stored {
    negotiated: Negotiated,
    principal: Option<String>,
}

#[derive(Debug)]
pub(crate) struct RedisSessionStore {
    conn: Connection,
    index: String,
}

impl RedisSessionStore {
    pub(crate) fn new(conn: Connection) -> Self {
        RedisSessionStore {
            index: conn.key(&["sessions"]),
            conn,
        }
    }

    /// The record's key and the subscriptions' key. Different words, so no
    /// session id (which a client may make up) names another's key.
    fn keys(&self, id: &str) -> (String, String) {
        (self.conn.key(&["session", id]), self.conn.key(&["subs", id]))
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StateError {
    StateError::Corrupt(format!("{what}: {e}"))
}

fn level_text(level: LoggingLevel) -> String {
    serde_json::to_string(&level).unwrap_or_default()
}

#[async_trait]
impl SessionStore for RedisSessionStore {
    async fn create(&self, id: &str, record: SessionRecord) -> Result<(), StateError> {
        let (rec, subs) = self.keys(id);
        let stored = serde_json::to_vec(&Stored {
            negotiated: record.negotiated,
            principal: record.principal,
        })
        .map_err(|e| corrupt("a session record", e))?;
        let level = record.settings.log_level.map(level_text).unwrap_or_default();
        let ttl = millis(self.conn.options.record_ttl);
        let mut args: Vec<&[u8]> = vec![id.as_bytes(), &stored, level.as_bytes(), ttl.as_bytes()];
        args.extend(record.settings.subscriptions.iter().map(|s| s.as_bytes()));
        let _: i64 = self.conn.script(&CREATE, &[&rec, &subs, &self.index], &args).await?;
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StateError> {
        let (rec, subs) = self.keys(id);
        let ttl = millis(self.conn.options.record_ttl);
        let found: Option<(Vec<u8>, String, Vec<String>)> = self
            .conn
            .script(&GET, &[&rec, &subs, &self.index], &[id.as_bytes(), ttl.as_bytes()])
            .await?;
        let Some((stored, level, subscriptions)) = found else {
            return Ok(None);
        };
        let stored: Stored = serde_json::from_slice(&stored).map_err(|e| corrupt("a session record", e))?;
        let log_level = if level.is_empty() {
            None
        } else {
            Some(serde_json::from_str(&level).map_err(|e| corrupt("a session's log level", e))?)
        };
        Ok(Some(SessionRecord {
            negotiated: stored.negotiated,
            principal: stored.principal,
            settings: SessionSettings {
                log_level,
                subscriptions: subscriptions.into_iter().collect(),
            },
        }))
    }

    async fn apply(&self, id: &str, change: &SettingsChange) -> Result<bool, StateError> {
        let (rec, subs) = self.keys(id);
        let (what, value) = match change {
            SettingsChange::LogLevel(level) => ("level", level_text(*level)),
            SettingsChange::Subscribed(uri) => ("sub", uri.clone()),
            SettingsChange::Unsubscribed(uri) => ("unsub", uri.clone()),
        };
        let ttl = millis(self.conn.options.record_ttl);
        let applied: i64 = self
            .conn
            .script(
                &APPLY,
                &[&rec, &subs],
                &[what.as_bytes(), value.as_bytes(), ttl.as_bytes()],
            )
            .await?;
        Ok(applied == 1)
    }

    async fn remove(&self, id: &str) -> Result<bool, StateError> {
        let (rec, subs) = self.keys(id);
        let removed: i64 = self
            .conn
            .script(&REMOVE, &[&rec, &subs, &self.index], &[id.as_bytes()])
            .await?;
        Ok(removed > 0)
    }

    async fn reap(&self, idle: Duration) -> Result<Vec<String>, StateError> {
        let idle = idle.as_millis().to_string();
        let (rec, subs) = (self.conn.key(&["session", ""]), self.conn.key(&["subs", ""]));
        let batch = REAP_BATCH.to_string();
        self.conn
            .script(
                &REAP,
                &[&self.index],
                &[idle.as_bytes(), rec.as_bytes(), subs.as_bytes(), batch.as_bytes()],
            )
            .await
    }

    async fn count(&self) -> Result<usize, StateError> {
        let mut zcard = redis::cmd("ZCARD");
        zcard.arg(&self.index);
        self.conn.command(zcard).await
    }
}
