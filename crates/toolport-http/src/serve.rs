//! Listening: accept connections, serve HTTP/1.1 on each, shut down gracefully.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use toolport_server::Server;

use crate::auth::Authenticator;
use crate::config::HttpConfig;
use crate::endpoint::route;
use crate::mount::Mount;
use crate::ready::ReadinessCheck;
use crate::state::AppState;
use crate::store::{EventLog, MemoryEventLog, MemorySessionStore, SessionStore};

/// Latency histogram buckets of [`HttpServer::prometheus`], in seconds: from
/// sub-millisecond tool calls to the five-minute default deadline.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// How often pending histogram samples are folded into the Prometheus
/// recorder: often enough that their buffers stay small and warm.
const METRICS_UPKEEP: Duration = Duration::from_secs(1);

/// A Streamable HTTP server for a [`Server`].
///
/// ```no_run
/// # async fn run(server: toolport_server::Server) -> std::io::Result<()> {
/// use toolport_http::{HttpConfig, HttpServer};
/// let bound = HttpServer::new(server, HttpConfig::default()).bind().await?;
/// println!("listening on http://{}/mcp", bound.local_addr());
/// bound.serve(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
pub struct HttpServer {
    state: Arc<AppState>,
    mount: Option<Arc<dyn Mount>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("bind", &self.state.config.bind)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// With sessions and events kept in memory.
    pub fn new(server: Server, config: HttpConfig) -> Self {
        let events = Arc::new(MemoryEventLog::new(config.events_per_stream));
        HttpServer::with_stores(server, config, Arc::new(MemorySessionStore::default()), events)
    }

    /// With the given stores (for example shared ones, across replicas).
    /// The request path awaits them, so a store that waits for a round trip
    /// holds up only the requests that need it, on any tokio runtime; one
    /// that fails answers those requests 503.
    pub fn with_stores(
        server: Server,
        config: HttpConfig,
        sessions: Arc<dyn SessionStore>,
        events: Arc<dyn EventLog>,
    ) -> Self {
        HttpServer {
            state: AppState::new(server, config, sessions, events),
            mount: None,
        }
    }

    /// Serves Prometheus metrics at `/metrics`, rendered by `render` (for
    /// example a `metrics-exporter-prometheus` handle's `render`).
    pub fn metrics(self, render: impl Fn() -> String + Send + Sync + 'static) -> Self {
        let _ = self.state.metrics.set(Arc::new(render));
        self
    }

    /// Installs a Prometheus recorder as the process's metrics recorder and
    /// serves it at `/metrics`. Latency is recorded in bucketed histograms
    /// ([`LATENCY_BUCKETS`]: they add up across replicas, and a sample costs a
    /// bucket increment), and pending samples are folded in every second, so
    /// a server nobody scrapes does not grow with every call. Call it inside
    /// a tokio runtime (it spawns that upkeep).
    pub fn prometheus(self) -> Result<Self, metrics_exporter_prometheus::BuildError> {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
            .set_buckets(LATENCY_BUCKETS)?
            .install_recorder()?;
        // Every series is declared and present from start-up, not from the
        // first request that touches it.
        self.state.server.register_metrics();
        describe_transport_metrics();
        let upkeep = recorder.clone();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(METRICS_UPKEEP);
            loop {
                ticker.tick().await;
                upkeep.run_upkeep();
            }
        });
        let info = self.state.server.info();
        let (name, version) = (info.name.clone(), info.version.clone());
        Ok(self.metrics(move || {
            let mut text = recorder.render();
            text.push_str(&crate::process::render(&name, &version));
            text
        }))
    }

    /// Serves `mount`'s paths beside the endpoint (the web console), behind
    /// the same Origin, Host and authentication checks (see [`crate::mount`]).
    pub fn with_mount(mut self, mount: Arc<dyn Mount>) -> Self {
        self.mount = Some(mount);
        self
    }

    /// Protects the endpoint: every request is authenticated before it is
    /// processed, authorized per JSON-RPC request, and lists are trimmed to
    /// what the caller may use (see [`Authenticator`]).
    pub fn with_authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        Arc::get_mut(&mut self.state)
            .expect("the state is not shared before the server is bound")
            .auth = Some(authenticator);
        self
    }

    /// Shares handshake-era sessions with other replicas through `relay`
    /// (with stores the replicas share, see [`HttpServer::with_stores`]): a
    /// client's answer or cancellation reaching this replica for a request
    /// another one runs is relayed there, and a stream another replica runs
    /// can be resumed here. On shutdown, answer streams end after the drain
    /// delay, so their clients resume on a replica that stays.
    pub fn with_relay(mut self, relay: Arc<dyn toolport_server::state::Relay>) -> Self {
        Arc::get_mut(&mut self.state)
            .expect("the state is not shared before the server is bound")
            .relay = Some(relay);
        self
    }

    /// Adds a dependency that `/ready` checks (a database, a shared state
    /// store): the replica is ready only while every check passes. See
    /// [`crate::ready`] for how often checks run and how long they may take.
    pub fn with_readiness_check(mut self, check: Arc<dyn ReadinessCheck>) -> Self {
        Arc::get_mut(&mut self.state)
            .expect("the state is not shared before the server is bound")
            .readiness
            .add(check);
        self
    }

    /// Binds the listening socket.
    pub async fn bind(self) -> std::io::Result<BoundServer> {
        let listener = TcpListener::bind(self.state.config.bind).await?;
        Ok(BoundServer {
            listener,
            state: self.state,
            mount: self.mount,
        })
    }
}

/// Declares the transport's own series and creates them at zero.
fn describe_transport_metrics() {
    metrics::describe_gauge!("toolport_sessions", "Handshake-era sessions in the session store");
    metrics::describe_counter!(
        "toolport_stream_disconnects_total",
        "SSE answer streams cut off on the server's side, by reason (slow_consumer, client_gone)"
    );
    metrics::gauge!("toolport_sessions").set(0.0);
    for reason in ["slow_consumer", "client_gone"] {
        metrics::counter!("toolport_stream_disconnects_total", "reason" => reason).increment(0);
    }
}

/// A server with its socket bound, ready to serve.
pub struct BoundServer {
    listener: TcpListener,
    state: Arc<AppState>,
    mount: Option<Arc<dyn Mount>>,
}

impl std::fmt::Debug for BoundServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundServer")
            .field("local_addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

impl BoundServer {
    /// The address it listens on (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound socket has an address")
    }

    /// Serves until `shutdown` resolves, then drains:
    ///
    /// 1. `/ready` fails at once, and answers say `Connection: close`, so a
    ///    load balancer stops routing here and keep-alive clients reconnect
    ///    elsewhere; the server serves on for [`HttpConfig::drain_delay`];
    /// 2. it stops accepting (serving the connections already queued in the
    ///    kernel first, so none is reset unanswered), ends listen streams and
    ///    standalone GET streams so their clients resume elsewhere;
    /// 3. in-flight requests get [`HttpConfig::shutdown_grace`] to finish;
    ///    whatever is left then is cut off.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let BoundServer { listener, state, mount } = self;
        let reaper = tokio::spawn(reap(state.clone()));
        let mut connections = Connections {
            state: state.clone(),
            mount,
            graceful: GracefulShutdown::new(),
            tasks: tokio::task::JoinSet::new(),
        };
        connections.accept_until(&listener, shutdown).await;
        state.shutdown.cancel();
        if !state.config.drain_delay.is_zero() {
            tracing::info!(
                drain_ms = state.config.drain_delay.as_millis() as u64,
                "draining: /ready fails, still serving"
            );
            connections
                .accept_until(&listener, tokio::time::sleep(state.config.drain_delay))
                .await;
        }
        connections.accept_queued(listener);
        state.server.shutdown();
        state.end_standalone_streams();
        let Connections {
            graceful, mut tasks, ..
        } = connections;
        let grace = tokio::time::Instant::now() + state.config.shutdown_grace;
        if tokio::time::timeout_at(grace, graceful.shutdown()).await.is_err() {
            tracing::warn!(
                open = tasks.len(),
                "connections still open after the shutdown grace period were closed"
            );
        }
        // Handshake-era requests whose answer streams ended (their clients
        // resume elsewhere) run on without a connection: they get the rest
        // of the grace period too.
        if tokio::time::timeout_at(grace, state.requests_finished()).await.is_err() {
            tracing::warn!("requests still running after the shutdown grace period were cancelled");
        }
        state.close_all();
        reaper.abort();
        // Whatever is left (a stream that never ends) is stopped, not leaked.
        tasks.shutdown().await;
        Ok(())
    }
}

/// The connections being served, each watched for the graceful shutdown.
struct Connections {
    state: Arc<AppState>,
    /// Paths served beside the endpoint (the console), if any.
    mount: Option<Arc<dyn Mount>>,
    graceful: GracefulShutdown,
    tasks: tokio::task::JoinSet<()>,
}

impl Connections {
    /// Accepts and serves connections until `stop` resolves.
    async fn accept_until(&mut self, listener: &TcpListener, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: keep serving
                        // the connections we have, try again shortly.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                _ = &mut stop => return,
            };
            self.serve(stream, peer);
        }
    }

    /// Stops listening. Connections the kernel already completed are still
    /// in its queue: closing the socket would reset them after their client
    /// sent a request, which a proxy may not retry (a POST), so they are
    /// taken and served first.
    fn accept_queued(&mut self, listener: TcpListener) {
        let listener = match listener.into_std() {
            Ok(listener) => listener,
            Err(e) => {
                tracing::warn!(error = %e, "queued connections not taken before closing the socket");
                return;
            }
        };
        // `into_std` leaves the socket non-blocking: `accept` says when the queue is empty.
        while let Ok((stream, peer)) = listener.accept() {
            match TcpStream::from_std(stream) {
                Ok(stream) => self.serve(stream, peer),
                Err(e) => tracing::warn!(%peer, error = %e, "queued connection dropped"),
            }
        }
    }

    /// Serves HTTP/1.1 on one connection, in its own task.
    fn serve(&mut self, stream: TcpStream, peer: SocketAddr) {
        // Answers go out as soon as they are written (no 40 ms Nagle wait).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
        let max_head = self.state.config.max_header_bytes.max(8192);
        let (state, mount) = (self.state.clone(), self.mount.clone());
        let service = service_fn(move |request| {
            let state = state.clone();
            // Boxed: hyper keeps a connection's in-flight future in one slot,
            // and a 2 KB future written there per request across many
            // connections is written to cold cache lines; a heap block the
            // allocator just freed is warm.
            // A panic anywhere on the way is a 500 with -32603 for this
            // request, not a connection dropped under its other requests.
            let answer = Box::pin(toolport_rpc::panic::contain(
                "http",
                route(state.clone(), mount.clone(), request),
            ));
            async move {
                let mut answer = answer.await.unwrap_or_else(|panicked| {
                    crate::reply::error(http::StatusCode::INTERNAL_SERVER_ERROR, None, panicked.error())
                });
                // Draining: the client's next request goes to a new connection,
                // which the load balancer sends to a replica that stays.
                if state.shutdown.is_cancelled() {
                    answer
                        .headers_mut()
                        .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(answer)
            }
        });
        let connection = http1::Builder::new()
            .max_buf_size(max_head)
            .serve_connection(TokioIo::new(stream), service);
        let connection = self.graceful.watch(connection);
        // Finished connections are reaped as new ones arrive, so the set stays small.
        while self.tasks.try_join_next().is_some() {}
        self.tasks.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}

/// Ends idle sessions, checking a few times per timeout period.
async fn reap(state: Arc<AppState>) {
    let period = (state.config.session_idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    let mut ticker = tokio::time::interval(period);
    loop {
        ticker.tick().await;
        match state.reap().await {
            Ok(0) => {}
            Ok(reaped) => tracing::debug!(reaped, "idle sessions ended"),
            Err(e) => tracing::warn!(error = %e, "idle sessions not reaped"),
        }
    }
}
