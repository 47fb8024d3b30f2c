//! Token-bucket rate limits (governor's GCRA), per principal and per tool.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota};
use toolport_protocol::ErrorObject;

use super::{RateConfig, overloaded};

fn quota(rate: &RateConfig) -> Quota {
    let burst = NonZeroU32::new(rate.burst.max(1)).expect("at least 1");
    let period = Duration::from_secs_f64(1.0 / rate.per_second);
    Quota::with_period(period)
        .expect("a positive period")
        .allow_burst(burst)
}

/// One bucket.
#[derive(Debug)]
pub(crate) struct Bucket {
    what: String,
    limiter: DefaultDirectRateLimiter,
}

impl Bucket {
    pub(crate) fn new(what: impl Into<String>, rate: &RateConfig) -> Self {
        Bucket {
            what: what.into(),
            limiter: DefaultDirectRateLimiter::direct(quota(rate)),
        }
    }

    pub(crate) fn check(&self) -> Result<(), ErrorObject> {
        self.limiter.check().map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            rejected(&self.what, wait)
        })
    }
}

/// A bucket per key.
#[derive(Debug)]
pub(crate) struct KeyedBuckets {
    what: &'static str,
    limiter: DefaultKeyedRateLimiter<String>,
    /// Checks since the key count was last looked at.
    checks: AtomicU32,
}

/// How often (in checks) the key count is looked at: counting visits every
/// shard of the map, too much work for every call.
const PRUNE_CHECK_EVERY: u32 = 1024;

impl KeyedBuckets {
    pub(crate) fn new(what: &'static str, rate: &RateConfig) -> Self {
        KeyedBuckets {
            what,
            limiter: DefaultKeyedRateLimiter::keyed(quota(rate)),
            checks: AtomicU32::new(0),
        }
    }

    pub(crate) fn check(&self, key: &str) -> Result<(), ErrorObject> {
        let result = self.limiter.check_key(&key.to_owned());
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(PRUNE_CHECK_EVERY)
            && self.limiter.len() > 4096
        {
            self.limiter.retain_recent();
        }
        result.map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            rejected(&format!("{} {key:?}", self.what), wait)
        })
    }
}

fn rejected(what: &str, wait: Duration) -> ErrorObject {
    metrics::counter!("toolport_rejections_total", "reason" => "rate_limited").increment(1);
    overloaded(&format!("rate limit of {what} reached"), wait)
}
