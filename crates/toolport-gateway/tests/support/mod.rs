//! A gateway served over HTTP on 127.0.0.1 in the test's process.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use toolport_client::{Client, ClientOptions, VersionPolicy, handler::Canned};
use toolport_gateway::{Gateway, GatewaySection, RestartSection, UpstreamConfig};
use toolport_http::{HttpConfig, HttpServer};
use toolport_protocol::ProtocolVersion;
use toolport_server::Server;

pub struct Running {
    pub url: String,
    pub base: String,
    pub gateway: Gateway,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Running {
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.gateway.stop().await;
    }
}

/// Restarts quick enough for a test.
pub fn quick_restarts() -> RestartSection {
    RestartSection {
        initial_backoff_ms: 50,
        max_backoff_ms: 200,
        healthy_after_seconds: 30,
        crash_loop_after: 3,
        stop_grace_ms: 500,
    }
}

/// The fixture server as a stdio upstream.
pub fn fixture(name: &str) -> UpstreamConfig {
    UpstreamConfig {
        restart: quick_restarts(),
        timeout_seconds: 20,
        ..UpstreamConfig::stdio(name, env!("CARGO_BIN_EXE_toolport-gateway-fixture"), &[])
    }
}

pub async fn start(upstreams: Vec<UpstreamConfig>) -> Running {
    start_with(GatewaySection::default(), upstreams, false).await
}

pub async fn start_with(section: GatewaySection, upstreams: Vec<UpstreamConfig>, metrics: bool) -> Running {
    let server = Server::builder("gateway-under-test", "1.0.0").build().unwrap();
    serve(server, section, upstreams, metrics).await
}

/// The gateway with `limits` (`[limits]`) and the upstreams' own limits
/// merged in, as `toolport serve` does.
pub async fn start_limited(limits: toolport_server::policy::PolicyConfig, upstreams: Vec<UpstreamConfig>) -> Running {
    let section = GatewaySection::default();
    let empty = Default::default();
    let (limits, _) = toolport_gateway::policy::layers(&limits, (&empty, &empty), &section, &upstreams).unwrap();
    let server = Server::builder("gateway-under-test", "1.0.0")
        .policies(limits)
        .build()
        .unwrap();
    serve(server, section, upstreams, false).await
}

async fn serve(server: Server, section: GatewaySection, upstreams: Vec<UpstreamConfig>, metrics: bool) -> Running {
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::default()
    };
    let mut http = HttpServer::new(server.clone(), config);
    if metrics {
        http = http.prometheus().unwrap();
    }
    let gateway = Gateway::start(section, upstreams, &server)
        .await
        .expect("the gateway starts");
    let bound = http
        .with_readiness_check(std::sync::Arc::new(gateway.clone()))
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = bound
            .serve(async move {
                let _ = rx.await;
            })
            .await;
    });
    Running {
        url: format!("http://{addr}/mcp"),
        base: format!("http://{addr}"),
        gateway,
        stop: Some(tx),
    }
}

/// A Toolport client of the gateway in `version`'s era (None: 2026-07-28 by discovery).
pub async fn client(url: &str, version: Option<ProtocolVersion>) -> Client {
    client_with(url, version, None).await
}

/// [`client`], sending `token` as its bearer token.
pub async fn client_with(url: &str, version: Option<ProtocolVersion>, token: Option<&str>) -> Client {
    let options = ClientOptions {
        version: version.map_or(VersionPolicy::Auto, VersionPolicy::Pinned),
        request_timeout: Duration::from_secs(30),
        ..ClientOptions::default()
    };
    let mut builder = Client::http(url).options(options).handler(Canned::default());
    if let Some(token) = token {
        builder = builder.auth(toolport_client::StaticToken::new(token));
    }
    builder.connect().await.expect("connects to the gateway")
}

/// The HTTP settings of a server on a free loopback port.
pub fn loopback() -> HttpConfig {
    HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::default()
    }
}

/// Serves `http` until the test ends; its MCP endpoint's URL.
pub async fn serve_http(http: HttpServer) -> String {
    let bound = http.bind().await.unwrap();
    let url = format!("http://{}/mcp", bound.local_addr());
    tokio::spawn(bound.serve(std::future::pending()));
    url
}

/// Every log line of the test binary from now on, at TRACE (once per binary).
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    pub fn start() -> Captured {
        static ONCE: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
        ONCE.get_or_init(|| {
            let captured = Captured::default();
            let writer = captured.clone();
            tracing_subscriber::fmt()
                .with_max_level(tracing::Level::TRACE)
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .init();
            captured
        })
        .clone()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn text(result: &toolport_protocol::tools::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok()?.get("text")?.as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("")
}

/// GETs a path of the gateway: status and body.
pub async fn get(base: &str, path: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8_lossy(&response).to_string();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
    (status, body)
}

/// Waits, a bounded number of times, until `check` holds.
pub async fn eventually<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened within 10 s: {what}");
}
