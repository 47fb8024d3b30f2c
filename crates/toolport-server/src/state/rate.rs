//! Token buckets by key.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use serde::{Deserialize, Serialize};

use super::StateError;

/// A token bucket: a steady rate and a burst.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    /// Calls per second, sustained.
    pub per_second: f64,
    /// Calls allowed at once after a quiet spell.
    pub burst: u32,
}

/// What a rate check answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RateDecision {
    /// The call may go ahead; it used a token.
    Allowed,
    /// No token: the earliest a retry can succeed.
    RetryAfter(Duration),
}

/// Token buckets (a steady rate and a burst) by key. A check is atomic: two
/// replicas checking one key at once never both take its last token.
#[async_trait]
pub trait RateLimiter: Send + Sync + std::fmt::Debug + 'static {
    /// Takes a token from `key`'s bucket, which has the shape `rate`.
    async fn check(&self, key: &str, rate: &RateConfig) -> Result<RateDecision, StateError>;
}

/// Buckets in this process's memory (governor's GCRA), one keyed limiter per
/// bucket shape.
#[derive(Debug, Default)]
pub struct MemoryRateLimiter {
    /// By the rate's bits: there are as many shapes as configured limits.
    limiters: RwLock<HashMap<BucketShape, Arc<DefaultKeyedRateLimiter<String>>>>,
    /// Checks since the key count was last looked at.
    checks: AtomicU32,
}

/// A rate's `per_second` bits and burst.
type BucketShape = (u64, u32);

/// How often (in checks) the key count is looked at: counting visits every
/// shard of the map, too much work for every call.
const PRUNE_CHECK_EVERY: u32 = 1024;

/// Keys beyond which buckets that are full again are dropped.
const PRUNE_ABOVE_KEYS: usize = 4096;

fn quota(rate: &RateConfig) -> Quota {
    let burst = NonZeroU32::new(rate.burst.max(1)).expect("at least 1");
    let period = Duration::from_secs_f64(1.0 / rate.per_second);
    Quota::with_period(period)
        .expect("a positive period")
        .allow_burst(burst)
}

impl MemoryRateLimiter {
    /// No buckets yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn limiter(&self, rate: &RateConfig) -> Arc<DefaultKeyedRateLimiter<String>> {
        let shape = (rate.per_second.to_bits(), rate.burst);
        if let Some(limiter) = self.limiters.read().unwrap_or_else(|p| p.into_inner()).get(&shape) {
            return limiter.clone();
        }
        self.limiters
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(shape)
            .or_insert_with(|| Arc::new(DefaultKeyedRateLimiter::keyed(quota(rate))))
            .clone()
    }
}

#[async_trait]
impl RateLimiter for MemoryRateLimiter {
    async fn check(&self, key: &str, rate: &RateConfig) -> Result<RateDecision, StateError> {
        let limiter = self.limiter(rate);
        let result = limiter.check_key(&key.to_owned());
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(PRUNE_CHECK_EVERY)
            && limiter.len() > PRUNE_ABOVE_KEYS
        {
            limiter.retain_recent();
        }
        Ok(match result {
            Ok(()) => RateDecision::Allowed,
            Err(not_until) => RateDecision::RetryAfter(not_until.wait_time_from(DefaultClock::default().now())),
        })
    }
}
