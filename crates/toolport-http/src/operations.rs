//! The endpoints for whoever runs the server rather than for MCP clients:
//! health, readiness and metrics.

use http::{HeaderValue, Method, Request, StatusCode};
use hyper::body::Incoming;

use crate::reply::{self, HttpResponse};
use crate::state::AppState;

/// The endpoints for whoever runs the server: `/health` (the process
/// answers), `/ready` (it takes traffic; 503 while draining or when a
/// readiness check fails, see [`crate::ready`]) and `/metrics` (Prometheus
/// text, when a recorder is installed).
pub(crate) async fn serve(state: &AppState, request: &Request<Incoming>) -> HttpResponse {
    if request.method() != Method::GET {
        return reply::status(StatusCode::NOT_FOUND);
    }
    let text = |status: StatusCode, body: String, content_type: &'static str| {
        let mut response = http::Response::new(crate::body::McpBody::full(body));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    };
    match request.uri().path() {
        "/health" => text(StatusCode::OK, "ok\n".into(), "text/plain"),
        "/ready" if state.shutdown.is_cancelled() => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "draining: shutting down\n".into(),
            "text/plain",
        ),
        "/ready" => match state.readiness.verdict().await {
            None => text(StatusCode::OK, "ready\n".into(), "text/plain"),
            Some(failures) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready\n{failures}\n"),
                "text/plain",
            ),
        },
        "/metrics" => match state.metrics.get() {
            Some(render) => text(StatusCode::OK, render(), "text/plain; version=0.0.4"),
            None => reply::status(StatusCode::NOT_FOUND),
        },
        _ => reply::status(StatusCode::NOT_FOUND),
    }
}
