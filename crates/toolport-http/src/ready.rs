//! Readiness: whether this replica should be sent traffic now, as `/ready`
//! answers it for load balancers and orchestrators.
//!
//! A replica is ready while it is not shutting down and every
//! [`ReadinessCheck`] given to [`HttpServer::with_readiness_check`]
//! (the SQL pack's database, a shared state store, ...) passes. Probes may come
//! often and from anyone who can reach the port, so the checks run at most
//! once per [`FRESH_FOR`] whatever the probe rate: concurrent probes share one
//! round, later ones reuse its verdict until it is stale. Each round is bounded
//! by [`HttpConfig::readiness_timeout`](crate::HttpConfig::readiness_timeout):
//! a dependency that hangs makes the replica unready, not the probe hang.
//!
//! [`HttpServer::with_readiness_check`]: crate::HttpServer::with_readiness_check

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

/// How long a verdict is reused: long enough that a flood of probes costs the
/// dependencies one round per period, short enough that an orchestrator
/// probing every few seconds sees each change.
pub const FRESH_FOR: Duration = Duration::from_secs(1);

/// Something this replica needs in order to serve, checked by `/ready`.
///
/// An implementation does the cheapest round trip that proves the dependency
/// answers (`SELECT 1`, a Redis `PING`) and returns a reason a person can act
/// on when it does not. The reason is shown in the `/ready` body and the logs,
/// so it must not contain secrets (no connection strings with passwords).
///
/// ```
/// use async_trait::async_trait;
/// use toolport_http::ReadinessCheck;
///
/// #[derive(Debug)]
/// struct Upstream;
///
/// #[async_trait]
/// impl ReadinessCheck for Upstream {
///     fn name(&self) -> &str {
///         "upstream"
///     }
///     async fn check(&self) -> Result<(), String> {
///         Ok(())
///     }
/// }
/// ```
#[async_trait]
pub trait ReadinessCheck: Send + Sync + fmt::Debug + 'static {
    /// A short name for the `/ready` body and the logs: `sql`, `state`, ...
    fn name(&self) -> &str;

    /// `Ok` when the dependency answers; otherwise why not.
    async fn check(&self) -> Result<(), String>;
}

/// The verdict of one round of checks: `None` when all passed, otherwise the
/// failures, one `name: reason` per line.
type Verdict = Option<String>;

/// The checks of one server and their last verdict.
#[derive(Debug)]
pub(crate) struct Readiness {
    checks: Vec<Arc<dyn ReadinessCheck>>,
    timeout: Duration,
    /// The last verdict and when it was reached. An async mutex: a probe that
    /// finds a round running waits for its verdict instead of starting another.
    last: tokio::sync::Mutex<Option<(Instant, Verdict)>>,
}

impl Readiness {
    pub(crate) fn new(timeout: Duration) -> Self {
        Readiness {
            checks: Vec::new(),
            timeout,
            last: tokio::sync::Mutex::new(None),
        }
    }

    pub(crate) fn add(&mut self, check: Arc<dyn ReadinessCheck>) {
        self.checks.push(check);
    }

    /// `None` when every check passes; otherwise what failed.
    pub(crate) async fn verdict(&self) -> Verdict {
        if self.checks.is_empty() {
            return None;
        }
        let mut last = self.last.lock().await;
        if let Some((at, verdict)) = last.as_ref()
            && at.elapsed() < FRESH_FOR
        {
            return verdict.clone();
        }
        let verdict = self.run().await;
        if let Some(failures) = &verdict {
            tracing::warn!(%failures, "not ready");
        }
        *last = Some((Instant::now(), verdict.clone()));
        verdict
    }

    /// Runs every check at once, each bounded by the timeout.
    async fn run(&self) -> Verdict {
        let mut running = tokio::task::JoinSet::new();
        for (index, check) in self.checks.iter().enumerate() {
            let check = check.clone();
            let timeout = self.timeout;
            running.spawn(async move {
                let outcome = match tokio::time::timeout(timeout, check.check()).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
                };
                (index, outcome)
            });
        }
        let mut failures: Vec<(usize, String)> = Vec::new();
        while let Some(joined) = running.join_next().await {
            match joined {
                Ok((_, Ok(()))) => {}
                Ok((index, Err(reason))) => failures.push((index, reason)),
                // A check that panicked says nothing good about its dependency.
                Err(e) => failures.push((usize::MAX, format!("a check failed: {e}"))),
            }
        }
        if failures.is_empty() {
            return None;
        }
        // In the order the checks were added, so the body reads the same each time.
        failures.sort_by_key(|(index, _)| *index);
        let lines: Vec<String> = failures
            .into_iter()
            .map(|(index, reason)| match self.checks.get(index) {
                Some(check) => format!("{}: {reason}", check.name()),
                None => reason,
            })
            .collect();
        Some(lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[derive(Debug)]
    struct Counted {
        name: &'static str,
        calls: AtomicUsize,
        outcome: Result<(), &'static str>,
        hang: bool,
    }

    impl Counted {
        fn new(name: &'static str, outcome: Result<(), &'static str>) -> Arc<Self> {
            Arc::new(Counted {
                name,
                calls: AtomicUsize::new(0),
                outcome,
                hang: false,
            })
        }
    }

    #[async_trait]
    impl ReadinessCheck for Counted {
        fn name(&self) -> &str {
            self.name
        }
        async fn check(&self) -> Result<(), String> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.hang {
                std::future::pending::<()>().await;
            }
            self.outcome.map_err(str::to_owned)
        }
    }

    #[tokio::test]
    async fn no_checks_is_ready() {
        assert_eq!(Readiness::new(Duration::from_secs(1)).verdict().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_are_named_in_order_and_verdicts_are_reused_while_fresh() {
        let db = Counted::new("sql", Err("connection refused"));
        let ok = Counted::new("cache", Ok(()));
        let state = Counted::new("state", Err("PING failed"));
        let mut readiness = Readiness::new(Duration::from_secs(1));
        for check in [db.clone(), ok.clone(), state.clone()] {
            readiness.add(check);
        }
        let expected = "sql: connection refused\nstate: PING failed";
        assert_eq!(readiness.verdict().await.as_deref(), Some(expected));
        // A flood of probes within the freshness period runs no new round.
        for _ in 0..100 {
            assert_eq!(readiness.verdict().await.as_deref(), Some(expected));
        }
        assert_eq!(db.calls.load(Ordering::SeqCst), 1);
        tokio::time::advance(FRESH_FOR).await;
        assert_eq!(readiness.verdict().await.as_deref(), Some(expected));
        assert_eq!(ok.calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hanging_check_fails_after_the_timeout() {
        let hanging = Arc::new(Counted {
            name: "sql",
            calls: AtomicUsize::new(0),
            outcome: Ok(()),
            hang: true,
        });
        let mut readiness = Readiness::new(Duration::from_millis(250));
        readiness.add(hanging);
        assert_eq!(
            readiness.verdict().await.as_deref(),
            Some("sql: no answer within 250 ms")
        );
    }
}
