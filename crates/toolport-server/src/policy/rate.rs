//! Token-bucket rate limits (governor's GCRA), per principal and per tool.

use std::num::NonZeroU32;
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
}

impl KeyedBuckets {
    pub(crate) fn new(what: &'static str, rate: &RateConfig) -> Self {
        KeyedBuckets {
            what,
            limiter: DefaultKeyedRateLimiter::keyed(quota(rate)),
        }
    }

    pub(crate) fn check(&self, key: &str) -> Result<(), ErrorObject> {
        let result = self.limiter.check_key(&key.to_owned());
        if self.limiter.len() > 4096 {
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
