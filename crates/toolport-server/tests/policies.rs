//! The policy layers around `tools/call`, each shown doing its job and
//! failing loudly if it does not: gates, queues, deadlines, rate limits,
//! idempotency keys, audit.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolport_protocol::Request;
use toolport_server::policy::{PolicyConfig, RateConfig, ToolPolicyConfig};
use toolport_server::{NoArgs, Server, ToolError, tool};

async fn call(server: &Server, id: i64, tool: &str, meta: Value) -> Value {
    let mut m = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    if let Value::Object(extra) = meta {
        m.as_object_mut().unwrap().extend(extra);
    }
    let request = Request::new(
        id,
        "tools/call",
        Some(json!({"name": tool, "arguments": {}, "_meta": m})),
    );
    match server.handle(request, common::call_context()).await {
        Ok(result) => json!({"result": serde_json::from_str::<Value>(result.get()).unwrap()}),
        Err(error) => json!({"error": error}),
    }
}

/// A tool that counts how many of its calls run at once and holds each one
/// until released.
#[derive(Clone, Default)]
struct Held {
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    started: Arc<AtomicUsize>,
    release: Arc<Notify>,
    released: Arc<std::sync::atomic::AtomicBool>,
}

impl Held {
    async fn run(&self) -> String {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::SeqCst);
        while !self.released.load(Ordering::SeqCst) {
            let notified = self.release.notified();
            if self.released.load(Ordering::SeqCst) {
                break;
            }
            notified.await;
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        "done".into()
    }

    fn release_all(&self) {
        self.released.store(true, Ordering::SeqCst);
        self.release.notify_waiters();
    }
}

fn held_server(held: &Held, policies: PolicyConfig) -> Server {
    let h = held.clone();
    Server::builder("t", "1")
        .policies(policies)
        .tool(tool("held").handler(move |_: NoArgs| {
            let h = h.clone();
            async move { h.run().await }
        }))
        .build()
        .unwrap()
}

async fn until(what: &str, condition: impl Fn() -> bool) {
    for _ in 0..2000 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_of_50_never_lets_more_than_50_run_and_queues_the_rest() {
    let held = Held::default();
    let policies = PolicyConfig {
        max_concurrent: 50,
        queue: 200,
        queue_timeout_ms: 60_000,
        ..PolicyConfig::default()
    };
    let server = held_server(&held, policies);
    let calls: Vec<_> = (0..200)
        .map(|i| {
            tokio::spawn({
                let server = server.clone();
                async move { call(&server, i, "held", json!({})).await }
            })
        })
        .collect();
    until("50 calls running", || held.running.load(Ordering::SeqCst) == 50).await;
    // Let the queue drain: every call eventually runs, never more than 50 at once.
    held.release_all();
    for c in calls {
        assert_eq!(c.await.unwrap()["result"]["content"][0]["text"], "done");
    }
    assert_eq!(held.started.load(Ordering::SeqCst), 200);
    assert_eq!(held.most.load(Ordering::SeqCst), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_queue_the_excess_is_refused_with_a_retry_hint() {
    let held = Held::default();
    let policies = PolicyConfig {
        max_concurrent: 50,
        queue: 0,
        ..PolicyConfig::default()
    };
    let server = held_server(&held, policies);
    let refused = Arc::new(AtomicUsize::new(0));
    let calls: Vec<_> = (0..200)
        .map(|i| {
            let (server, refused) = (server.clone(), refused.clone());
            tokio::spawn(async move {
                let answer = call(&server, i, "held", json!({})).await;
                if answer["error"]["code"] == -32010 {
                    assert!(answer["error"]["data"]["retryAfterMs"].as_u64().unwrap() > 0);
                    refused.fetch_add(1, Ordering::SeqCst);
                }
                answer
            })
        })
        .collect();
    until("150 refusals with 50 running", || {
        refused.load(Ordering::SeqCst) == 150 && held.running.load(Ordering::SeqCst) == 50
    })
    .await;
    held.release_all();
    let done = futures_count(calls).await;
    assert_eq!(done, 50);
    assert_eq!(held.most.load(Ordering::SeqCst), 50);
}

async fn futures_count(calls: Vec<tokio::task::JoinHandle<Value>>) -> usize {
    let mut done = 0;
    for c in calls {
        if c.await.unwrap()["result"]["content"][0]["text"] == "done" {
            done += 1;
        }
    }
    done
}

#[tokio::test]
async fn a_tool_past_its_deadline_is_stopped_and_its_work_cancelled() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    struct OnDrop(Arc<AtomicUsize>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let c = cancelled.clone();
    let policies = PolicyConfig {
        tools: BTreeMap::from([(
            "slow".to_owned(),
            ToolPolicyConfig {
                deadline_ms: Some(50),
                ..Default::default()
            },
        )]),
        ..PolicyConfig::default()
    };
    let server = Server::builder("t", "1")
        .policies(policies)
        .tool(tool("slow").handler(move |_: NoArgs| {
            let c = c.clone();
            async move {
                let _guard = OnDrop(c);
                tokio::time::sleep(Duration::from_secs(30)).await;
                "never"
            }
        }))
        .build()
        .unwrap();
    let answer = call(&server, 1, "slow", json!({})).await;
    // A result the caller can act on: an `isError` with a code and a
    // verdict on retrying, in `_meta` and in the message.
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert_eq!(
        result["_meta"]["dev.toolport/error"]["code"], "deadline_exceeded",
        "{answer}"
    );
    assert_eq!(result["_meta"]["dev.toolport/error"]["retryable"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("50 ms") && text.contains("deadline_exceeded, retryable"),
        "{text}"
    );
    assert_eq!(cancelled.load(Ordering::SeqCst), 1, "the tool's work was dropped");
}

#[derive(Deserialize, JsonSchema)]
struct Order {
    item: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_idempotency_key_sent_20_times_runs_the_tool_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Notify::new());
    let (r, g) = (runs.clone(), gate.clone());
    let server = Server::builder("t", "1")
        .tool(tool("order").handler(move |args: Order| {
            let (r, g) = (r.clone(), g.clone());
            async move {
                let n = r.fetch_add(1, Ordering::SeqCst) + 1;
                g.notified().await;
                format!("order {n} for {}", args.item)
            }
        }))
        .build()
        .unwrap();
    let key = json!({"dev.toolport/idempotencyKey": "k-1"});
    let send = |id: i64, item: &'static str| {
        let (server, key) = (server.clone(), key.clone());
        tokio::spawn(async move {
            let mut m = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
            m.as_object_mut().unwrap().extend(key.as_object().unwrap().clone());
            let request = Request::new(
                id,
                "tools/call",
                Some(json!({"name": "order", "arguments": {"item": item}, "_meta": m})),
            );
            match server.handle(request, common::call_context()).await {
                Ok(result) => serde_json::from_str::<Value>(result.get()).unwrap(),
                Err(error) => json!({"error": error}),
            }
        })
    };
    let calls: Vec<_> = (0..20).map(|i| send(i, "tea")).collect();
    until("the first call to start", || runs.load(Ordering::SeqCst) == 1).await;
    // The same key with other arguments is refused while the first runs.
    let conflict = send(99, "coffee").await.unwrap();
    assert_eq!(conflict["error"]["code"], -32602, "{conflict}");
    // A stored permit: the first call may not be waiting yet.
    gate.notify_one();
    for c in calls {
        assert_eq!(c.await.unwrap()["content"][0]["text"], "order 1 for tea");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the tool body ran once");
}

#[tokio::test]
async fn rate_limits_refuse_beyond_the_burst() {
    let policies = PolicyConfig {
        tools: BTreeMap::from([(
            "ping".to_owned(),
            ToolPolicyConfig {
                rate: Some(RateConfig {
                    per_second: 0.5,
                    burst: 3,
                }),
                ..Default::default()
            },
        )]),
        ..PolicyConfig::default()
    };
    let server = Server::builder("t", "1")
        .policies(policies)
        .tool(tool("ping").handler(|_: NoArgs| async { "pong" }))
        .build()
        .unwrap();
    for i in 0..3 {
        assert_eq!(
            call(&server, i, "ping", json!({})).await["result"]["content"][0]["text"],
            "pong"
        );
    }
    let refused = call(&server, 9, "ping", json!({})).await;
    assert_eq!(refused["error"]["code"], -32010, "{refused}");
    assert!(refused["error"]["data"]["retryAfterMs"].as_u64().unwrap() > 100);
}

#[test]
fn invalid_settings_name_the_key_the_value_and_what_would_work() {
    let mut bad = PolicyConfig::default();
    bad.tools.insert(
        "search".into(),
        ToolPolicyConfig {
            rate: Some(RateConfig {
                per_second: -1.0,
                burst: 1,
            }),
            ..Default::default()
        },
    );
    let error = bad.validate("limits").unwrap_err();
    assert_eq!(error.key, "limits.tools.search.rate.per_second");
    assert_eq!(error.value, "-1");
    assert!(
        error
            .to_string()
            .contains("expected a number of calls per second above 0"),
        "{error}"
    );
    let mut zero = PolicyConfig::default();
    zero.tools.insert(
        "x".into(),
        ToolPolicyConfig {
            max_concurrent: Some(0),
            ..Default::default()
        },
    );
    assert_eq!(
        zero.validate("limits").unwrap_err().key,
        "limits.tools.x.max_concurrent"
    );
    assert_eq!(PolicyConfig::none().validate("limits"), Ok(()));
    assert_eq!(PolicyConfig::default().validate("limits"), Ok(()));
}

#[tokio::test]
async fn tool_failures_carry_a_code_and_whether_to_retry() {
    let server = Server::builder("t", "1")
        .tool(tool("plain").handler(|_: NoArgs| async { Err::<String, _>(ToolError::failed("it broke")) }))
        .tool(tool("busy").handler(|_: NoArgs| async {
            Err::<String, _>(
                ToolError::retryable("upstream_unavailable", "the upstream is restarting")
                    .retry_after(Duration::from_millis(1500)),
            )
        }))
        .tool(tool("refused").handler(|_: NoArgs| async {
            Err::<String, _>(ToolError::coded("quota_exhausted", "the monthly quota is used up"))
        }))
        .tool(tool("typed").handler(|order: Order| async move { order.item }))
        .build()
        .unwrap();
    let cases = [
        ("plain", "failed", false, None, "it broke"),
        (
            "busy",
            "upstream_unavailable",
            true,
            Some(1500),
            "the upstream is restarting (code upstream_unavailable, retryable)",
        ),
        (
            "refused",
            "quota_exhausted",
            false,
            None,
            "the monthly quota is used up (code quota_exhausted, not retryable)",
        ),
    ];
    for (name, code, retryable, after, message) in cases {
        let answer = call(&server, 1, name, json!({})).await;
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        let meta = &result["_meta"]["dev.toolport/error"];
        assert_eq!(meta["code"], code, "{answer}");
        assert_eq!(meta["retryable"], retryable, "{answer}");
        assert_eq!(meta.get("retryAfterMs").and_then(Value::as_u64), after, "{answer}");
        assert_eq!(result["content"][0]["text"], message, "{answer}");
    }
    // Arguments that do not fit are a code of their own.
    let answer = call(&server, 2, "typed", json!({"item": 5})).await;
    assert_eq!(
        answer["result"]["_meta"]["dev.toolport/error"]["code"], "invalid_arguments",
        "{answer}"
    );
    assert_eq!(
        answer["result"]["_meta"]["dev.toolport/error"]["retryable"], false,
        "{answer}"
    );
}
