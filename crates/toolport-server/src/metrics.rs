//! Request metrics: how many requests each method answered, how, and how
//! long they took, with every handle registered once.

use toolport_protocol::{ErrorCode, completion, lifecycle, logging, prompts, resources, subscriptions, tools};

/// One request counted in `toolport_requests_in_flight` while it lives.
pub(crate) struct InFlight<'a>(&'a metrics::Gauge);

impl<'a> InFlight<'a> {
    pub(crate) fn enter(gauge: &'a metrics::Gauge) -> Self {
        gauge.increment(1.0);
        InFlight(gauge)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// The metric handles of every method, registered once: a request then
/// neither builds labels nor looks them up (errors, rarer, still do).
#[derive(Debug)]
pub(crate) struct MethodMetrics {
    pub(crate) in_flight: metrics::Gauge,
    by_method: Vec<(&'static str, OneMethod)>,
}

#[derive(Debug)]
pub(crate) struct OneMethod {
    pub(crate) ok: metrics::Counter,
    pub(crate) duration: metrics::Histogram,
}

impl MethodMetrics {
    pub(crate) fn all() -> Self {
        let one = |method: &'static str| OneMethod {
            ok: metrics::counter!("toolport_requests_total", "method" => method, "outcome" => "ok"),
            duration: metrics::histogram!("toolport_request_duration_seconds", "method" => method),
        };
        MethodMetrics {
            in_flight: metrics::gauge!("toolport_requests_in_flight"),
            by_method: CORE_METHODS
                .iter()
                .chain(["other"].iter())
                .map(|m| (*m, one(m)))
                .collect(),
        }
    }

    pub(crate) fn of(&self, method: &str) -> &OneMethod {
        let found = self.by_method.iter().find(|(m, _)| *m == method);
        &found
            .unwrap_or_else(|| self.by_method.last().expect("other is always there"))
            .1
    }
}

/// The methods of the core protocol, in both eras: extensions cannot redefine them.
pub(crate) const CORE_METHODS: &[&str] = &[
    lifecycle::INITIALIZE,
    lifecycle::PING,
    lifecycle::DISCOVER,
    logging::SET_LEVEL,
    tools::LIST,
    tools::CALL,
    resources::LIST,
    resources::TEMPLATES_LIST,
    resources::READ,
    resources::SUBSCRIBE,
    resources::UNSUBSCRIBE,
    prompts::LIST,
    prompts::GET,
    completion::COMPLETE,
    subscriptions::LISTEN,
];

/// The method as a metrics label: known methods by name, anything else as
/// `other`, so a client cannot grow the label set without bound.
pub(crate) fn known_method(method: &str) -> &'static str {
    CORE_METHODS.iter().copied().find(|m| *m == method).unwrap_or("other")
}

/// An error code as a metrics label, without allocating.
pub(crate) fn error_label(code: ErrorCode) -> &'static str {
    match code.0 {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32001 => "-32001",
        -32002 => "-32002",
        -32010 => "-32010",
        -32020 => "-32020",
        -32021 => "-32021",
        -32022 => "-32022",
        _ => "other",
    }
}

/// Counts a request refused before it was answered (malformed, wrong era,
/// forbidden), by method and error code.
pub(crate) fn count_refusal(method: &'static str, code: ErrorCode) {
    metrics::counter!("toolport_requests_total", "method" => method, "outcome" => error_label(code)).increment(1);
}

/// The reasons a call is refused for overload, as `toolport_rejections_total` labels.
const REJECTION_REASONS: &[&str] = &["queue_full", "queue_timeout", "rate_limited"];

/// Declares the `# HELP` text and unit of every series the server records.
pub(crate) fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        "toolport_requests_total",
        "JSON-RPC requests answered, by method and outcome (ok or the JSON-RPC error code)"
    );
    describe_histogram!(
        "toolport_request_duration_seconds",
        Unit::Seconds,
        "Time from admission to answer of a JSON-RPC request, by method"
    );
    describe_gauge!("toolport_requests_in_flight", "JSON-RPC requests being answered now");
    describe_counter!(
        "toolport_tool_calls_total",
        "Tool calls that passed admission, by tool and outcome (ok, tool_error, error, other)"
    );
    describe_histogram!(
        "toolport_tool_call_duration_seconds",
        Unit::Seconds,
        "Time a tool call took, policies included, by tool"
    );
    describe_histogram!(
        "toolport_queue_wait_seconds",
        Unit::Seconds,
        "Time calls waited in a concurrency gate's queue"
    );
    describe_counter!(
        "toolport_rejections_total",
        "Tool calls refused for overload, by reason (queue_full, queue_timeout, rate_limited)"
    );
    describe_counter!(
        "toolport_deadlines_exceeded_total",
        "Tool calls stopped at their deadline, by tool"
    );
    describe_counter!(
        "toolport_panics_total",
        "Panics contained and answered -32603, by where (tool, request, http)"
    );
    for site in PANIC_SITES {
        metrics::counter!("toolport_panics_total", "site" => *site).increment(0);
    }
}

/// Where `toolport_rpc::panic::contain` catches panics, as labels.
const PANIC_SITES: &[&str] = &["tool", "request", "http"];

/// Creates a tool's series that are not made with its handles at zero, so
/// they are scraped before its first call.
pub(crate) fn register_tool(name: &str) {
    metrics::counter!("toolport_deadlines_exceeded_total", "tool" => name.to_owned()).increment(0);
    for reason in REJECTION_REASONS {
        metrics::counter!("toolport_rejections_total", "reason" => *reason).increment(0);
    }
    let _ = metrics::histogram!("toolport_queue_wait_seconds");
}
