//! Shared state in Redis for the replicas of one Toolport server.
//!
//! [`RedisState`] holds two connections to one Redis (through `redis`'s
//! connection manager, which reconnects on its own): one for commands, one
//! for pub/sub. From it come implementations of every trait of
//! [`toolport_server::state`]:
//!
//! | Trait | In Redis | Round trips |
//! |---|---|---|
//! | [`SessionStore`](toolport_server::state::SessionStore) | a hash per session (record, log level), a set of its subscriptions, a sorted set of last use | one script per call |
//! | [`EventLog`](toolport_server::state::EventLog) | a list per stream trimmed to its bound, a counter numbering its events, expiring with the session | one script per append or replay |
//! | [`IdempotencyStore`](toolport_server::state::IdempotencyStore) | a hash per key, expiring with its lease while it runs and with the time to live once done; waiters are woken over pub/sub | one script per claim, completion or release |
//! | [`RateLimiter`](toolport_server::state::RateLimiter) | GCRA: the theoretical arrival time per bucket, on Redis's clock | one script per check |
//! | [`EventBus`](toolport_server::state::EventBus) | one pub/sub channel; `publish_once` remembers each (event, version) with `SET NX` | one `PUBLISH` (or script) per event, pipelined |
//! | [`Relay`](toolport_server::state::Relay) | one pub/sub channel per topic | one `PUBLISH` per message |
//!
//! Every call is bounded by [`RedisOptions::timeout`]; a Redis that is down
//! or slow is a [`StateError::Unavailable`], which the server turns into a
//! clear error for the client (HTTP 503 with `Retry-After`), and service
//! resumes when Redis is back, without a restart. Scripts name keys they
//! derive from their arguments, so the store needs one Redis (or a primary
//! with replicas), not a Redis Cluster.

mod bus;
mod conn;
mod events;
mod hub;
mod idempotency;
mod rate;
mod relay;
mod sessions;

use std::sync::Arc;
use std::time::Duration;

use toolport_server::state::{EventBus, EventLog, IdempotencyStore, RateLimiter, Relay, SessionStore, StateError};

pub use conn::RedisOptions;

use crate::conn::Connection;
use crate::hub::Hub;

/// A connection to the Redis that the replicas share, and the stores on it.
/// Cheap to clone; clones share the connections.
#[derive(Clone, Debug)]
pub struct RedisState {
    conn: Connection,
    hub: Arc<Hub>,
}

impl RedisState {
    /// Opens the connections to `url` (`redis://[user:password@]host[:port][/db]`)
    /// without waiting for Redis: a Redis that is not up yet makes calls
    /// fail until it is. Needs a Tokio runtime (the pub/sub connection's
    /// keeper runs on it). Fails only for a URL that is not a Redis URL.
    pub fn open(url: &str, options: RedisOptions) -> Result<Self, StateError> {
        let conn = Connection::open(url, options)?;
        let hub = Hub::start(&conn, url)?;
        Ok(RedisState { conn, hub })
    }

    /// Whether Redis answers now (a `PING` on each connection), for `/ready`.
    pub async fn ping(&self) -> Result<(), StateError> {
        self.conn.ping().await?;
        self.hub.ping().await
    }

    /// The key prefix of every key and channel.
    pub fn prefix(&self) -> &str {
        &self.conn.options.prefix
    }

    /// Handshake-era sessions.
    pub fn sessions(&self) -> Arc<dyn SessionStore> {
        Arc::new(sessions::RedisSessionStore::new(self.conn.clone()))
    }

    /// SSE event logs keeping `per_stream` events per stream.
    pub fn event_log(&self, per_stream: usize) -> Arc<dyn EventLog> {
        Arc::new(events::RedisEventLog::new(self.conn.clone(), per_stream))
    }

    /// Idempotency records kept `ttl` once complete.
    pub fn idempotency(&self, ttl: Duration) -> Arc<dyn IdempotencyStore> {
        Arc::new(idempotency::RedisIdempotencyStore::new(
            self.conn.clone(),
            self.hub.clone(),
            ttl,
        ))
    }

    /// Rate buckets.
    pub fn rate_limiter(&self) -> Arc<dyn RateLimiter> {
        Arc::new(rate::RedisRateLimiter::new(self.conn.clone()))
    }

    /// The event bus; a subscriber may fall `capacity` events behind before
    /// it is told that every list changed. Its subscription to the other
    /// replicas' events is in place when this returns, unless Redis does not
    /// answer (then it is made as soon as Redis does).
    pub async fn event_bus(&self, capacity: usize) -> Arc<dyn EventBus> {
        Arc::new(bus::RedisEventBus::start(self.conn.clone(), &self.hub, capacity).await)
    }

    /// The relay between replicas.
    pub fn relay(&self) -> Arc<dyn Relay> {
        Arc::new(relay::RedisRelay::new(self.conn.clone(), self.hub.clone()))
    }
}
