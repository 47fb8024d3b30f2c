//! W3C trace context for OpenTelemetry: a request whose `_meta` carries a
//! `traceparent` (and maybe a `tracestate`) gets a span that continues the
//! caller's trace, so an OTLP backend shows the tool call under the agent's
//! own span.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use toolport_protocol::meta::keys;

/// Makes the caller's span (from `params._meta`) the parent of `span`.
/// Without a valid `traceparent` nothing changes: the span starts a trace.
pub(crate) fn adopt_parent(span: &tracing::Span, meta: &toolport_protocol::meta::Meta) {
    let carrier: HashMap<String, String> = [keys::TRACEPARENT, "tracestate"]
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), meta.get(key)?.as_str()?.to_owned())))
        .collect();
    if carrier.contains_key(keys::TRACEPARENT) {
        let parent = TraceContextPropagator::new().extract(&carrier);
        // Fails only when the span is disabled or already started; either way
        // there is nothing to continue.
        let _ = span.set_parent(parent);
    }
}
