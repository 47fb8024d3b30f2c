//! Export of request spans to an OpenTelemetry collector over OTLP/HTTP
//! (protobuf), when `[telemetry] otlp_endpoint` is set.
//!
//! Every request runs in an `mcp.request` span (method, request id, session,
//! tool, trace id); when its `_meta` carries a W3C `traceparent`, the span
//! continues that trace. Spans are batched by a background thread and
//! flushed when the server stops.

use anyhow::{Context, Result};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

use crate::config::TelemetrySection;

/// The traces path an OTLP/HTTP collector listens on.
const TRACES_PATH: &str = "/v1/traces";

/// Spans the exporter receives: Toolport's own at debug and above, others at info.
const EXPORTED: &str = "toolport=debug,toolport_server=debug,toolport_http=debug,toolport_packs=debug,info";

/// A running exporter; [`Telemetry::shutdown`] flushes what is still queued.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Telemetry {
    /// Starts the exporter for `section` (`None` when no endpoint is set) and
    /// the tracing layer that feeds it.
    pub fn start<S>(section: &TelemetrySection) -> Result<Option<(Telemetry, impl Layer<S> + use<S>)>>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let Some(endpoint) = &section.otlp_endpoint else {
            return Ok(None);
        };
        let url = traces_url(endpoint);
        let exporter = SpanExporter::builder()
            .with_http()
            .with_endpoint(url.clone())
            .build()
            .with_context(|| format!("telemetry.otlp_endpoint = {endpoint:?}: cannot build the OTLP exporter"))?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(
                Resource::builder()
                    .with_service_name(section.service_name.clone())
                    .build(),
            )
            .build();
        let tracer = provider.tracer("toolport");
        let filter = tracing_subscriber::EnvFilter::new(EXPORTED);
        let layer = tracing_opentelemetry::layer().with_tracer(tracer).with_filter(filter);
        Ok(Some((Telemetry { provider }, layer)))
    }

    /// Exports what is queued and stops the exporter.
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("toolport: telemetry: could not flush the last spans: {e}");
        }
    }
}

/// The collector's base URL with the traces path (kept when already there).
fn traces_url(endpoint: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    if base.ends_with(TRACES_PATH) {
        base.to_owned()
    } else {
        format!("{base}{TRACES_PATH}")
    }
}

#[cfg(test)]
mod tests {
    use super::traces_url;

    #[test]
    fn the_traces_path_is_added_once() {
        assert_eq!(traces_url("http://127.0.0.1:4318"), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
    }
}
