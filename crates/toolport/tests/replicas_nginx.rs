//! Replicas behind a real load balancer: Debian's nginx (round-robin, no
//! stickiness) in front of three `toolport serve` replicas sharing a real
//! redis-server, all on loopback (see `cluster/`). Each test starts its own
//! cluster on free ports. Run by `.ci/run`, which installs nginx and
//! redis-server (and the Python SDK for the first test).

mod cluster;
mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cluster::*;
use http::StatusCode;
use serde_json::{Value, json};
use support::*;

const DEMO: &[&str] = &["--demo"];

fn modern(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// A 2026-07-28 `tools/call`: the HTTP status, `Retry-After`, and the body.
async fn modern_call(addr: SocketAddr, tool: &str, params: Value) -> (StatusCode, Option<String>, Value) {
    let mut params = params;
    params["name"] = json!(tool);
    let (status, headers, body) = call(
        addr,
        "POST",
        &modern_headers("tools/call", Some(tool)),
        &modern("tools/call", params),
    )
    .await;
    let retry = headers.get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    (status, retry, body)
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

/// A handshake-era `tools/call` in `session`: status and body.
async fn session_call(addr: SocketAddr, session: &str, id: u64, tool: &str, args: Value) -> (StatusCode, Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}});
    let (status, _, answer) = call(addr, "POST", &legacy_headers(session), &body.to_string()).await;
    (status, answer)
}

/// The demo's `demo://jobs` counters on one replica.
async fn jobs(addr: SocketAddr) -> Value {
    let body = modern("resources/read", json!({"uri": "demo://jobs"}));
    let (_, _, answer) = call(
        addr,
        "POST",
        &modern_headers("resources/read", Some("demo://jobs")),
        &body,
    )
    .await;
    serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
}

async fn started(addr: SocketAddr) -> u64 {
    jobs(addr).await["started"].as_u64().unwrap()
}

async fn completed(addr: SocketAddr) -> u64 {
    jobs(addr).await["completed"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's), and Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
async fn python_clients_in_both_modes_complete_1000_calls_each_spread_over_all_replicas() {
    let c = Cluster::start(3, false, DEMO, &[]);
    let url = c.nginx.url();
    for mode in ["auto", "legacy"] {
        let args = [mode.as_ref(), url.as_ref(), "1000".as_ref()];
        let seen = tokio::task::block_in_place(|| run_python("replicas_client.py", &args));
        assert_eq!(seen["calls"], 1000, "{mode}: {seen}");
        assert_eq!(seen["errors"], 0, "{mode}: {seen}");
        assert_eq!(seen["booked"], 3, "{mode}: {seen}");
    }
    let mut shares = Vec::new();
    for replica in &c.replicas {
        let (status, metrics) = get(replica.addr, "/metrics").unwrap();
        assert_eq!(status, 200);
        shares.push(counter(
            &metrics,
            "toolport_tool_calls_total",
            r#"tool="echo",outcome="ok""#,
        ));
        assert_eq!(
            counter(&metrics, "toolport_tool_calls_total", r#"tool="echo",outcome="error""#),
            0.0
        );
    }
    assert_eq!(shares.iter().sum::<f64>(), 2000.0, "every call once: {shares:?}");
    for share in &shares {
        // Round-robin gives each about a third; every replica served its share.
        assert!(*share > 2000.0 / 3.0 * 0.5, "each replica's share: {shares:?}");
    }
    let log = c.nginx.access_log();
    let failed: Vec<&str> = log.lines().filter(|l| !l.starts_with('2')).collect();
    assert!(failed.is_empty(), "requests nginx did not answer 2xx: {failed:?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn a_book_table_input_request_answered_through_a_different_replica_completes() {
    let c = Cluster::start(3, false, DEMO, &[]);
    let (a, b) = (c.replicas[0].addr, c.replicas[1].addr);

    // 2026-07-28: the input request comes from A, the retry goes to B.
    let args = json!({"arguments": {"restaurant": "Chez Toolport"}});
    let (status, _, first) = modern_call(a, "book_table", args.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let state = first["result"]["requestState"]
        .as_str()
        .expect("input is required")
        .to_owned();
    let mut retry = args;
    retry["inputResponses"] = json!({"booking": {"action": "accept", "content": {"name": "Ada", "guests": 2}}});
    retry["requestState"] = json!(state);
    let (status, _, done) = modern_call(b, "book_table", retry).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(text(&done), "Booked a table for 2 at Chez Toolport under the name Ada.");

    // The handshake era: A asks over its SSE answer, the client answers through B.
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (_, headers, _) = call(a, "POST", &[JSON, ACCEPT], body).await;
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let booking = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "book_table", "arguments": {"restaurant": "Le Relais"}}});
    let mut stream = send(a, "POST", &legacy_headers(&session), &booking.to_string()).await;
    let (_, ask) = stream.next_message().await.expect("the elicitation request");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let reply = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Bo", "guests": 3}}});
    let (status, _, _) = call(b, "POST", &legacy_headers(&session), &reply.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, done) = stream.next_message().await.expect("the answer");
    assert_eq!(done["id"], 7, "{done}");
    assert_eq!(text(&done), "Booked a table for 3 at Le Relais under the name Bo.");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn a_handshake_era_session_opened_on_a_replica_continues_after_it_is_killed() {
    let c = Cluster::start(3, false, DEMO, &[]);
    let session = initialize(c.replicas[0].addr, "2025-11-25").await;
    let (status, answer) = session_call(c.nginx.addr, &session, 1, "echo", json!({"message": "before"})).await;
    assert_eq!((status, text(&answer)), (StatusCode::OK, "before"));
    c.replicas[0].signal("KILL");
    for id in 2..8 {
        let (status, answer) =
            session_call(c.nginx.addr, &session, id, "echo", json!({"message": id.to_string()})).await;
        assert_eq!(status, StatusCode::OK, "call {id}: {answer}");
        assert_eq!(text(&answer), id.to_string(), "call {id}");
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn an_sse_answer_cut_mid_stream_resumes_through_another_replica_with_nothing_lost_or_repeated() {
    let c = Cluster::start(3, false, DEMO, &[]);
    let (a, b) = (c.replicas[0].addr, c.replicas[1].addr);
    let session = initialize(a, "2025-11-25").await;
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "long_task", "arguments": {"steps": 20, "step_ms": 50}, "_meta": {"progressToken": "p"}}});
    let mut stream = send(a, "POST", &legacy_headers(&session), &body.to_string()).await;
    let mut progress = Vec::new();
    let mut last_id = None;
    while progress.len() < 4 {
        let (id, message) = stream.next_message().await.expect("progress");
        if message["method"] == "notifications/progress" {
            progress.push(message["params"]["progress"].as_f64().unwrap() as u32);
        }
        last_id = id.or(last_id);
    }
    drop(stream);
    let last_id = last_id.expect("events carry ids");
    let mut headers = legacy_headers(&session);
    headers[1] = ("accept", "text/event-stream");
    headers.push(("last-event-id", &last_id));
    let mut resumed = send(b, "GET", &headers, "").await;
    assert_eq!(resumed.status, StatusCode::OK);
    let answer = loop {
        let (_, message) = resumed.next_message().await.expect("the rest of the stream");
        if message["method"] == "notifications/progress" {
            progress.push(message["params"]["progress"].as_f64().unwrap() as u32);
        } else {
            break message;
        }
    };
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(text(&answer), "finished 20 steps");
    assert_eq!(progress, (1..=20).collect::<Vec<_>>(), "each step once, in order");
    assert!(resumed.next_event().await.is_none(), "the stream ends after the answer");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn a_listen_stream_gets_exactly_one_update_per_file_change_while_every_replica_watches() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("shared");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "a0").unwrap();
    std::fs::write(root.join("b.txt"), "b0").unwrap();
    let packs = dir.path().join("packs.json");
    let settings = json!({"fs": {"roots": [{"path": root}], "watch": true}, "enable_sql": false});
    std::fs::write(&packs, settings.to_string()).unwrap();
    let packs = packs.display().to_string();
    let c = Cluster::start(3, false, &["--packs-config", &packs], &[]);
    let uri = |name: &str| format!("file://{}/{name}", root.display());
    let listen = modern(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": [uri("a.txt"), uri("b.txt")]}}),
    );
    let mut listener = send(
        c.replicas[1].addr,
        "POST",
        &modern_headers("subscriptions/listen", None),
        &listen,
    )
    .await;
    let (_, ack) = listener.next_message().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    std::fs::write(root.join("a.txt"), "a1").unwrap();
    let (_, first) = listener.next_message().await.expect("an update");
    assert_eq!(first["params"]["uri"], uri("a.txt"), "{first}");
    // A second change, after the first one's update arrived: any duplicate
    // of the first (from another replica) would come before its update.
    std::fs::write(root.join("b.txt"), "b1").unwrap();
    let (_, second) = listener.next_message().await.expect("an update");
    assert_eq!(
        second["params"]["uri"],
        uri("b.txt"),
        "the next message is b's update, not a second a: {second}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn one_idempotency_key_runs_once_across_replicas_and_is_taken_over_after_its_owner_dies() {
    // Leases end with the deadline and the queue timeout: 3.5 s here.
    let env = [
        ("TOOLPORT_LIMITS__DEADLINE_MS", "3000"),
        ("TOOLPORT_LIMITS__QUEUE_TIMEOUT_MS", "500"),
    ];
    let c = Cluster::start(3, false, DEMO, &env);
    let (a, b) = (c.replicas[0].addr, c.replicas[1].addr);
    let keyed = |key: &str, steps: u32| json!({"arguments": {"steps": steps, "step_ms": 50}, "_meta": {"dev.toolport/idempotencyKey": key}});
    let with_meta = |params: Value| {
        // The key joins the era's own _meta entries.
        let mut body: Value = serde_json::from_str(&modern("tools/call", json!({}))).unwrap();
        let mut meta = body["params"]["_meta"].clone();
        meta.as_object_mut()
            .unwrap()
            .extend(params["_meta"].as_object().unwrap().clone());
        body["params"] = json!({"name": "long_task", "arguments": params["arguments"], "_meta": meta});
        body.to_string()
    };
    let send_keyed = |addr: SocketAddr, body: String| async move {
        call(addr, "POST", &modern_headers("tools/call", Some("long_task")), &body).await
    };
    let body = with_meta(keyed("once", 4));
    let (first, second) = tokio::join!(send_keyed(a, body.clone()), send_keyed(b, body));
    assert_eq!(first.0, StatusCode::OK, "{:?}", first.2);
    assert_eq!(first.2["result"], second.2["result"], "both get the one run's result");
    assert_eq!(text(&first.2), "finished 4 steps");
    assert_eq!(started(a).await + started(b).await, 1, "the tool ran once");
    assert_eq!(completed(a).await + completed(b).await, 1);

    // The owner dies mid-call: after its lease the key is taken over.
    let (a_before, b_completed) = (started(a).await, completed(b).await);
    let body = with_meta(keyed("orphan", 20));
    let owner = tokio::spawn(send_keyed(a, body.clone()));
    wait_until(Duration::from_secs(10), "the call starts on A", || {
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async { started(a).await == a_before + 1 })
        })
    });
    let claimed_at = Instant::now();
    c.replicas[0].signal("KILL");
    let _ = owner.await;
    // A duplicate waits for the owner, within its own deadline (3 s, shorter
    // than the lease): its client retries, and a retry after the lease runs.
    let mut answer = Value::Null;
    for attempt in 0..3 {
        let (status, _, got) = send_keyed(b, body.clone()).await;
        answer = got;
        if status == StatusCode::OK && answer["result"]["isError"] != true {
            break;
        }
        // The deadline, as a retryable tool error or a JSON-RPC -32001.
        let deadline = answer["error"]["code"] == -32001 || text(&answer).starts_with("Deadline exceeded");
        assert!(deadline, "attempt {attempt}: {answer}");
    }
    assert_eq!(text(&answer), "finished 20 steps");
    assert!(
        claimed_at.elapsed() >= Duration::from_millis(2500),
        "B waited for the lease to end (3.5 s from the claim): {:?}",
        claimed_at.elapsed()
    );
    assert_eq!(
        completed(b).await,
        b_completed + 1,
        "B ran it to the end once after taking it over"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn a_per_principal_rate_limit_holds_across_three_replicas_within_ten_percent() {
    let env = [("TOOLPORT_LIMITS__RATE_PER_PRINCIPAL", "{ per_second = 40, burst = 20 }")];
    let c = Cluster::start(3, false, DEMO, &env);
    let (allowed, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let window = Duration::from_secs(3);
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..6 {
        let (allowed, refused, nginx) = (allowed.clone(), refused.clone(), c.nginx.addr);
        workers.push(tokio::spawn(async move {
            while started.elapsed() < window {
                let (status, _, answer) = modern_call(nginx, "echo", json!({"arguments": {"message": "x"}})).await;
                match status {
                    StatusCode::OK => allowed.fetch_add(1, Ordering::SeqCst),
                    StatusCode::TOO_MANY_REQUESTS => refused.fetch_add(1, Ordering::SeqCst),
                    other => panic!("unexpected {other}: {answer}"),
                };
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let allowed = allowed.load(Ordering::SeqCst) as f64;
    let expected = 20.0 + 40.0 * elapsed;
    let error = (allowed - expected).abs() / expected;
    eprintln!(
        "rate limit across 3 replicas: {allowed} allowed, {} refused in {elapsed:.2} s; expected {expected:.0}; error {:.1} %",
        refused.load(Ordering::SeqCst),
        error * 100.0
    );
    assert!(refused.load(Ordering::SeqCst) > 0, "the limit was reached");
    assert!(error <= 0.10, "{allowed} allowed, {expected:.0} expected");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn with_redis_stopped_ready_fails_and_requests_are_refused_clearly_then_service_resumes() {
    let env = [(
        "TOOLPORT_LIMITS__RATE_PER_PRINCIPAL",
        "{ per_second = 1000, burst = 1000 }",
    )];
    let mut c = Cluster::start(3, true, DEMO, &env);
    let session = initialize(c.nginx.addr, "2025-11-25").await;
    let (status, answer) = session_call(c.nginx.addr, &session, 1, "echo", json!({"message": "kept"})).await;
    assert_eq!((status, text(&answer)), (StatusCode::OK, "kept"));
    for replica in &c.replicas {
        assert_eq!(get(replica.addr, "/ready").unwrap().0, 200);
    }

    c.redis.stop();
    for replica in &c.replicas {
        wait_until(Duration::from_secs(10), "/ready fails", || {
            get(replica.addr, "/ready").is_ok_and(|(status, body)| status == 503 && body.contains("state:"))
        });
    }
    let (status, headers, answer) = call(
        c.nginx.addr,
        "POST",
        &legacy_headers(&session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "x"}}}).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    assert!(headers.contains_key("retry-after"));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("state store is unavailable") && message.contains("retry"),
        "{message}"
    );
    let (status, retry, answer) = modern_call(c.nginx.addr, "echo", json!({"arguments": {"message": "x"}})).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "a rate-limited call needs the store: {answer}"
    );
    assert_eq!(retry.as_deref(), Some("1"));
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("rate limit"),
        "{answer}"
    );

    c.redis.restart();
    for replica in &c.replicas {
        wait_until(Duration::from_secs(15), "/ready passes again", || {
            get(replica.addr, "/ready").is_ok_and(|(status, _)| status == 200)
        });
    }
    let (status, answer) = session_call(c.nginx.addr, &session, 3, "echo", json!({"message": "after"})).await;
    assert_eq!(
        (status, text(&answer)),
        (StatusCode::OK, "after"),
        "the session lives on"
    );
    let (status, _, answer) = modern_call(c.nginx.addr, "echo", json!({"arguments": {"message": "y"}})).await;
    assert_eq!((status, text(&answer)), (StatusCode::OK, "y"));
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn sigterm_during_load_fails_no_request_at_nginx_while_one_replica_drains() {
    let env = [("TOOLPORT_HTTP__SHUTDOWN_GRACE_SECONDS", "5")];
    let mut c = Cluster::start(3, false, DEMO, &env);
    let stop = Arc::new(AtomicBool::new(false));
    let (done, failures) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(std::sync::Mutex::new(Vec::new())),
    );
    let mut workers = Vec::new();
    for worker in 0..6 {
        let (stop, done, failures, nginx) = (stop.clone(), done.clone(), failures.clone(), c.nginx.addr);
        workers.push(tokio::spawn(async move {
            // Half the workers in sessions, half stateless.
            let session = if worker % 2 == 0 {
                Some(initialize(nginx, "2025-11-25").await)
            } else {
                None
            };
            let mut id = 1;
            while !stop.load(Ordering::SeqCst) && id < 100_000 {
                id += 1;
                let (status, answer) = match &session {
                    Some(session) => session_call(nginx, session, id, "echo", json!({"message": "x"})).await,
                    None => {
                        let (status, _, answer) =
                            modern_call(nginx, "echo", json!({"arguments": {"message": "x"}})).await;
                        (status, answer)
                    }
                };
                if status == StatusCode::OK && text(&answer) == "x" {
                    done.fetch_add(1, Ordering::SeqCst);
                } else {
                    failures.lock().unwrap().push(format!("{status} {answer}"));
                }
            }
        }));
    }
    let count = |n: usize| {
        let done = done.clone();
        move || done.load(Ordering::SeqCst) >= n
    };
    wait_until(Duration::from_secs(20), "load runs", count(300));
    let before = done.load(Ordering::SeqCst);
    c.replicas[0].signal("TERM");
    assert!(
        c.replicas[0].exited_within(Duration::from_secs(15)),
        "the replica exits"
    );
    wait_until(
        Duration::from_secs(20),
        "load goes on",
        count(done.load(Ordering::SeqCst) + 300),
    );
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.await.unwrap();
    }
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} failed requests: {:?}\nnginx: {}",
        failures.len(),
        &failures[..failures.len().min(2)],
        c.nginx.error_log()
    );
    let log = c.nginx.access_log();
    let failed: Vec<&str> = log.lines().filter(|l| !l.starts_with('2')).collect();
    assert!(failed.is_empty(), "requests nginx did not answer 2xx: {failed:?}");
    let drained = c.replicas[0].addr.to_string();
    assert!(
        log.contains(&drained),
        "the drained replica served requests before it stopped"
    );
    eprintln!(
        "{before} calls before SIGTERM, {} in all, 0 failed",
        done.load(Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs redis-server and nginx (Debian's)"]
async fn a_draining_replica_ends_its_sse_answers_and_their_clients_resume_on_another() {
    let env = [("TOOLPORT_HTTP__SHUTDOWN_GRACE_SECONDS", "10")];
    let mut c = Cluster::start(3, false, DEMO, &env);
    let (a, b) = (c.replicas[0].addr, c.replicas[1].addr);
    let session = initialize(a, "2025-11-25").await;
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "long_task", "arguments": {"steps": 40, "step_ms": 50}, "_meta": {"progressToken": "p"}}});
    let mut stream = send(a, "POST", &legacy_headers(&session), &body.to_string()).await;
    let (mut progress, mut last_id): (Vec<u32>, Option<String>) = (Vec::new(), None);
    let mut on_stream = |id: Option<String>, message: &Value, progress: &mut Vec<u32>| {
        assert!(
            message.get("id").is_none(),
            "no answer on the drained stream: {message}"
        );
        if message["method"] == "notifications/progress" {
            progress.push(message["params"]["progress"].as_f64().unwrap() as u32);
        }
        last_id = id.or(last_id.take());
    };
    while progress.is_empty() {
        let (id, message) = stream.next_message().await.expect("progress");
        on_stream(id, &message, &mut progress);
    }
    c.replicas[0].signal("TERM");
    // After the drain delay (1 s) the answer stream ends without the answer.
    while let Some((id, message)) = stream.next_message().await {
        on_stream(id, &message, &mut progress);
    }
    assert!(progress.len() < 40, "the stream ended before the call did");
    let last_id = last_id.expect("events carry ids");
    let mut headers = legacy_headers(&session);
    headers[1] = ("accept", "text/event-stream");
    headers.push(("last-event-id", &last_id));
    let mut resumed = send(b, "GET", &headers, "").await;
    assert_eq!(resumed.status, StatusCode::OK);
    let answer = loop {
        let (_, message) = resumed
            .next_message()
            .await
            .expect("the rest, from the draining replica's work");
        if message["method"] == "notifications/progress" {
            progress.push(message["params"]["progress"].as_f64().unwrap() as u32);
        } else {
            break message;
        }
    };
    assert_eq!(text(&answer), "finished 40 steps", "{answer}");
    assert_eq!(progress, (1..=40).collect::<Vec<_>>(), "each step once, in order");
    assert!(
        c.replicas[0].exited_within(Duration::from_secs(15)),
        "the drained replica exits"
    );
}
