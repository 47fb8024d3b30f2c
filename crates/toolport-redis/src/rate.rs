//! Rate buckets: GCRA in a script, on Redis's clock. Each bucket is one key
//! holding its theoretical arrival time (ms); a check is atomic, so replicas
//! checking one bucket at once never both take its last token, and a check
//! costs one round trip. The error across replicas is therefore that of the
//! algorithm, not of the replicas: none.

use std::sync::LazyLock;
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use toolport_server::state::{RateConfig, RateDecision, RateLimiter, StateError};

use crate::conn::{Connection, NOW_MS};

/// KEYS: bucket. ARGV: emission interval ms, burst. Returns {1, 0} when
/// allowed, {0, wait ms} when not.
static CHECK: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW_MS}
local interval = tonumber(ARGV[1])
local limit = interval * tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local next = tat + interval
if next - now > limit then return {{0, math.ceil(next - now - limit)}} end
redis.call('SET', KEYS[1], string.format('%.3f', next), 'PX', math.max(1, math.ceil(next - now)))
return {{1, 0}}"
    ))
});

#[derive(Debug)]
pub(crate) struct RedisRateLimiter {
    conn: Connection,
}

impl RedisRateLimiter {
    pub(crate) fn new(conn: Connection) -> Self {
        RedisRateLimiter { conn }
    }
}

#[async_trait]
impl RateLimiter for RedisRateLimiter {
    async fn check(&self, key: &str, rate: &RateConfig) -> Result<RateDecision, StateError> {
        // The shape comes first: a key (from a principal's name) cannot name
        // another shape's bucket.
        let shape = format!("{}:{}", rate.per_second.to_bits(), rate.burst);
        let bucket = self.conn.key(&["rate", &shape, key]);
        let interval = format!("{:.6}", 1000.0 / rate.per_second);
        let burst = rate.burst.max(1).to_string();
        let (allowed, wait_ms): (i64, u64) = self
            .conn
            .script(&CHECK, &[&bucket], &[interval.as_bytes(), burst.as_bytes()])
            .await?;
        Ok(if allowed == 1 {
            RateDecision::Allowed
        } else {
            RateDecision::RetryAfter(Duration::from_millis(wait_ms.max(1)))
        })
    }
}
