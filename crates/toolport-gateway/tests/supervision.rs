//! The gateway's own guarantees, with the fixture server as the upstream:
//! every answer to its caller under load, per-session isolation, a killed
//! upstream failing its calls at once and coming back, start-up refusals,
//! and the upstream's questions across the hop in the era combinations that
//! need a 2026-07-28 upstream (the fixture is a Toolport server).

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::*;
use toolport_gateway::{Gateway, GatewayError, GatewaySection, Share, SlotState, UpstreamConfig};
use toolport_protocol::ProtocolVersion;

const LEGACY: Option<ProtocolVersion> = Some(ProtocolVersion::V2025_11_25);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_clients_times_fifty_calls_each_get_their_own_answers() {
    let gw = start(vec![fixture("fx")]).await;
    let mut clients = Vec::new();
    for i in 0..100 {
        clients.push(client(&gw.url, if i % 2 == 0 { LEGACY } else { None }).await);
    }
    let mut tasks = Vec::new();
    for (i, c) in clients.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            for j in 0..50 {
                let mine = format!("client {i} call {j}");
                let result = c
                    .call_tool("fx__echo", json!({ "text": mine }))
                    .await
                    .expect("answered");
                assert_eq!(text(&result), mine, "an answer reached the wrong caller");
            }
            50
        }));
    }
    let mut answered = 0;
    for t in tasks {
        answered += t.await.unwrap();
    }
    assert_eq!(answered, 5000);
    gw.stop().await;
}

#[tokio::test]
async fn two_sessions_of_a_per_session_upstream_never_share_its_state() {
    let up = UpstreamConfig {
        share: Share::PerSession,
        ..fixture("fx")
    };
    let gw = start(vec![up]).await;
    let (a, b) = (client(&gw.url, LEGACY).await, client(&gw.url, LEGACY).await);
    for expected in ["1", "2", "3"] {
        assert_eq!(text(&a.call_tool("fx__count", json!({})).await.unwrap()), expected);
    }
    assert_eq!(
        text(&b.call_tool("fx__count", json!({})).await.unwrap()),
        "1",
        "b sees a's counter"
    );
    let pid_a = text(&a.call_tool("fx__pid", json!({})).await.unwrap());
    let pid_b = text(&b.call_tool("fx__pid", json!({})).await.unwrap());
    assert_ne!(pid_a, pid_b, "both sessions talk to one process");
    // A 2026-07-28 caller has no session: each request gets a process of its own.
    let stateless = client(&gw.url, None).await;
    for _ in 0..2 {
        assert_eq!(text(&stateless.call_tool("fx__count", json!({})).await.unwrap()), "1");
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_upstream_fails_its_calls_at_once_restarts_and_others_never_notice() {
    let gw = start(vec![fixture("victim"), fixture("bystander")]).await;
    let c = client(&gw.url, LEGACY).await;
    let pid: i32 = text(&c.call_tool("victim__pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    let mut pending = Vec::new();
    for _ in 0..20 {
        let c = c.clone();
        pending.push(tokio::spawn(async move {
            c.call_tool("victim__sleep", json!({ "ms": 20_000 })).await
        }));
    }
    let bystander = {
        let c = c.clone();
        tokio::spawn(async move {
            for i in 0..40 {
                let t = format!("still here {i}");
                let r = c.call_tool("bystander__echo", json!({ "text": t })).await.unwrap();
                assert_eq!(text(&r), t);
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    for p in pending {
        let result = p.await.unwrap().expect("a failed call is an isError result");
        assert_eq!(result.is_error, Some(true));
        assert!(text(&result).contains("went away"), "{}", text(&result));
    }
    assert!(
        killed.elapsed() < Duration::from_secs(1),
        "pending calls took {:?} to fail",
        killed.elapsed()
    );
    eventually("the victim serves again", || {
        let c = c.clone();
        async move {
            c.call_tool("victim__echo", json!({"text": "back"}))
                .await
                .is_ok_and(|r| text(&r) == "back")
        }
    })
    .await;
    let new_pid: i32 = text(&c.call_tool("victim__pid", json!({})).await.unwrap())
        .parse()
        .unwrap();
    assert_ne!(new_pid, pid);
    bystander.await.expect("the other upstream never failed a call");
    gw.stop().await;
}

/// Whether a process is gone (or a zombie nobody reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstreams_grandchildren_die_with_it() {
    // The upstream is a shell that runs the fixture as its child, as `npx` does.
    let script = format!("{}; true", env!("CARGO_BIN_EXE_toolport-gateway-fixture"));
    let up = UpstreamConfig {
        restart: quick_restarts(),
        ..UpstreamConfig::stdio("sh", "sh", &["-c", &script])
    };
    let gw = start(vec![up]).await;
    let c = client(&gw.url, LEGACY).await;
    let grandchild: i32 = text(&c.call_tool("sh__pid", json!({})).await.unwrap()).parse().unwrap();
    let shell = parent_of(grandchild);
    assert_ne!(shell, std::process::id() as i32, "the fixture is the shell's child");
    let call = {
        let c = c.clone();
        tokio::spawn(async move { c.call_tool("sh__sleep", json!({"ms": 20_000})).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Only the shell is killed; its process group takes the fixture along.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(shell).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let failed = tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .expect("the call failed at once");
    assert_eq!(failed.unwrap().unwrap().is_error, Some(true));
    eventually("the grandchild is gone", || async move { gone(grandchild) }).await;
    // Restarted, and stopped for good with the gateway: the new group goes too.
    eventually("it serves again", || {
        let c = c.clone();
        async move {
            c.call_tool("sh__pid", json!({}))
                .await
                .is_ok_and(|r| r.is_error != Some(true))
        }
    })
    .await;
    let second: i32 = text(&c.call_tool("sh__pid", json!({})).await.unwrap()).parse().unwrap();
    gw.stop().await;
    eventually("the second grandchild is gone after the stop", || async move {
        gone(second)
    })
    .await;
}

#[tokio::test]
async fn the_upstreams_questions_cross_the_hop_with_a_2026_upstream() {
    let gw = start(vec![fixture("fx")]).await;
    // A handshake-era caller, a 2026-07-28 upstream: its InputRequiredResult
    // becomes a request on the caller's session; the answer goes up as the retry.
    let legacy = client(&gw.url, LEGACY).await;
    assert_eq!(
        text(&legacy.call_tool("fx__ask", json!({})).await.unwrap()),
        "hello Ada"
    );
    // A 2026-07-28 caller: the question comes back as InputRequiredResult and
    // the upstream call waits, parked, for the retry.
    let modern = client(&gw.url, None).await;
    assert_eq!(
        modern.server().await.unwrap().protocol_version,
        ProtocolVersion::V2026_07_28
    );
    assert_eq!(
        text(&modern.call_tool("fx__ask", json!({})).await.unwrap()),
        "hello Ada"
    );
    gw.stop().await;
}

#[tokio::test]
async fn progress_crosses_the_hop_with_the_callers_token() {
    let gw = start(vec![fixture("fx")]).await;
    for version in [LEGACY, None] {
        let c = client(&gw.url, version).await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = toolport_client::CallOptions::default().progress(tx);
        let result = c.call_tool_with("fx__sleep", json!({"ms": 50}), options).await.unwrap();
        assert_eq!(text(&result), "slept 50 ms");
        let mut seen = Vec::new();
        while let Ok(p) = rx.try_recv() {
            seen.push(p.progress);
        }
        assert!(!seen.is_empty(), "{version:?}: no progress reached the caller");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    }
    gw.stop().await;
}

#[tokio::test]
async fn a_caller_that_gives_up_cancels_the_call_upstream() {
    let gw = start(vec![fixture("fx")]).await;
    let c = client(&gw.url, LEGACY).await;
    let options = toolport_client::CallOptions::default().timeout(Duration::from_millis(300));
    let started = Instant::now();
    let outcome = c.call_tool_with("fx__sleep", json!({"ms": 10_000}), options).await;
    assert!(outcome.is_err());
    assert!(started.elapsed() < Duration::from_secs(2));
    // The upstream slot has nothing in flight any more once the cancellation went through.
    let echo = c.call_tool("fx__echo", json!({"text": "after"})).await.unwrap();
    assert_eq!(text(&echo), "after");
    gw.stop().await;
}

#[tokio::test]
async fn definitions_that_cannot_be_served_are_refused_at_start_up() {
    let server = toolport_server::Server::builder("t", "1").build().unwrap();
    let long = GatewaySection {
        separator: "_".repeat(126),
        ..GatewaySection::default()
    };
    let err = Gateway::start(long, vec![fixture("fx")], &server).await.unwrap_err();
    assert!(matches!(err, GatewayError::Definitions(_)));
    assert!(err.to_string().contains("longer than 128"), "{err}");
    let with_resource = |name: &str| {
        let mut up = fixture(name);
        up.env.insert("FIXTURE_RESOURCE".into(), "fixture://info".into());
        up
    };
    let twice = vec![with_resource("a"), with_resource("b")];
    let err = Gateway::start(GatewaySection::default(), twice, &server)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already offered by upstream a"), "{err}");
    let bad = vec![UpstreamConfig::stdio("a b", "x", &[])];
    assert!(matches!(
        Gateway::start(GatewaySection::default(), bad, &server).await,
        Err(GatewayError::Config(_))
    ));
}

#[tokio::test]
async fn an_optional_upstream_that_cannot_start_only_drops_its_tools() {
    let broken = UpstreamConfig {
        required: false,
        ..UpstreamConfig::stdio("broken", "/nonexistent/command", &[])
    };
    let gw = start(vec![fixture("fx"), broken]).await;
    let c = client(&gw.url, LEGACY).await;
    let names: Vec<String> = c.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"fx__echo".to_owned()));
    assert!(!names.iter().any(|n| n.starts_with("broken__")));
    assert_eq!(
        get(&gw.base, "/ready").await.0,
        200,
        "an optional upstream does not make /ready fail"
    );
    let report = gw.gateway.report();
    assert!(report.iter().any(|r| r.name == "broken" && r.state != SlotState::Up));
    gw.stop().await;
}
