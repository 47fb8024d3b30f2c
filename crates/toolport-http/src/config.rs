//! Settings of the Streamable HTTP endpoint.

use std::net::SocketAddr;
use std::time::Duration;

/// How answers to requests are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseMode {
    /// JSON, switching to an SSE stream only when the request sends
    /// notifications (progress, logs) or requests back before its answer.
    Auto,
    /// Always an SSE stream (when the client accepts one).
    Sse,
}

/// Settings of the HTTP transport. The defaults are safe for a local server.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Where to listen: 127.0.0.1:8080 unless told otherwise.
    pub bind: SocketAddr,
    /// The MCP endpoint's path.
    pub path: String,
    /// Origins allowed besides loopback ones (`http://localhost:3000`, ...).
    /// `*` allows any. A request with an `Origin` not allowed gets 403.
    pub allowed_origins: Vec<String>,
    /// Host names (without port) a request may address. `None`: loopback
    /// names when bound to a loopback address (DNS-rebinding protection),
    /// any otherwise.
    pub allowed_hosts: Option<Vec<String>>,
    /// Also allow an `Origin` naming the request's own `Host` (a page this
    /// server served, such as the console), when the Host itself is checked:
    /// a loopback-bound server, or one with `allowed_hosts`. Off by default.
    pub same_origin: bool,
    /// Largest request body; more gets 413.
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers) the connection
    /// buffers; more gets 431. At least 8 KiB.
    pub max_header_bytes: usize,
    /// Handshake-era sessions with `Mcp-Session-Id`. Off: every handshake-era
    /// request stands alone, so any replica can serve it.
    pub sessions: bool,
    /// How long an unused session lives.
    pub session_idle_timeout: Duration,
    /// Most sessions at once; `initialize` beyond it gets 503.
    pub max_sessions: usize,
    /// Interval of `: keep-alive` comments on idle SSE streams, so proxies
    /// with 30–60 s idle timeouts do not cut them.
    pub keep_alive: Duration,
    /// The `retry:` hint sent with the priming event of a handshake-era stream.
    pub sse_retry: Duration,
    /// JSON or SSE answers.
    pub response_mode: ResponseMode,
    /// Events kept per stream for `Last-Event-ID` resumption.
    pub events_per_stream: usize,
    /// How long the server keeps serving after it was told to stop, with
    /// `/ready` already failing, so that a load balancer stops routing to it
    /// before it stops accepting connections. Zero (the default here) for a
    /// server that no load balancer watches; `toolport serve` drains 5 s.
    pub drain_delay: Duration,
    /// How long in-flight requests may take to finish once the server stopped
    /// accepting; then whatever is left is cut off.
    pub shutdown_grace: Duration,
    /// The longest a `/ready` probe waits for the readiness checks
    /// ([`ReadinessCheck`](crate::ReadinessCheck)); a check still running
    /// then counts as failed.
    pub readiness_timeout: Duration,
    /// Messages buffered per answer stream; a client that reads slower than
    /// this is cut off rather than buffered without bound.
    pub stream_buffer: usize,
    /// How long a handshake-era request whose answer stream lost its reader
    /// keeps running, waiting for the client to resume with `Last-Event-ID`,
    /// before it is cancelled; also how long a finished stream stays
    /// resumable (at most 4096 of them per session).
    pub resume_grace: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            path: "/mcp".into(),
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            same_origin: false,
            max_body_bytes: 4 * 1024 * 1024,
            max_header_bytes: 16 * 1024,
            sessions: true,
            session_idle_timeout: Duration::from_secs(300),
            max_sessions: 10_000,
            keep_alive: Duration::from_secs(15),
            sse_retry: Duration::from_secs(1),
            response_mode: ResponseMode::Auto,
            events_per_stream: 1024,
            drain_delay: Duration::ZERO,
            shutdown_grace: Duration::from_secs(30),
            readiness_timeout: Duration::from_secs(2),
            stream_buffer: 256,
            resume_grace: Duration::from_secs(3),
        }
    }
}
