//! Handlers that panic: every caller gets JSON-RPC -32603 with a generic
//! message (never the panic's text), the connection, the session and the
//! server go on, and `/metrics` counts each panic. Over Streamable HTTP and
//! over stdio framing, in both eras. One test: the metrics recorder is the
//! process's.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolport_http::{HttpConfig, HttpServer};
use toolport_protocol::resources::Resource;
use toolport_rpc::PeerOptions;
use toolport_server::{NoArgs, ResourceEntry, Server, prompt, tool};

const CALLS: usize = 100;
const SECRET: &str = "the secret at /etc/toolport/key";
const MODERN: &str = "2026-07-28";

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct TopicArgs {
    /// Anything.
    topic: String,
}

/// A server whose tool, resource, prompt and completion all panic, beside
/// an `echo` that does not.
fn panicking_server() -> Server {
    let completer: toolport_server::completion::Completer =
        Arc::new(|_: &str, _: &BTreeMap<String, String>| -> Vec<String> { panic!("{SECRET}") });
    Server::builder("panics", "1")
        .tool(tool("boom").handler(|_: NoArgs| async {
            if SECRET.len() > 1 {
                panic!("{SECRET}");
            }
            "unreachable"
        }))
        .tool(tool("echo").handler(|_: NoArgs| async { "still here" }))
        .resource(ResourceEntry::new(Resource::new("boom://r", "r"), |_, _| async {
            if SECRET.len() > 1 {
                panic!("{SECRET}");
            }
            Vec::<toolport_protocol::content::ResourceContents>::new()
        }))
        .prompt(
            prompt("boom")
                .handler(|_, _: TopicArgs| async {
                    if SECRET.len() > 1 {
                        panic!("{SECRET}");
                    }
                    Vec::<toolport_protocol::prompts::PromptMessage>::new()
                })
                .complete("topic", completer),
        )
        .build()
        .unwrap()
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}})
}

/// The request bodies of each kind of handler, for one era.
fn calls(modern: bool) -> Vec<(&'static str, Option<&'static str>, Value)> {
    let with = |mut params: Value| {
        if modern {
            params["_meta"] = meta();
        }
        params
    };
    vec![
        (
            "tools/call",
            Some("boom"),
            with(json!({"name": "boom", "arguments": {}})),
        ),
        ("resources/read", Some("boom://r"), with(json!({"uri": "boom://r"}))),
        (
            "prompts/get",
            Some("boom"),
            with(json!({"name": "boom", "arguments": {"topic": "x"}})),
        ),
        (
            "completion/complete",
            None,
            with(json!({"ref": {"type": "ref/prompt", "name": "boom"}, "argument": {"name": "topic", "value": "a"}})),
        ),
    ]
}

fn assert_internal_error(answer: &Value, what: &str) {
    assert_eq!(answer["error"]["code"], -32603, "{what}: {answer}");
    assert!(
        !answer.to_string().contains("secret"),
        "{what}: the panic text reached the caller: {answer}"
    );
}

async fn panic_count(addr: std::net::SocketAddr) -> u64 {
    let text = {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        let request = http::Request::get("/metrics")
            .header("host", addr.to_string())
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        String::from_utf8(body.to_vec()).unwrap()
    };
    text.lines()
        .filter(|l| l.starts_with("toolport_panics_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// Line-delimited JSON-RPC to a server on in-memory stdio pipes.
struct Stdio {
    to_server: tokio::io::DuplexStream,
    from_server: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
}

impl Stdio {
    fn start(server: Server) -> Stdio {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let transport = toolport_rpc::stdio::from_async(BufReader::new(server_in), server_out, 1 << 20);
        tokio::spawn(server.serve_transport(transport, PeerOptions::default()));
        Stdio {
            to_server: client_out,
            from_server: BufReader::new(client_in).lines(),
        }
    }

    async fn ask(&mut self, message: Value) -> Value {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        let answer = tokio::time::timeout(PATIENCE, self.from_server.next_line())
            .await
            .expect("an answer within the patience")
            .unwrap()
            .expect("the server still answers");
        serde_json::from_str(&answer).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_handlers_answer_internal_errors_and_everything_goes_on() {
    let server = panicking_server();
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::default()
    };
    let bound = HttpServer::new(server.clone(), config)
        .prometheus()
        .unwrap()
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    let mut expected = panic_count(addr).await;
    assert_eq!(expected, 0);

    // HTTP, handshake era: one session for all of it.
    let session = open_session(addr).await;
    for i in 0..CALLS {
        let body = request(i as u64, "tools/call", json!({"name": "boom", "arguments": {}}));
        let answer = send(addr, "POST", &in_session(&session), &body).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_internal_error(&answer.json().await, "HTTP handshake tools/call");
    }
    expected += CALLS as u64;
    assert_eq!(panic_count(addr).await, expected, "after HTTP, handshake era");

    // HTTP, 2026-07-28.
    for i in 0..CALLS {
        let body = request(
            i as u64,
            "tools/call",
            json!({"name": "boom", "arguments": {}, "_meta": meta()}),
        );
        let mut headers = fresh();
        headers.extend([
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "boom"),
        ]);
        let answer = send(addr, "POST", &headers, &body).await;
        assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_internal_error(&answer.json().await, "HTTP 2026-07-28 tools/call");
    }
    expected += CALLS as u64;
    assert_eq!(panic_count(addr).await, expected, "after HTTP, 2026-07-28");

    // stdio, both eras, on one connection.
    let mut stdio = Stdio::start(server.clone());
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    assert_eq!(stdio.ask(init).await["result"]["protocolVersion"], VERSION);
    for modern in [false, true] {
        for i in 0..CALLS {
            let mut params = json!({"name": "boom", "arguments": {}});
            if modern {
                params["_meta"] = meta();
            }
            let answer = stdio
                .ask(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}))
                .await;
            assert_eq!(answer["id"], i);
            assert_internal_error(&answer, "stdio tools/call");
        }
        expected += CALLS as u64;
        assert_eq!(panic_count(addr).await, expected, "after stdio, modern: {modern}");
    }

    // Every other kind of handler, each era, each transport.
    for modern in [false, true] {
        for (method, name, params) in calls(modern) {
            let answer = stdio
                .ask(json!({"jsonrpc": "2.0", "id": "h", "method": method, "params": params}))
                .await;
            assert_internal_error(&answer, method);
            let body = json!({"jsonrpc": "2.0", "id": "h", "method": method, "params": params}).to_string();
            let answer = if modern {
                let mut headers = fresh();
                headers.extend([("mcp-protocol-version", MODERN), ("mcp-method", method)]);
                if let Some(name) = name {
                    headers.push(("mcp-name", name));
                }
                send(addr, "POST", &headers, &body).await
            } else {
                send(addr, "POST", &in_session(&session), &body).await
            };
            assert_internal_error(&answer.json().await, method);
            expected += 2;
        }
    }
    assert_eq!(panic_count(addr).await, expected, "after the other handlers");

    // The session, the stdio connection and the server still serve.
    let echo = json!({"name": "echo", "arguments": {}});
    let answer = send(
        addr,
        "POST",
        &in_session(&session),
        &request(1, "tools/call", echo.clone()),
    )
    .await;
    assert_eq!(answer.json().await["result"]["content"][0]["text"], "still here");
    let answer = stdio
        .ask(json!({"jsonrpc": "2.0", "id": "last", "method": "tools/call", "params": echo}))
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "still here");
}
