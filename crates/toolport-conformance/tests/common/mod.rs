//! An in-memory client for the fixture: newline-delimited JSON-RPC over a
//! `tokio::io::duplex` pair, served by `Server::serve_transport`.
//!
//! Every wait is bounded. Notifications that belong to a request are sent
//! before its response, so collecting them up to the response is
//! deterministic; notifications that do not (list changes, resource updates)
//! are awaited one by one with [`Client::recv`].
//!
//! With `TOOLPORT_CONFORMANCE_WIRE_DUMP=<file>` set, every message the fixture
//! sends is appended to that file as a JSON line
//! `{"version", "requestMethod", "message"}`, so it can be checked against the
//! spec's JSON schema outside `cargo test`.

#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolport_conformance::{FixtureOptions, fixture_server_with};
use toolport_rpc::PeerOptions;
use toolport_rpc::stdio::from_async;
use toolport_server::Server;

/// The stateless protocol version.
pub const MODERN: &str = "2026-07-28";
/// The handshake version the suite's SDK client asks for.
pub const HANDSHAKE: &str = "2025-11-25";

/// How long any single message may take.
const WAIT: Duration = Duration::from_secs(10);

/// The fixture without the pauses meant for human-visible streaming.
pub fn fixture() -> Server {
    fixture_server_with(FixtureOptions {
        step_delay: Duration::ZERO,
        reconnection_delay: Duration::ZERO,
        ..FixtureOptions::default()
    })
}

/// The capabilities the suite's stateless connection declares.
pub fn default_capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

/// `params` with the 2026-07-28 `_meta` the suite sends (its default capabilities).
pub fn modern(params: Value) -> Value {
    modern_with(params, default_capabilities())
}

/// `params` with a 2026-07-28 `_meta` declaring `capabilities`.
pub fn modern_with(params: Value, capabilities: Value) -> Value {
    let mut params = params;
    let extra = params.get("_meta").cloned().unwrap_or_else(|| json!({}));
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "conformance-test-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        meta[k] = v.clone();
    }
    params["_meta"] = meta;
    params
}

/// A request's answer and what came before it.
#[derive(Debug)]
pub struct Exchange {
    /// The JSON-RPC response.
    pub response: Value,
    /// Notifications received before the response.
    pub notifications: Vec<Value>,
    /// Requests the server sent to the client before the response.
    pub server_requests: Vec<Value>,
}

impl Exchange {
    /// The result; panics on an error response.
    pub fn result(&self) -> &Value {
        assert!(
            self.response.get("error").is_none(),
            "expected a result, got {}",
            self.response
        );
        &self.response["result"]
    }

    /// The error object; panics on a result.
    pub fn error(&self) -> &Value {
        assert!(
            self.response.get("result").is_none(),
            "expected an error, got {}",
            self.response
        );
        &self.response["error"]
    }

    /// The text of the first content block of a tool result.
    pub fn text(&self) -> &str {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text content in {}", self.response))
    }

    /// Notifications with this method.
    pub fn notes(&self, method: &str) -> Vec<&Value> {
        self.notifications.iter().filter(|n| n["method"] == method).collect()
    }
}

/// One connection to a fixture server.
pub struct Client {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
    next_id: i64,
    version: &'static str,
}

impl Client {
    /// Connects to `server` over an in-memory pipe.
    pub fn connect(server: &Server) -> Client {
        let (to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let transport = from_async(BufReader::new(server_in), server_out, 1 << 22);
        tokio::spawn(server.clone().serve_transport(transport, PeerOptions::default()));
        Client {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            next_id: 0,
            version: MODERN,
        }
    }

    /// Connects and completes the handshake at `version`.
    pub async fn handshake(server: &Server, version: &'static str, capabilities: Value) -> Client {
        let mut client = Client::connect(server);
        client.version = version;
        let init = client
            .call(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "conformance-test-client", "version": "1.0.0"}
                }),
            )
            .await;
        assert_eq!(init.result()["protocolVersion"], version);
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    /// Sends one message.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message from the server, within a bounded wait.
    pub async fn recv(&mut self) -> Value {
        let message = self.recv_raw().await;
        dump(self.version, None, &message);
        message
    }

    async fn recv_raw(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.from_server.next_line())
            .await
            .expect("a message from the fixture within the bounded wait")
            .expect("the pipe is readable")
            .expect("the fixture did not hang up");
        serde_json::from_str(&line).expect("the fixture sends JSON")
    }

    /// Sends a request and collects everything up to its response. A request
    /// from the server is a failure here; use [`Client::call_answering`].
    pub async fn call(&mut self, method: &str, params: Value) -> Exchange {
        self.call_answering(method, params, |request| {
            panic!("unexpected request from the fixture: {request}")
        })
        .await
    }

    /// Sends a request; requests from the server before its response are
    /// answered with `answer(request)` as their result.
    pub async fn call_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> Exchange {
        self.next_id += 1;
        let id = json!(self.next_id);
        let version = params
            .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
            .or_else(|| (method == "initialize").then(|| &params["protocolVersion"]))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| self.version.to_owned());
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut exchange = Exchange {
            response: Value::Null,
            notifications: Vec::new(),
            server_requests: Vec::new(),
        };
        loop {
            let message = self.recv_raw().await;
            let is_response = message.get("method").is_none();
            dump(&version, is_response.then_some(method), &message);
            if is_response {
                assert_eq!(message["id"], id, "a response to another request: {message}");
                exchange.response = message;
                return exchange;
            }
            if message.get("id").is_some() {
                let result = answer(&message);
                self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                    .await;
                exchange.server_requests.push(message);
            } else {
                exchange.notifications.push(message);
            }
        }
    }
}

fn dump(version: &str, request_method: Option<&str>, message: &Value) {
    let Some(path) = std::env::var_os("TOOLPORT_CONFORMANCE_WIRE_DUMP") else {
        return;
    };
    static WRITING: Mutex<()> = Mutex::new(());
    let line = json!({"version": version, "requestMethod": request_method, "message": message});
    let _writing = WRITING.lock().unwrap_or_else(|p| p.into_inner());
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the dump file opens");
    writeln!(file, "{line}").expect("the dump file is writable");
}

/// Every tool name in a `tools/list` result.
pub fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// An accepted elicitation answer.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// A sampling answer.
pub fn sampled(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "test-model",
        "stopReason": "endTurn"
    })
}

/// A roots answer.
pub fn roots() -> Value {
    json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]})
}
