//! Where the engine reads the time. Leases, expiry and timestamps all come
//! from one clock, so tests move time instead of sleeping.

use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::record::Millis;

/// A source of the current time.
pub trait Clock: Send + Sync + Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> Millis;
}

/// The system's wall clock: the one production uses, since leases are
/// compared across processes and machines.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that shows what it is set to, for tests of expiry and recovery.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock showing `now`.
    pub fn new(now: Millis) -> ManualClock {
        ManualClock(AtomicI64::new(now))
    }

    /// Sets the time.
    pub fn set(&self, now: Millis) {
        self.0.store(now, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: Millis) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}
