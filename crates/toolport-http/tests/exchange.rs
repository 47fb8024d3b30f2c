//! A session's requests run on the one in-flight engine: an id is taken
//! while its request runs, `notifications/cancelled` and the session's end
//! reach the running request, and answers nobody waits for are accepted.

mod support;

use std::sync::Arc;

use http::StatusCode;
use serde_json::json;
use support::*;
use tokio::sync::mpsc;
use toolport_http::HttpConfig;
use toolport_http::store::{MemoryEventLog, MemorySessionStore};
use toolport_server::{NoArgs, Server, tool};

/// A server whose `wait` tool runs until cancelled, saying when it started
/// and when it was stopped.
struct Waiting {
    running: Running,
    started: mpsc::UnboundedReceiver<()>,
    stopped: mpsc::UnboundedReceiver<()>,
}

async fn waiting_server() -> Waiting {
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
    let server = Server::builder("exchange", "1").tool(wait).build().unwrap();
    let running = serve(
        server,
        HttpConfig::default(),
        Arc::new(MemorySessionStore::new()),
        Arc::new(MemoryEventLog::new(64)),
    )
    .await;
    Waiting {
        running,
        started,
        stopped,
    }
}

fn wait_call(id: u64) -> String {
    request(id, "tools/call", json!({"name": "wait", "arguments": {}}))
}

/// Starts a `wait` call and returns once its handler runs.
async fn start_wait(w: &mut Waiting, session: &str, id: u64) -> tokio::task::JoinHandle<serde_json::Value> {
    let (addr, headers, body) = (w.running.addr, session.to_owned(), wait_call(id));
    let call = tokio::spawn(async move {
        let answer = send(addr, "POST", &in_session(&headers), &body).await;
        assert_eq!(answer.status, StatusCode::OK);
        answer.json().await
    });
    signalled(&mut w.started).await;
    call
}

#[tokio::test]
async fn a_running_id_is_refused_and_a_cancellation_stops_its_request() {
    let mut w = waiting_server().await;
    let addr = w.running.addr;
    let session = open_session(addr).await;
    let call = start_wait(&mut w, &session, 7).await;

    let again = send(addr, "POST", &in_session(&session), &wait_call(7)).await;
    assert_eq!(again.status, StatusCode::OK, "a JSON-RPC error, not an HTTP one");
    let again = again.json().await;
    assert_eq!(again["id"], 7);
    assert_eq!(again["error"]["code"], -32600);
    assert_eq!(
        again["error"]["message"], "Invalid Request: request id 7 is already in flight in this session",
        "the answer a duplicate id always had"
    );

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no longer needed"}});
    let cancelled = send(addr, "POST", &in_session(&session), &cancel.to_string()).await;
    assert_eq!(cancelled.status, StatusCode::ACCEPTED);
    signalled(&mut w.stopped).await;
    let answer = call.await.unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["message"], "Request cancelled", "{answer}");

    // Its id is free again once its answer is sent.
    let ping = send(addr, "POST", &in_session(&session), &request(7, "ping", json!({}))).await;
    assert_eq!(ping.json().await["result"], json!({}));
}

#[tokio::test]
async fn ending_a_session_cancels_the_requests_it_runs() {
    let mut w = waiting_server().await;
    let addr = w.running.addr;
    let session = open_session(addr).await;
    let call = start_wait(&mut w, &session, 1).await;

    let ended = send(addr, "DELETE", &in_session(&session), "").await;
    assert_eq!(ended.status, StatusCode::OK);
    signalled(&mut w.stopped).await;
    let answer = call.await.unwrap();
    assert_eq!(answer["error"]["message"], "Request cancelled", "{answer}");
}

#[tokio::test]
async fn answers_and_cancellations_nothing_here_waits_for_are_accepted() {
    let w = waiting_server().await;
    let addr = w.running.addr;
    let session = open_session(addr).await;
    let stray = [
        json!({"jsonrpc": "2.0", "id": 41, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 42, "error": {"code": -1, "message": "no"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 43}}),
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
    ];
    for message in stray {
        let answer = send(addr, "POST", &in_session(&session), &message.to_string()).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED, "{message}");
    }
    let ping = send(addr, "POST", &in_session(&session), &request(1, "ping", json!({}))).await;
    assert_eq!(ping.json().await["result"], json!({}), "the session is unharmed");
}
