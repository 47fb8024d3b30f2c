//! A correctness load test, not a speed test: 64 concurrent clients × 200
//! calls, each with its own argument echoed back; every answer must come back
//! to the call that asked, none lost, in both eras.

mod support;

use std::net::SocketAddr;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use support::*;
use toolport_http::HttpConfig;

const CLIENTS: usize = 64;
const CALLS: usize = 200;

/// One client: a keep-alive connection making `CALLS` calls one after another.
async fn client(addr: SocketAddr, n: usize, session: Option<String>) -> usize {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut matched = 0;
    for i in 0..CALLS {
        let id = n * 10_000 + i;
        let message = format!("client {n} call {i}");
        let mut builder = Request::post("/mcp")
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        let body = match &session {
            Some(session) => {
                builder = builder
                    .header("mcp-session-id", session)
                    .header("mcp-protocol-version", "2025-11-25");
                json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{"message":message}}})
            }
            None => {
                builder = builder
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "echo");
                json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{"message":message},
                    "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})
            }
        };
        sender.ready().await.unwrap();
        let response = sender
            .send_request(builder.body(Full::new(Bytes::from(body.to_string()))).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["id"], id, "an answer came back to the wrong call");
        assert_eq!(answer["result"]["content"][0]["text"], message.as_str());
        matched += 1;
    }
    matched
}

async fn run(session: Option<String>, addr: SocketAddr) -> usize {
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| tokio::spawn(client(addr, n, session.clone())))
        .collect();
    let mut total = 0;
    for c in clients {
        total += c.await.unwrap();
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_reaches_its_caller_in_both_eras() {
    let s = TestServer::demo(HttpConfig::default()).await;
    assert_eq!(run(None, s.addr).await, CLIENTS * CALLS, "2026-07-28: answers lost");
    // All 64 clients share one handshake-era session, with distinct ids.
    let session = initialize(s.addr, "2025-11-25").await;
    assert_eq!(
        run(Some(session), s.addr).await,
        CLIENTS * CALLS,
        "2025-11-25: answers lost"
    );
}
