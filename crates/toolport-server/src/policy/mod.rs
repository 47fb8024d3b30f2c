//! Policies around every `tools/call`, each a layer in a file of its own
//! (`layer.rs` has their shape): metering, audit, the live view of calls
//! (`watch.rs`), cancellation, rate limits,
//! idempotency keys, concurrency gates with a bounded queue, and deadlines.
//! Their order is declared in one place, [`Policies::new`].
//!
//! "Stateless does not mean unlimited": each layer refuses work it cannot
//! take with a clear overload error (`-32010`, `data.retryAfterMs`; HTTP 429
//! with `Retry-After`) instead of letting a downstream system take the blow.

mod audit;
mod cancel;
mod deadline;
pub use self::deadline::DEADLINE_EXCEEDED;
mod gate;
mod idempotency;
mod layer;
mod metering;
mod rate;
mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolport_protocol::{ErrorCode, ErrorObject};

use self::audit::AuditLayer;
use self::cancel::CancelLayer;
use self::deadline::{DeadlineLayer, Deadlines};
use self::gate::{Gate, Gates, KeyedGates};
use self::idempotency::{Idempotency, IdempotencyLayer};
pub(crate) use self::layer::{CallFuture, CallLayer, Next, ToolCall};
use self::metering::MeteringLayer;
use self::rate::RateLimits;
use self::watch::WatchLayer;
use crate::activity::Activity;
use crate::audit::AuditLog;
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
    /// Per-tool limits, by tool name. A name ending in `*` is a pattern for
    /// every tool whose name starts with what comes before the `*` (a
    /// gateway's upstream: `files__*`): its `max_concurrent` and `rate` hold
    /// for those tools together (one gate, one bucket), besides their own;
    /// its `deadline_ms` is theirs unless they have one of their own (the
    /// longest pattern wins).
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
            if name.is_empty() || name.trim_end_matches('*').contains('*') || name.ends_with("**") {
                return Err(bad(
                    &format!("tools.{name:?}"),
                    name.clone(),
                    "a tool name, or a prefix followed by one `*` (a pattern, such as files__*)",
                ));
            }
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

/// Settings by tool name: exact names, and patterns (`prefix*`) that apply
/// to every tool whose name starts with the prefix.
#[derive(Debug, Clone)]
pub(crate) struct ByName<T> {
    exact: BTreeMap<String, T>,
    /// Longest prefix first, so the first match is the most specific.
    patterns: Vec<(String, T)>,
}

impl<T> Default for ByName<T> {
    fn default() -> Self {
        ByName {
            exact: BTreeMap::new(),
            patterns: Vec::new(),
        }
    }
}

impl<T> FromIterator<(String, T)> for ByName<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        let mut by_name = ByName::default();
        for (name, value) in iter {
            match name.strip_suffix('*') {
                Some(prefix) => by_name.patterns.push((prefix.to_owned(), value)),
                None => {
                    by_name.exact.insert(name, value);
                }
            }
        }
        by_name
            .patterns
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        by_name
    }
}

impl<T> ByName<T> {
    /// Whether nothing is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.patterns.is_empty()
    }

    /// What applies to `name`: its own entry first (`None`), then the
    /// patterns it matches (`Some(prefix)`), longest first.
    pub(crate) fn matching<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (Option<&'a str>, &'a T)> + 'a {
        let own = self.exact.get(name).map(|v| (None, v));
        let patterns = self
            .patterns
            .iter()
            .filter(move |(prefix, _)| name.starts_with(prefix.as_str()))
            .map(|(prefix, v)| (Some(prefix.as_str()), v));
        own.into_iter().chain(patterns)
    }

    /// The most specific entry for `name`.
    pub(crate) fn most_specific<'a>(&'a self, name: &'a str) -> Option<&'a T> {
        self.matching(name).next().map(|(_, v)| v)
    }

    /// Every value.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.exact.values().chain(self.patterns.iter().map(|(_, v)| v))
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

/// The policies of one server: its layers around every tool call, built
/// from its configuration. Layers a configuration does not ask for are not
/// in the stack at all.
#[derive(Debug)]
pub(crate) struct Policies {
    layers: Vec<Box<dyn CallLayer>>,
    /// The gates, also read by [`Policies::gate_states`].
    gates: Arc<Gates>,
    /// The configured rates, for [`Policies::rate_limits`].
    rates: Vec<RateLimitState>,
}

/// Where the policies keep what they must share and record.
#[derive(Debug, Default)]
pub(crate) struct PolicyStores {
    pub(crate) idempotency: Option<Arc<dyn IdempotencyStore>>,
    pub(crate) rates: Option<Arc<dyn RateLimiter>>,
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// The live view of running calls and recent failures.
    pub(crate) activity: Arc<Activity>,
}

impl Policies {
    /// The layers of `config`, outermost first. This is the one place their
    /// order is declared; each step says why it stands where it does.
    ///
    /// 0. authorization — not here: [`Server::admit`](crate::Server::admit)
    ///    refuses a call the caller may not make before any layer sees it, so
    ///    a forbidden call takes no token, no key, no place, and is not
    ///    recorded as run;
    /// 1. metering — counts and times every call that got this far, however
    ///    the layers inside end it;
    /// 2. audit — records every such call with its outcome, refusals by the
    ///    layers inside included;
    /// 3. watch — lists the call while it runs (an operator may stop it, which
    ///    the audit records as a cancellation) and keeps its failure, if any;
    /// 4. cancellation — the client's cancel drops everything inside, freeing
    ///    places and keys at once;
    /// 5. rate limits — the cheapest refusal, before anything is held;
    /// 6. idempotency keys — a repeat is answered from its record without
    ///    taking a gate's place;
    /// 7. gates — places at the server's, the principal's and the tool's
    ///    limits, with a bounded queue;
    /// 8. deadline — around the handler alone, counted from when the gates
    ///    let the call in.
    pub(crate) fn new(config: PolicyConfig, stores: PolicyStores) -> Self {
        let mut layers: Vec<Box<dyn CallLayer>> = vec![Box::new(MeteringLayer)];
        if let Some(log) = stores.audit {
            layers.push(Box::new(AuditLayer::new(log)));
        }
        layers.push(Box::new(WatchLayer(stores.activity.clone())));
        layers.push(Box::new(CancelLayer));
        let tool_rates: ByName<RateConfig> = config
            .tools
            .iter()
            .filter_map(|(name, t)| t.rate.clone().map(|rate| (name.clone(), rate)))
            .collect();
        let rates = rate_limit_states(&config);
        if config.rate_per_principal.is_some() || !tool_rates.is_empty() {
            let limiter = stores.rates.unwrap_or_else(|| Arc::new(MemoryRateLimiter::new()));
            layers.push(Box::new(RateLimits::new(
                limiter,
                config.rate_per_principal.clone(),
                tool_rates,
                stores.activity.clone(),
            )));
        }
        let deadlines = Deadlines {
            default_ms: config.deadline_ms,
            per_tool: config
                .tools
                .iter()
                .filter_map(|(name, t)| t.deadline_ms.map(|ms| (name.clone(), ms)))
                .collect(),
        };
        if config.idempotency.enabled {
            let ttl = Duration::from_secs(config.idempotency.ttl_seconds);
            let store = stores
                .idempotency
                .unwrap_or_else(|| Arc::new(MemoryIdempotencyStore::new(ttl)));
            layers.push(Box::new(IdempotencyLayer {
                keys: Idempotency::new(store),
                meta_key: config.idempotency.meta_key.clone(),
                ttl,
                queue_timeout: Duration::from_millis(config.queue_timeout_ms),
                deadlines: deadlines.clone(),
            }));
        }
        let gates = Arc::new(gates(&config));
        if gates.any() {
            layers.push(Box::new(gates.clone()));
        }
        if deadlines.any() {
            layers.push(Box::new(DeadlineLayer(deadlines)));
        }
        Policies { layers, gates, rates }
    }

    /// Every gate with a call inside or waiting, and every configured one.
    pub(crate) fn gate_states(&self) -> Vec<GateState> {
        self.gates.states()
    }

    /// The configured rate limits.
    pub(crate) fn rate_limits(&self) -> &[RateLimitState] {
        &self.rates
    }

    /// Runs `handler` under every layer.
    pub(crate) fn run<'a>(&'a self, call: ToolCall<'a>, handler: CallFuture<'a>) -> CallFuture<'a> {
        Next::new(&self.layers, handler).run(call)
    }
}

/// One concurrency gate as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateState {
    /// Which: `the server`, `tool search`, `principal "alice"`.
    pub gate: String,
    /// Calls it lets run at once.
    pub max: usize,
    /// Calls running inside it now.
    pub in_use: usize,
    /// Calls waiting for a place now.
    pub waiting: usize,
    /// Most calls that may wait.
    pub queue: usize,
}

/// One configured rate limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateLimitState {
    /// What it limits: `each principal` or `tool search`.
    pub limit: String,
    /// Its rate and burst.
    pub rate: RateConfig,
}

fn rate_limit_states(config: &PolicyConfig) -> Vec<RateLimitState> {
    let principal = config.rate_per_principal.iter().map(|rate| RateLimitState {
        limit: "each principal".into(),
        rate: rate.clone(),
    });
    let tools = config.tools.iter().filter_map(|(name, t)| {
        t.rate.clone().map(|rate| RateLimitState {
            limit: format!("tool {name}"),
            rate,
        })
    });
    principal.chain(tools).collect()
}

/// The gates `config` asks for.
fn gates(config: &PolicyConfig) -> Gates {
    let wait = Duration::from_millis(config.queue_timeout_ms);
    let queue = config.queue;
    Gates {
        global: (config.max_concurrent > 0).then(|| Gate::new("the server", config.max_concurrent, queue, wait)),
        per_principal: (config.max_concurrent_per_principal > 0)
            .then(|| KeyedGates::new("principal", config.max_concurrent_per_principal, queue, wait)),
        per_tool: config
            .tools
            .iter()
            .filter_map(|(name, t)| {
                let what = match name.strip_suffix('*') {
                    Some(prefix) => format!("the tools {prefix}*"),
                    None => format!("tool {name}"),
                };
                t.max_concurrent
                    .map(|max| (name.clone(), Gate::new(what, max, queue, wait)))
            })
            .collect(),
    }
}
