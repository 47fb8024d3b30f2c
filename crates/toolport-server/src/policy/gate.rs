//! Concurrency gates: at most N calls run at once; a bounded number wait,
//! for a bounded time; the rest are refused at once with a retry hint.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolport_protocol::ErrorObject;

use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use super::overloaded;
use crate::error::ToolError;

/// One gate.
#[derive(Debug)]
pub(crate) struct Gate {
    what: String,
    max: usize,
    permits: Arc<Semaphore>,
    waiting: AtomicUsize,
    queue: usize,
    wait: Duration,
}

/// Counts a caller as waiting until it gets in or gives up.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Gate {
    pub(crate) fn new(what: impl Into<String>, max: usize, queue: usize, wait: Duration) -> Self {
        Gate {
            what: what.into(),
            max,
            permits: Arc::new(Semaphore::new(max)),
            waiting: AtomicUsize::new(0),
            queue,
            wait,
        }
    }

    /// Waits for a place; the permit holds it until dropped.
    pub(crate) async fn enter(&self) -> Result<OwnedSemaphorePermit, ErrorObject> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            metrics::counter!("toolport_rejections_total", "reason" => "queue_full").increment(1);
            return Err(overloaded(
                &format!("{} is at its limit of {} and its queue is full", self.what, self.max),
                self.wait,
            ));
        }
        let _waiting = Waiting(&self.waiting);
        let started = std::time::Instant::now();
        let permit = tokio::time::timeout(self.wait, self.permits.clone().acquire_owned()).await;
        metrics::histogram!("toolport_queue_wait_seconds").record(started.elapsed().as_secs_f64());
        match permit {
            Ok(Ok(permit)) => Ok(permit),
            _ => {
                metrics::counter!("toolport_rejections_total", "reason" => "queue_timeout").increment(1);
                Err(overloaded(
                    &format!(
                        "{} stayed at its limit of {} for {} ms",
                        self.what,
                        self.max,
                        self.wait.as_millis()
                    ),
                    self.wait,
                ))
            }
        }
    }

    fn state(&self) -> super::GateState {
        super::GateState {
            gate: self.what.clone(),
            max: self.max,
            in_use: self.max.saturating_sub(self.permits.available_permits()),
            waiting: self.waiting.load(Ordering::SeqCst),
            queue: self.queue,
        }
    }

    fn idle(&self) -> bool {
        self.permits.available_permits() == self.max && self.waiting.load(Ordering::SeqCst) == 0
    }
}

/// A gate per key (per principal), made on first use.
#[derive(Debug)]
pub(crate) struct KeyedGates {
    what: &'static str,
    max: usize,
    queue: usize,
    wait: Duration,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
}

/// Past this many keys, idle gates are dropped so memory stays bounded.
const PRUNE_ABOVE: usize = 4096;

impl KeyedGates {
    pub(crate) fn new(what: &'static str, max: usize, queue: usize, wait: Duration) -> Self {
        KeyedGates {
            what,
            max,
            queue,
            wait,
            gates: Mutex::default(),
        }
    }

    pub(crate) fn gate(&self, key: &str) -> Arc<Gate> {
        let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        // The common case, a caller seen before, allocates nothing.
        if let Some(gate) = gates.get(key) {
            return gate.clone();
        }
        if gates.len() > PRUNE_ABOVE {
            gates.retain(|_, g| Arc::strong_count(g) > 1 || !g.idle());
        }
        let gate = Arc::new(Gate::new(
            format!("{} {key:?}", self.what),
            self.max,
            self.queue,
            self.wait,
        ));
        gates.insert(key.to_owned(), gate.clone());
        gate
    }
}

/// The gates of one server: all calls together, per principal, per tool.
#[derive(Debug, Default)]
pub(crate) struct Gates {
    pub(crate) global: Option<Gate>,
    pub(crate) per_principal: Option<KeyedGates>,
    /// By tool name or pattern (`prefix*`): a call holds a place at its
    /// tool's gate and at every pattern's it matches.
    pub(crate) per_tool: super::ByName<Gate>,
}

impl Gates {
    /// The server's and the tools' gates, and the principals' gates that
    /// are not idle.
    pub(crate) fn states(&self) -> Vec<super::GateState> {
        let mut states: Vec<_> = self
            .global
            .iter()
            .chain(self.per_tool.values())
            .map(Gate::state)
            .collect();
        if let Some(keyed) = &self.per_principal {
            let gates = keyed.gates.lock().unwrap_or_else(|p| p.into_inner());
            states.extend(gates.values().filter(|g| !g.idle()).map(|g| g.state()));
        }
        states
    }

    /// Whether any gate is configured.
    pub(crate) fn any(&self) -> bool {
        self.global.is_some() || self.per_principal.is_some() || !self.per_tool.is_empty()
    }
}

/// A call holds a place at every gate that applies to it while it runs.
impl CallLayer for Arc<Gates> {
    fn call<'a>(&'a self, mut call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let limited = !self.per_tool.is_empty() && self.per_tool.matching(call.name).next().is_some();
        if self.global.is_none() && self.per_principal.is_none() && !limited {
            return next.run(call);
        }
        Box::pin(async move {
            let _global = match &self.global {
                Some(gate) => Some(gate.enter().await.map_err(ToolError::Protocol)?),
                None => None,
            };
            let mut places = Vec::new();
            if limited {
                for (_, gate) in self.per_tool.matching(call.name) {
                    places.push(gate.enter().await.map_err(ToolError::Protocol)?);
                }
            }
            let _principal = match &self.per_principal {
                Some(gates) => Some(gates.gate(call.subject()).enter().await.map_err(ToolError::Protocol)?),
                None => None,
            };
            call.waited = true;
            next.run(call).await
        })
    }
}
