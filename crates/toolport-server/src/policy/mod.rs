//! Policies around every `tools/call`: rate limits, idempotency keys,
//! concurrency gates with a bounded queue, and deadlines.
//!
//! "Stateless does not mean unlimited": each layer refuses work it cannot
//! take with a clear overload error (`-32010`, `data.retryAfterMs`; HTTP 429
//! with `Retry-After`) instead of letting a downstream system take the blow.
//! The order is cheapest refusal first: rate limits, then the idempotency key
//! (a repeat does not use a slot), then the gates, then the deadline around
//! the handler itself.

mod gate;
mod idempotency;
mod rate;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolport_protocol::meta::Meta;
use toolport_protocol::tools::CallToolResult;
use toolport_protocol::{ErrorCode, ErrorObject};

use self::gate::{Gate, KeyedGates};
use self::idempotency::{Claimed, Idempotency};
use self::rate::RateLimits;
use crate::error::ToolError;
use crate::state::{IdempotencyStore, MemoryIdempotencyStore, MemoryRateLimiter, RateLimiter};

pub use crate::state::RateConfig;

/// Limits of one tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolPolicyConfig {
    /// Calls of this tool running at once.
    pub max_concurrent: Option<usize>,
    /// How long one call may run, in milliseconds; 0 for no deadline.
    pub deadline_ms: Option<u64>,
    /// Calls of this tool per second, all callers together.
    pub rate: Option<RateConfig>,
}

/// Idempotency keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdempotencyConfig {
    /// Whether keys are honoured.
    pub enabled: bool,
    /// The `_meta` key that carries the idempotency key.
    pub meta_key: String,
    /// How long a result is kept for repeats, in seconds.
    pub ttl_seconds: u64,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        IdempotencyConfig {
            enabled: true,
            meta_key: "dev.toolport/idempotencyKey".into(),
            ttl_seconds: 600,
        }
    }
}

/// Every policy's settings. `0` means "no limit" for the counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// Tool calls running at once, all tools and callers together
    /// (`MAX_CONCURRENT_TOOLS`).
    pub max_concurrent: usize,
    /// Tool calls running at once per principal.
    pub max_concurrent_per_principal: usize,
    /// Calls that may wait for a place at each gate; more are refused at once.
    pub queue: usize,
    /// How long a call may wait for a place, in milliseconds.
    pub queue_timeout_ms: u64,
    /// How long any call may run, in milliseconds, unless its tool says
    /// otherwise; 0 for no deadline.
    pub deadline_ms: u64,
    /// Calls per second per principal.
    pub rate_per_principal: Option<RateConfig>,
    /// Idempotency keys.
    pub idempotency: IdempotencyConfig,
    /// Per-tool limits, by tool name.
    pub tools: BTreeMap<String, ToolPolicyConfig>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            max_concurrent: 0,
            max_concurrent_per_principal: 0,
            queue: 64,
            queue_timeout_ms: 5_000,
            deadline_ms: 300_000,
            rate_per_principal: None,
            idempotency: IdempotencyConfig::default(),
            tools: BTreeMap::new(),
        }
    }
}

/// A setting that cannot work, named by its path in the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value}: expected {expected}")]
pub struct InvalidSetting {
    /// Where, for example `limits.tools.search.rate.per_second`.
    pub key: String,
    /// What was given.
    pub value: String,
    /// What would work.
    pub expected: String,
}

impl PolicyConfig {
    /// No policy at all: no limits, no deadline, no idempotency keys.
    pub fn none() -> Self {
        PolicyConfig {
            deadline_ms: 0,
            idempotency: IdempotencyConfig {
                enabled: false,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// Checks what serde cannot: positive rates, sane timeouts. `prefix` is
    /// where these settings sit in the file, for the messages.
    pub fn validate(&self, prefix: &str) -> Result<(), InvalidSetting> {
        let bad = |key: &str, value: String, expected: &str| InvalidSetting {
            key: format!("{prefix}.{key}"),
            value,
            expected: expected.into(),
        };
        let check_rate = |key: &str, rate: &RateConfig| {
            if !(rate.per_second.is_finite() && rate.per_second > 0.0 && rate.per_second <= 1e9) {
                return Err(bad(
                    &format!("{key}.per_second"),
                    rate.per_second.to_string(),
                    "a number of calls per second above 0",
                ));
            }
            if rate.burst == 0 {
                return Err(bad(&format!("{key}.burst"), "0".into(), "at least 1"));
            }
            Ok(())
        };
        if let Some(rate) = &self.rate_per_principal {
            check_rate("rate_per_principal", rate)?;
        }
        if self.idempotency.enabled && self.idempotency.meta_key.trim().is_empty() {
            return Err(bad("idempotency.meta_key", "\"\"".into(), "the name of a _meta key"));
        }
        for (name, tool) in &self.tools {
            if tool.deadline_ms == Some(0) {
                return Err(bad(
                    &format!("tools.{name}.deadline_ms"),
                    "0".into(),
                    "a deadline of at least 1 ms",
                ));
            }
            if tool.max_concurrent == Some(0) {
                return Err(bad(
                    &format!("tools.{name}.max_concurrent"),
                    "0".into(),
                    "at least 1 (omit it for no limit)",
                ));
            }
            if let Some(rate) = &tool.rate {
                check_rate(&format!("tools.{name}.rate"), rate)?;
            }
        }
        Ok(())
    }
}

/// The overload error: JSON-RPC `-32010` with `data.retryAfterMs`.
pub(crate) fn overloaded(why: &str, retry_after: Duration) -> ErrorObject {
    let retry_after_ms = retry_after.as_millis().max(1) as u64;
    ErrorObject::new(
        ErrorCode::OVERLOADED,
        format!("Overloaded: {why}; retry after {retry_after_ms} ms"),
    )
    .with_data(json!({ "retryAfterMs": retry_after_ms }))
}

/// The policies of one server, built from its configuration.
#[derive(Debug)]
pub(crate) struct Policies {
    config: PolicyConfig,
    global: Option<Gate>,
    per_principal: Option<KeyedGates>,
    tool_gates: BTreeMap<String, Gate>,
    /// `None` when nothing is rate limited: no bucket is looked at.
    rates: Option<RateLimits>,
    idempotency: Option<Idempotency>,
}

/// What a policy needs to know about one call.
#[derive(Debug)]
pub(crate) struct CallFacts<'a> {
    pub(crate) tool: &'a str,
    pub(crate) principal: Option<&'a str>,
    pub(crate) meta: &'a Meta,
    /// The arguments, when an idempotency key needs their digest.
    pub(crate) arguments: Option<&'a Value>,
    /// When the request was taken.
    pub(crate) started: std::time::Instant,
}

impl Policies {
    /// The policies of `config`, keeping idempotency records and rate
    /// buckets in the given stores (in memory when `None`).
    pub(crate) fn new(
        config: PolicyConfig,
        idempotency_store: Option<Arc<dyn IdempotencyStore>>,
        rate_limiter: Option<Arc<dyn RateLimiter>>,
    ) -> Self {
        let wait = Duration::from_millis(config.queue_timeout_ms);
        let queue = config.queue;
        let global = (config.max_concurrent > 0).then(|| Gate::new("the server", config.max_concurrent, queue, wait));
        let per_principal = (config.max_concurrent_per_principal > 0)
            .then(|| KeyedGates::new("principal", config.max_concurrent_per_principal, queue, wait));
        let tool_gates = config
            .tools
            .iter()
            .filter_map(|(name, t)| {
                t.max_concurrent
                    .map(|max| (name.clone(), Gate::new(format!("tool {name}"), max, queue, wait)))
            })
            .collect();
        let tool_rates: BTreeMap<String, RateConfig> = config
            .tools
            .iter()
            .filter_map(|(name, t)| t.rate.clone().map(|rate| (name.clone(), rate)))
            .collect();
        let rates = (config.rate_per_principal.is_some() || !tool_rates.is_empty()).then(|| {
            let limiter = rate_limiter.unwrap_or_else(|| Arc::new(MemoryRateLimiter::new()));
            RateLimits::new(limiter, config.rate_per_principal.clone(), tool_rates)
        });
        let idempotency = config.idempotency.enabled.then(|| {
            let ttl = Duration::from_secs(config.idempotency.ttl_seconds);
            Idempotency::new(idempotency_store.unwrap_or_else(|| Arc::new(MemoryIdempotencyStore::new(ttl))))
        });
        Policies {
            config,
            global,
            per_principal,
            tool_gates,
            rates,
            idempotency,
        }
    }

    /// Whether this call carries an idempotency key (and so needs the digest
    /// of its arguments).
    pub(crate) fn keyed(&self, meta: &Meta) -> bool {
        self.idempotency.is_some() && self.idempotency_key(meta).is_some()
    }

    /// Runs `call` under every policy that applies.
    pub(crate) async fn run<F>(&self, facts: CallFacts<'_>, call: F) -> Result<CallToolResult, ToolError>
    where
        F: Future<Output = Result<CallToolResult, ToolError>>,
    {
        // The anonymous caller shares one bucket and one gate.
        let principal = facts.principal.unwrap_or("");
        if let Some(rates) = &self.rates {
            rates.check_principal(principal).await.map_err(ToolError::Protocol)?;
            rates.check_tool(facts.tool).await.map_err(ToolError::Protocol)?;
        }
        let deadline_ms = self
            .config
            .tools
            .get(facts.tool)
            .and_then(|t| t.deadline_ms)
            .unwrap_or(self.config.deadline_ms);
        let claim = match (&self.idempotency, self.idempotency_key(facts.meta)) {
            (Some(keys), Some(key)) => {
                let arguments = facts.arguments.unwrap_or(&Value::Null);
                match keys
                    .claim(principal, facts.tool, key, arguments, self.lease(deadline_ms))
                    .await
                    .map_err(ToolError::Protocol)?
                {
                    Claimed::Done(result) => return Ok(result),
                    Claimed::Run(guard) => Some(guard),
                }
            }
            _ => None,
        };
        let _global = match &self.global {
            Some(gate) => Some(gate.enter().await.map_err(ToolError::Protocol)?),
            None => None,
        };
        let _tool = match self.tool_gates.get(facts.tool) {
            Some(gate) => Some(gate.enter().await.map_err(ToolError::Protocol)?),
            None => None,
        };
        let _principal = match &self.per_principal {
            Some(gates) => Some(gates.gate(principal).enter().await.map_err(ToolError::Protocol)?),
            None => None,
        };
        if deadline_ms == 0 {
            let outcome = call.await;
            if let Some(guard) = claim {
                guard.finish(&outcome).await;
            }
            return outcome;
        }
        let deadline = Duration::from_millis(deadline_ms);
        // The deadline counts from the request's start, or from the moment
        // the gates let the call through when they may have made it wait.
        let waited = _global.is_some() || _tool.is_some() || _principal.is_some();
        let started = if waited {
            tokio::time::Instant::now()
        } else {
            tokio::time::Instant::from_std(facts.started)
        };
        let mut call = std::pin::pin!(call);
        // Most calls end on their first poll: only one that waits arms a
        // timer, which costs a lock on the timer wheel per call.
        let first = std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx))).await;
        let within = match first {
            std::task::Poll::Ready(outcome) => Ok(outcome),
            std::task::Poll::Pending => tokio::time::timeout_at(started + deadline, call).await,
        };
        let outcome = match within {
            Ok(outcome) => outcome,
            Err(_) => {
                metrics::counter!("toolport_deadlines_exceeded_total", "tool" => facts.tool.to_owned()).increment(1);
                if let Some(guard) = claim {
                    guard.finish(&Err(())).await;
                }
                // The handler's future is dropped here: its work stops at its next await.
                return Err(ToolError::Protocol(
                    ErrorObject::new(
                        ErrorCode::REQUEST_TIMEOUT,
                        format!(
                            "Deadline exceeded: {} ran longer than its {deadline_ms} ms and was stopped",
                            facts.tool
                        ),
                    )
                    .with_data(json!({ "deadlineMs": deadline_ms })),
                ));
            }
        };
        if let Some(guard) = claim {
            guard.finish(&outcome).await;
        }
        outcome
    }

    /// How long a call holds its idempotency key: its time in the queue and
    /// its deadline; without a deadline, the time results are kept.
    fn lease(&self, deadline_ms: u64) -> Duration {
        if deadline_ms == 0 {
            Duration::from_secs(self.config.idempotency.ttl_seconds)
        } else {
            Duration::from_millis(deadline_ms.saturating_add(self.config.queue_timeout_ms))
        }
    }

    fn idempotency_key<'m>(&self, meta: &'m Meta) -> Option<&'m str> {
        meta.get(&self.config.idempotency.meta_key)
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
    }
}
