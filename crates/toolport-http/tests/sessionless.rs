//! Handshake-era clients of a server without sessions (`sessions = false`,
//! `toolport serve --stateless`): told the truth when a tool asks them for
//! input, and their `notifications/cancelled` stops the matching call.

mod support;

use std::sync::Arc;

use http::StatusCode;
use serde_json::json;
use support::*;
use tokio::sync::mpsc;
use toolport_http::HttpConfig;
use toolport_http::store::{MemoryEventLog, MemorySessionStore};
use toolport_protocol::elicitation::ElicitRequestParams;
use toolport_server::{NoArgs, RequestContext, Server, ToolError, tool};

struct Sessionless {
    running: Running,
    started: mpsc::UnboundedReceiver<()>,
    stopped: mpsc::UnboundedReceiver<()>,
}

async fn sessionless_server() -> Sessionless {
    let (started_tx, started) = mpsc::unbounded_channel();
    let (stopped_tx, stopped) = mpsc::unbounded_channel();
    let wait = tool("wait").handler(move |_: NoArgs| {
        let (started, stopped) = (started_tx.clone(), stopped_tx.clone());
        async move {
            let _stopped = OnDrop(stopped);
            let _ = started.send(());
            std::future::pending::<()>().await;
            "never"
        }
    });
    let ask = tool("ask").handler(|cx: RequestContext, _: NoArgs| async move {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let form = ElicitRequestParams::form("Your name?", schema.as_object().cloned().unwrap());
        cx.elicit("name", form).await?;
        Ok::<_, ToolError>("asked")
    });
    let server = Server::builder("sessionless", "1")
        .tool(wait)
        .tool(ask)
        .build()
        .unwrap();
    let config = HttpConfig {
        sessions: false,
        ..HttpConfig::default()
    };
    let running = serve(
        server,
        config,
        Arc::new(MemorySessionStore::new()),
        Arc::new(MemoryEventLog::new(64)),
    )
    .await;
    Sessionless {
        running,
        started,
        stopped,
    }
}

fn without_session() -> Vec<(&'static str, &'static str)> {
    let mut headers = fresh();
    headers.push(("mcp-protocol-version", VERSION));
    headers
}

#[tokio::test]
async fn a_client_that_declared_elicitation_is_told_a_sessionless_server_cannot_ask_it() {
    let s = sessionless_server().await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "test", "version": "1"}}});
    let answer = send(s.running.addr, "POST", &fresh(), &init.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.headers.get("mcp-session-id").is_none(), "no session");
    let call = request(1, "tools/call", json!({"name": "ask", "arguments": {}}));
    let answer = send(s.running.addr, "POST", &without_session(), &call).await;
    let result = answer.json().await["result"].clone();
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("without sessions") && text.contains("elicitation/create"),
        "{text}"
    );
    assert!(!text.contains("did not declare"), "the client did declare it: {text}");
}

#[tokio::test]
async fn a_cancellation_stops_the_matching_call_of_a_sessionless_client() {
    let mut s = sessionless_server().await;
    let addr = s.running.addr;
    let call = tokio::spawn(async move {
        let body = request(7, "tools/call", json!({"name": "wait", "arguments": {}}));
        send(addr, "POST", &without_session(), &body).await.json().await
    });
    signalled(&mut s.started).await;
    // Another id stops nothing.
    let other = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}});
    let answer = send(addr, "POST", &without_session(), &other.to_string()).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    assert!(
        s.stopped.try_recv().is_err(),
        "a cancellation of another id stopped the call"
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no longer needed"}});
    let answer = send(addr, "POST", &without_session(), &cancel.to_string()).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    signalled(&mut s.stopped).await;
    let answer = tokio::time::timeout(PATIENCE, call).await.unwrap().unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["message"], "Request cancelled", "{answer}");
}
