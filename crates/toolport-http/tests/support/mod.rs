//! What the endpoint tests share: a server on a loopback port with the
//! stores a test gives it, and a small hyper client that sends exact
//! headers and reads answers whole or event by event.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::net::TcpStream;
use toolport_http::store::{EventLog, SessionStore};
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::Server;

/// How long a test waits for anything before it fails instead of hanging.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The protocol version the tests speak (handshake era).
pub const VERSION: &str = "2025-11-25";

/// A server serving on a loopback port until dropped.
pub struct Running {
    pub addr: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Serves `server` with the given stores on a free loopback port.
pub async fn serve(
    server: Server,
    config: HttpConfig,
    sessions: Arc<dyn SessionStore>,
    events: Arc<dyn EventLog>,
) -> Running {
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..config
    };
    let bound = HttpServer::with_stores(server, config, sessions, events)
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

/// A response whose body is still arriving.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: Incoming,
    unread: String,
}

impl Answer {
    /// The whole body as JSON (`Null` when empty).
    pub async fn json(self) -> Value {
        let bytes = tokio::time::timeout(PATIENCE, self.body.collect())
            .await
            .expect("the body within the patience")
            .unwrap()
            .to_bytes();
        if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        }
    }

    /// The next SSE event carrying data: its id and its JSON; `None` when
    /// the stream ends.
    pub async fn next_message(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            let event = self.next_event().await?;
            let id = event.lines().find_map(|l| l.strip_prefix("id: ")).map(str::to_owned);
            match event.lines().find_map(|l| l.strip_prefix("data: ")) {
                Some(data) if !data.is_empty() => return Some((id, serde_json::from_str(data).unwrap())),
                _ => {} // the priming event, a keep-alive comment
            }
        }
    }

    /// The next SSE event's lines, or `None` when the stream ends.
    pub async fn next_event(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.unread.find("\n\n") {
                let event = self.unread[..end].to_owned();
                self.unread.drain(..end + 2);
                return Some(event);
            }
            let frame = tokio::time::timeout(PATIENCE, self.body.frame())
                .await
                .expect("an event within the patience")?
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.unread.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }
}

/// Sends one request on a connection of its own.
pub async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", addr.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let response = tokio::time::timeout(PATIENCE, sender.send_request(request))
        .await
        .expect("a response head within the patience")
        .unwrap();
    let (parts, body) = response.into_parts();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body,
        unread: String::new(),
    }
}

/// The headers of a POST without a session.
pub fn fresh() -> Vec<(&'static str, &'static str)> {
    vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ]
}

/// The headers of a POST (or DELETE) in a session.
pub fn in_session(session: &str) -> Vec<(&str, &str)> {
    let mut headers = fresh();
    headers.push(("mcp-protocol-version", VERSION));
    headers.push(("mcp-session-id", session));
    headers
}

/// The headers of a GET of a session's stream.
pub fn reading(session: &str) -> Vec<(&str, &str)> {
    vec![
        ("accept", "text/event-stream"),
        ("mcp-protocol-version", VERSION),
        ("mcp-session-id", session),
    ]
}

/// An `initialize` request.
pub fn initialize_request() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"test","version":"1"}}}}}}"#
    )
}

/// Opens a session (`initialize`, then `notifications/initialized`).
pub async fn open_session(addr: SocketAddr) -> String {
    let answer = send(addr, "POST", &fresh(), &initialize_request()).await;
    assert_eq!(answer.status, StatusCode::OK);
    let session = answer
        .headers
        .get("mcp-session-id")
        .expect("initialize names the session")
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let answer = send(addr, "POST", &in_session(&session), initialized).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    session
}

/// A request body.
pub fn request(id: u64, method: &str, params: Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Sends on a channel when dropped: a handler's future was dropped, which
/// is what cancelling it does.
pub struct OnDrop(pub tokio::sync::mpsc::UnboundedSender<()>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Waits (within the patience) for a signal on `rx`.
pub async fn signalled(rx: &mut tokio::sync::mpsc::UnboundedReceiver<()>) {
    tokio::time::timeout(PATIENCE, rx.recv())
        .await
        .expect("the signal within the patience")
        .expect("the server still runs");
}
