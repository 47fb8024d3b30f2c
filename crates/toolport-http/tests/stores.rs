//! The request path awaits its stores: a store that takes its time serves
//! every request, even on a current-thread runtime, and one that fails
//! answers 503 with a message a person can act on, never a panic, a 404 or
//! a session id that leads nowhere.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use http::StatusCode;
use serde_json::json;
use support::*;
use toolport_http::store::{
    EventLog, MemoryEventLog, MemorySessionStore, SessionRecord, SessionStore, SettingsChange, StateError,
};
use toolport_http::{HttpConfig, ResponseMode};
use toolport_server::{NoArgs, Server, tool};

/// How many times a waiting store hands the thread back before it answers:
/// its calls are pending when first polled, like a network round trip.
const TURNS: usize = 3;

async fn round_trip(calls: &AtomicUsize) {
    calls.fetch_add(1, Ordering::Relaxed);
    for _ in 0..TURNS {
        tokio::task::yield_now().await;
    }
}

/// Sessions in memory, each call answered only after a round trip.
#[derive(Debug, Default)]
struct WaitingSessions {
    inner: MemorySessionStore,
    calls: AtomicUsize,
}

#[async_trait]
impl SessionStore for WaitingSessions {
    async fn create(&self, id: &str, record: SessionRecord) -> Result<(), StateError> {
        round_trip(&self.calls).await;
        self.inner.create(id, record).await
    }
    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StateError> {
        round_trip(&self.calls).await;
        self.inner.get(id).await
    }
    async fn apply(&self, id: &str, change: &SettingsChange) -> Result<bool, StateError> {
        round_trip(&self.calls).await;
        self.inner.apply(id, change).await
    }
    async fn remove(&self, id: &str) -> Result<bool, StateError> {
        round_trip(&self.calls).await;
        self.inner.remove(id).await
    }
    async fn reap(&self, idle: Duration) -> Result<Vec<String>, StateError> {
        round_trip(&self.calls).await;
        self.inner.reap(idle).await
    }
    async fn count(&self) -> Result<usize, StateError> {
        round_trip(&self.calls).await;
        self.inner.count().await
    }
}

/// Events in memory, each call answered only after a round trip.
#[derive(Debug)]
struct WaitingEvents {
    inner: MemoryEventLog,
    calls: AtomicUsize,
}

#[async_trait]
impl EventLog for WaitingEvents {
    async fn append(&self, session: &str, stream: u64, data: Bytes) -> Result<u64, StateError> {
        round_trip(&self.calls).await;
        self.inner.append(session, stream, data).await
    }
    async fn after(&self, session: &str, stream: u64, seq: u64) -> Result<Option<Vec<(u64, Bytes)>>, StateError> {
        round_trip(&self.calls).await;
        self.inner.after(session, stream, seq).await
    }
    async fn forget(&self, session: &str) -> Result<(), StateError> {
        round_trip(&self.calls).await;
        self.inner.forget(session).await
    }
    async fn forget_stream(&self, session: &str, stream: u64) -> Result<(), StateError> {
        round_trip(&self.calls).await;
        self.inner.forget_stream(session, stream).await
    }
}

/// Sessions in memory behind a connection that can go down.
#[derive(Debug, Default)]
struct FlakySessions {
    inner: MemorySessionStore,
    down: AtomicBool,
}

/// What the store says when it is down: its address, which clients must
/// not be told.
const OUTAGE: &str = "connection refused by 10.0.0.7:6379";

impl FlakySessions {
    fn reachable(&self) -> Result<(), StateError> {
        if self.down.load(Ordering::SeqCst) {
            Err(StateError::Unavailable(OUTAGE.into()))
        } else {
            Ok(())
        }
    }
}

#[async_trait]
impl SessionStore for FlakySessions {
    async fn create(&self, id: &str, record: SessionRecord) -> Result<(), StateError> {
        self.reachable()?;
        self.inner.create(id, record).await
    }
    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StateError> {
        self.reachable()?;
        self.inner.get(id).await
    }
    async fn apply(&self, id: &str, change: &SettingsChange) -> Result<bool, StateError> {
        self.reachable()?;
        self.inner.apply(id, change).await
    }
    async fn remove(&self, id: &str) -> Result<bool, StateError> {
        self.reachable()?;
        self.inner.remove(id).await
    }
    async fn reap(&self, idle: Duration) -> Result<Vec<String>, StateError> {
        self.reachable()?;
        self.inner.reap(idle).await
    }
    async fn count(&self) -> Result<usize, StateError> {
        self.reachable()?;
        self.inner.count().await
    }
}

fn greeter() -> Server {
    Server::builder("stores", "1")
        .tool(tool("greet").handler(|_: NoArgs| async { "hello" }))
        .build()
        .unwrap()
}

fn greet(id: u64) -> String {
    request(id, "tools/call", json!({"name": "greet", "arguments": {}}))
}

// `#[tokio::test]` runs on a current-thread runtime: a store call that
// cannot finish on its first poll has to be awaited there, never blocked on.
#[tokio::test]
async fn stores_that_wait_serve_every_request_on_a_current_thread_runtime() {
    let sessions = Arc::new(WaitingSessions::default());
    let events = Arc::new(WaitingEvents {
        inner: MemoryEventLog::new(64),
        calls: AtomicUsize::new(0),
    });
    let server = greeter();
    // Every answer is streamed, so each one is recorded in the event log.
    let config = HttpConfig {
        response_mode: ResponseMode::Sse,
        ..HttpConfig::default()
    };
    let running = serve(server.clone(), config, sessions.clone(), events.clone()).await;
    let addr = running.addr;

    let session = open_session(addr).await;

    let mut answer = send(addr, "POST", &in_session(&session), &greet(1)).await;
    assert_eq!(answer.status, StatusCode::OK);
    let priming = answer.next_event().await.expect("a priming event");
    let primed_at = priming
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("the priming event has an id")
        .to_owned();
    let (answer_id, greeting) = answer.next_message().await.expect("the answer");
    assert_eq!(greeting["id"], 1);
    assert_eq!(greeting["result"]["content"][0]["text"], "hello");
    let stream = primed_at
        .strip_suffix("-0")
        .expect("the priming event is the stream's 0th");
    assert_eq!(answer_id, Some(format!("{stream}-1")), "the answer was recorded first");
    assert!(answer.next_message().await.is_none(), "the stream ends with its answer");

    // The recorded answer is replayed from the event log after the priming event.
    let mut resume = reading(&session);
    resume.push(("last-event-id", &primed_at));
    let mut replay = send(addr, "GET", &resume, "").await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(replay.next_message().await, Some((answer_id, greeting)));
    assert!(replay.next_message().await.is_none());

    // The standalone stream gets what the server says of its own accord.
    let mut get = send(addr, "GET", &reading(&session), "").await;
    assert_eq!(get.status, StatusCode::OK);
    server
        .tools()
        .insert(tool("wave").handler(|_: NoArgs| async { "o/" }))
        .unwrap();
    let (event_id, changed) = get.next_message().await.expect("a list change");
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert!(
        event_id.is_some_and(|id| id.starts_with("0-")),
        "recorded on the GET stream"
    );

    let ended = send(addr, "DELETE", &in_session(&session), "").await;
    assert_eq!(ended.status, StatusCode::OK);
    let after = send(addr, "POST", &in_session(&session), &greet(2)).await;
    assert_eq!(after.status, StatusCode::NOT_FOUND, "the session ended");

    assert!(sessions.calls.load(Ordering::Relaxed) >= 4, "create, gets, remove");
    assert!(events.calls.load(Ordering::Relaxed) >= 4, "appends, a replay, forget");
}

/// A 503 for a store outage: the internal-error code, a message that says
/// what happened and what to do, the store's own words withheld. Returns
/// the JSON-RPC error message.
async fn assert_store_unavailable(answer: Answer) -> serde_json::Value {
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.headers["retry-after"], "1");
    assert!(answer.headers.get("mcp-session-id").is_none(), "no session id");
    let body = answer.json().await;
    assert_eq!(body["error"]["code"], -32603, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("state store is unavailable"), "{message}");
    assert!(message.contains("retry"), "{message}");
    assert!(
        !message.contains("10.0.0.7"),
        "the store's address stays in the log: {message}"
    );
    body
}

#[tokio::test]
async fn a_store_that_fails_answers_503_and_its_sessions_survive_the_outage() {
    let sessions = Arc::new(FlakySessions::default());
    let running = serve(
        greeter(),
        HttpConfig::default(),
        sessions.clone(),
        Arc::new(MemoryEventLog::new(64)),
    )
    .await;
    let addr = running.addr;

    sessions.down.store(true, Ordering::SeqCst);
    let refused = assert_store_unavailable(send(addr, "POST", &fresh(), &initialize_request()).await).await;
    assert_eq!(refused["id"], 0, "the error answers the initialize request");
    assert!(
        refused.get("result").is_none(),
        "no initialize answer without a session"
    );

    sessions.down.store(false, Ordering::SeqCst);
    let session = open_session(addr).await;

    sessions.down.store(true, Ordering::SeqCst);
    let headers = in_session(&session);
    assert_store_unavailable(send(addr, "POST", &headers, &greet(1)).await).await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_store_unavailable(send(addr, "POST", &headers, initialized).await).await;
    let stray_answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_store_unavailable(send(addr, "POST", &headers, stray_answer).await).await;
    assert_store_unavailable(send(addr, "GET", &reading(&session), "").await).await;
    assert_store_unavailable(send(addr, "DELETE", &headers, "").await).await;

    // The store is back, and so is the session: the outage ended nothing.
    sessions.down.store(false, Ordering::SeqCst);
    let answer = send(addr, "POST", &headers, &greet(2)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json().await["result"]["content"][0]["text"], "hello");
    assert_eq!(send(addr, "DELETE", &headers, "").await.status, StatusCode::OK);
    assert_eq!(
        send(addr, "DELETE", &headers, "").await.status,
        StatusCode::NOT_FOUND,
        "an ended session is unknown, not unavailable"
    );
}
