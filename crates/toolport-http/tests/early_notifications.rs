//! A handler that sends a notification (a log line, progress) and finishes
//! in the same poll: the notification is not lost to the JSON shortcut; the
//! answer is a stream with the notification before the result, in both eras.
//! A client that takes only JSON gets the plain answer.

mod support;

use std::sync::Arc;

use http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolport_http::HttpConfig;
use toolport_http::store::{MemoryEventLog, MemorySessionStore};
use toolport_protocol::logging::LoggingLevel;
use toolport_server::{NoArgs, RequestContext, Server, tool};

async fn quick_logger() -> Running {
    let server = Server::builder("t", "1")
        .tool(tool("quick").handler(|cx: RequestContext, _: NoArgs| async move {
            cx.log(LoggingLevel::Info, None, "said before the answer").await;
            "answered"
        }))
        .build()
        .unwrap();
    serve(
        server,
        HttpConfig::default(),
        Arc::new(MemorySessionStore::new()),
        Arc::new(MemoryEventLog::new(64)),
    )
    .await
}

async fn messages(mut answer: Answer) -> Vec<Value> {
    let mut all = Vec::new();
    while let Some((_, message)) = answer.next_message().await {
        all.push(message);
    }
    all
}

#[tokio::test]
async fn a_notification_sent_in_the_first_poll_comes_before_the_answer() {
    let running = quick_logger().await;
    // 2026-07-28: the request asks for log messages in its _meta.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "debug"});
    let body = request(
        1,
        "tools/call",
        json!({"name": "quick", "arguments": {}, "_meta": meta}),
    );
    let mut headers = fresh();
    headers.extend([
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "quick"),
    ]);
    let answer = send(running.addr, "POST", &headers, &body).await;
    assert_eq!(answer.status, StatusCode::OK);
    let all = messages(answer).await;
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0]["method"], "notifications/message");
    assert_eq!(all[0]["params"]["data"], "said before the answer");
    assert_eq!(all[1]["result"]["content"][0]["text"], "answered");

    // The handshake era: a session without logging/setLevel gets every level.
    let session = open_session(running.addr).await;
    let body = request(2, "tools/call", json!({"name": "quick", "arguments": {}}));
    let all = messages(send(running.addr, "POST", &in_session(&session), &body).await).await;
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0]["params"]["data"], "said before the answer");
    assert_eq!(all[1]["id"], 2);

    // JSON only: the answer, without the notification it cannot carry.
    let mut json_only = in_session(&session);
    json_only.retain(|(name, _)| *name != "accept");
    json_only.push(("accept", "application/json"));
    let body = request(3, "tools/call", json!({"name": "quick", "arguments": {}}));
    let answer = send(running.addr, "POST", &json_only, &body).await;
    assert_eq!(answer.json().await["result"]["content"][0]["text"], "answered");
}
