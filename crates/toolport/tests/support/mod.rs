//! A plain hyper HTTP/1.1 client for the raw HTTP tests: exact headers in,
//! status, headers and body (or body frames, for streams) out.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::net::TcpStream;
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::Server;

/// A running in-process server.
pub struct TestServer {
    pub addr: SocketAddr,
    pub server: Server,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub done: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    pub async fn start(server: Server, config: HttpConfig) -> TestServer {
        let config = HttpConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..config
        };
        let bound = HttpServer::new(server.clone(), config).bind().await.unwrap();
        let addr = bound.local_addr();
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let done = tokio::spawn(bound.serve(async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            server,
            stop: Some(stop),
            done,
        }
    }

    pub async fn demo(config: HttpConfig) -> TestServer {
        TestServer::start(toolport::demo::server(), config).await
    }

    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// A response whose body is read frame by frame.
pub struct Streaming {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Incoming,
    buffer: String,
}

impl Streaming {
    /// The next SSE event (lines up to a blank line), or `None` at the end.
    pub async fn next_event(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event = self.buffer[..end].to_owned();
                self.buffer.drain(..end + 2);
                return Some(event);
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("a frame within 10 s")?;
            let frame = frame.expect("body frame");
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).expect("UTF-8 stream"));
            }
        }
    }

    /// The next event that carries JSON data, parsed, with its id.
    pub async fn next_message(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            let event = self.next_event().await?;
            let id = event.lines().find_map(|l| l.strip_prefix("id: ")).map(str::to_owned);
            let data = event.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or("");
            if !data.is_empty() {
                return Some((id, serde_json::from_str(data).unwrap()));
            }
        }
    }

    /// The whole remaining body.
    pub async fn text(self) -> String {
        let bytes = self.body.collect().await.unwrap().to_bytes();
        let mut text = self.buffer;
        text.push_str(std::str::from_utf8(&bytes).unwrap());
        text
    }
}

/// Sends one request on a fresh connection and returns the response head
/// with its body still streaming.
pub async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Streaming {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut request = Request::builder().method(method).uri("/mcp");
    let has_host = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host"));
    if !has_host {
        request = request.header("host", addr.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let response = sender.send_request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    Streaming {
        status: parts.status,
        headers: parts.headers,
        body,
        buffer: String::new(),
    }
}

/// Sends a request and reads the whole body as JSON (`Value::Null` if empty).
pub async fn call(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, HeaderMap, Value) {
    let response = send(addr, method, headers, body).await;
    let (status, headers) = (response.status, response.headers.clone());
    let text = response.text().await;
    let json = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, headers, json)
}

pub const JSON: (&str, &str) = ("content-type", "application/json");
pub const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

/// The headers of a 2026-07-28 request.
pub fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if let Some(name) = name {
        h.push(("mcp-name", name));
    }
    h
}

pub const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The headers of a handshake-era (2025-11-25) request in a session.
pub fn legacy_headers(session: &str) -> Vec<(&str, &str)> {
    vec![
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", session),
    ]
}

/// Initializes a handshake-era session; returns its id.
pub async fn initialize(addr: SocketAddr, version: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
    );
    let (status, headers, answer) = call(addr, "POST", &[JSON, ACCEPT], &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], version);
    let session = headers
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_owned();
    let (status, _, _) = call(
        addr,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("mcp-session-id", &session),
            ("mcp-protocol-version", version),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    session
}

/// The demo server's `demo://jobs` counters (long_task runs started,
/// completed, cancelled).
pub async fn jobs(s: &TestServer) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"j","method":"resources/read","params":{{"uri":"demo://jobs",{MODERN_META}}}}}"#
    );
    let (_, _, answer) = call(
        s.addr,
        "POST",
        &modern_headers("resources/read", Some("demo://jobs")),
        &body,
    )
    .await;
    serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
}

/// Waits (at most 10 s) until the demo server's `long_task` has started
/// `count` runs in all: a request is known to be in flight before a test
/// stops the server or cuts the connection.
pub async fn until_started(s: &TestServer, count: u64) {
    for _ in 0..2000 {
        if jobs(s).await["started"].as_u64() == Some(count) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("long_task did not start {count} run(s) within 10 s");
}

/// The Python with PyPI `mcp` installed: `.venv` at the repository root
/// (made by `.ci/run`), or `TOOLPORT_PYTHON`.
pub fn python() -> PathBuf {
    std::env::var_os("TOOLPORT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"))
}

/// A `toolport serve` child, killed when dropped (also when a test fails).
pub struct Served(pub Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolport serve` (the command holds the binary and any arguments
/// after `serve`) on a free port; the child and its URL.
pub fn spawn_serve(command: &mut Command) -> (Served, String) {
    let program = command.get_program().to_owned();
    let extra: Vec<_> = command.get_args().map(|a| a.to_owned()).collect();
    let mut child = Command::new(program)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .envs(
            command
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolport serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("toolport prints where it listens").unwrap();
    let url = first
        .split(" at ")
        .nth(1)
        .unwrap_or_else(|| panic!("a URL on the first line: {first}"))
        .trim()
        .to_owned();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (Served(child), url)
}

/// Runs a script of `tests/interop` with the Python SDK; asserts it
/// succeeded and returns the JSON of its last line (what it saw).
pub fn run_python(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(script);
    let output = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .expect("run the Python SDK client (is .venv set up? see .ci/run)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}
