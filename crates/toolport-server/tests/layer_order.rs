//! The order of the policy layers, where it matters: each test would fail
//! if the two layers it names were swapped. (Authorization before every
//! layer is shown in `admission.rs`.)

mod common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolport_protocol::Request;
use toolport_server::policy::{PolicyConfig, RateConfig, ToolPolicyConfig};
use toolport_server::{NoArgs, Server, tool};

/// Calls `tool` (2026-07-28) with an optional idempotency key, cancelled by `cancel`.
async fn call_with(server: &Server, tool: &str, key: Option<&str>, cancel: CancellationToken) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    if let Some(key) = key {
        meta["dev.toolport/idempotencyKey"] = json!(key);
    }
    let request = Request::new(
        1,
        "tools/call",
        Some(json!({"name": tool, "arguments": {}, "_meta": meta})),
    );
    let call = common::context_of(None, cancel);
    match server.handle(request, call).await {
        Ok(result) => serde_json::from_str(result.get()).unwrap(),
        Err(error) => json!({"error": error}),
    }
}

async fn call(server: &Server, tool: &str, key: Option<&str>) -> Value {
    call_with(server, tool, key, CancellationToken::new()).await
}

/// `hold` runs until `release` is notified (and says when it started);
/// `quick` answers at once; `nap` sleeps 10 ms.
fn server(policies: PolicyConfig, started: Arc<Notify>, release: Arc<Notify>) -> Server {
    Server::builder("order", "1")
        .policies(policies)
        .tool(tool("hold").handler(move |_: NoArgs| {
            let (started, release) = (started.clone(), release.clone());
            async move {
                started.notify_one();
                release.notified().await;
                "held"
            }
        }))
        .tool(tool("quick").handler(|_: NoArgs| async { "quick" }))
        .tool(tool("nap").handler(|_: NoArgs| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            "napped"
        }))
        .build()
        .unwrap()
}

/// Deadlines and queue waits that only a broken test reaches: it fails
/// within this bound instead of hanging.
const BOUND_MS: u64 = 20_000;

fn text(answer: &Value) -> &str {
    answer["content"][0]["text"].as_str().unwrap_or_default()
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_default()
}

/// Idempotency before the gates: a repeat is answered from its record even
/// while the gate is full, without taking a place.
#[tokio::test]
async fn a_repeat_is_answered_while_the_gate_is_full() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let policies = PolicyConfig {
        max_concurrent: 1,
        queue: 0,
        deadline_ms: BOUND_MS,
        ..PolicyConfig::default()
    };
    let server = server(policies, started.clone(), release.clone());
    assert_eq!(text(&call(&server, "quick", Some("k")).await), "quick");
    let holder = tokio::spawn({
        let server = server.clone();
        async move { call(&server, "hold", None).await }
    });
    started.notified().await;
    assert_eq!(code(&call(&server, "quick", None).await), -32010, "the gate is full");
    assert_eq!(
        text(&call(&server, "quick", Some("k")).await),
        "quick",
        "the repeat is answered from its record"
    );
    release.notify_one();
    assert_eq!(text(&holder.await.unwrap()), "held");
}

/// Rate limits before idempotency: a repeat still counts against the rate.
#[tokio::test]
async fn a_repeat_still_counts_against_the_rate() {
    let mut policies = PolicyConfig::default();
    policies.tools.insert(
        "quick".into(),
        ToolPolicyConfig {
            rate: Some(RateConfig {
                per_second: 1.0 / 60.0,
                burst: 1,
            }),
            ..ToolPolicyConfig::default()
        },
    );
    let server = server(policies, Arc::default(), Arc::default());
    assert_eq!(text(&call(&server, "quick", Some("k")).await), "quick");
    let repeat = call(&server, "quick", Some("k")).await;
    assert_eq!(code(&repeat), -32010, "{repeat}");
}

/// Cancellation outside the gates: a call cancelled while it waits in the
/// queue leaves it at once, and its place in the queue is free again.
#[tokio::test]
async fn a_call_cancelled_in_the_queue_leaves_it() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let policies = PolicyConfig {
        max_concurrent: 1,
        queue: 1,
        queue_timeout_ms: BOUND_MS,
        deadline_ms: BOUND_MS,
        ..PolicyConfig::default()
    };
    let server = server(policies, started.clone(), release.clone());
    let holder = tokio::spawn({
        let server = server.clone();
        async move { call(&server, "hold", None).await }
    });
    started.notified().await;
    let cancel = CancellationToken::new();
    let queued = tokio::spawn({
        let (server, cancel) = (server.clone(), cancel.clone());
        async move { call_with(&server, "quick", None, cancel).await }
    });
    // The queue holds one: once the first waiter is in it, a second is
    // refused at once. A probe that would wait instead (the first is not in
    // the queue yet) is dropped at its first poll and tried again.
    let mut refused = Value::Null;
    for _ in 0..1000 {
        tokio::task::yield_now().await;
        if let Ok(answer) = tokio::time::timeout(Duration::ZERO, call(&server, "quick", None)).await {
            refused = answer;
            break;
        }
    }
    assert_eq!(code(&refused), -32010, "the queue is full: {refused}");
    cancel.cancel();
    let cancelled = queued.await.unwrap();
    assert_eq!(code(&cancelled), -32001, "{cancelled}");
    // Its place is free: the next waiter queues, and runs once the holder ends.
    let next = tokio::spawn({
        let server = server.clone();
        async move { call(&server, "quick", None).await }
    });
    release.notify_one();
    assert_eq!(text(&holder.await.unwrap()), "held");
    assert_eq!(text(&next.await.unwrap()), "quick");
}

/// The gates before the deadline: the deadline counts from when the gate
/// let the call in, not from when it started waiting.
#[tokio::test(start_paused = true)]
async fn the_deadline_counts_from_the_gate() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let mut policies = PolicyConfig {
        max_concurrent: 1,
        queue: 1,
        queue_timeout_ms: 600_000,
        ..PolicyConfig::default()
    };
    policies.tools.insert(
        "nap".into(),
        ToolPolicyConfig {
            deadline_ms: Some(100),
            ..ToolPolicyConfig::default()
        },
    );
    let server = server(policies, started.clone(), release.clone());
    let holder = tokio::spawn({
        let server = server.clone();
        async move { call(&server, "hold", None).await }
    });
    started.notified().await;
    let napper = tokio::spawn({
        let server = server.clone();
        async move { call(&server, "nap", None).await }
    });
    // The napper waits at the gate for longer than its deadline (paused time
    // advances only when every task is idle, so this is exact).
    tokio::time::sleep(Duration::from_millis(500)).await;
    release.notify_one();
    assert_eq!(text(&holder.await.unwrap()), "held");
    let napped = napper.await.unwrap();
    assert_eq!(text(&napped), "napped", "{napped}");
}
