//! Graceful drain of a real `toolport serve` process: on SIGTERM `/ready`
//! fails at once while everything else is still served for the drain delay;
//! then the server stops accepting, ends standalone streams, lets in-flight
//! calls finish within the grace period and exits; what is still running
//! after the grace period is cut off.

mod support;

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use support::*;

/// A `toolport serve --demo` child with the given drain settings; its address.
fn demo_replica(drain_seconds: u64, grace_seconds: u64, extra: &[&str]) -> (Served, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolport"));
    command
        .arg("--demo")
        .args(extra)
        .env("TOOLPORT_HTTP__DRAIN_DELAY_SECONDS", drain_seconds.to_string())
        .env("TOOLPORT_HTTP__SHUTDOWN_GRACE_SECONDS", grace_seconds.to_string());
    let (served, url) = spawn_serve(&mut command);
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("an http URL ending in /mcp: {url}"))
        .parse()
        .unwrap();
    (served, addr)
}

/// Sends SIGTERM, as an orchestrator does to stop a replica.
fn terminate(served: &Served) {
    let status = Command::new("kill")
        .args(["-TERM", &served.0.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -TERM failed");
}

/// Waits (at most `limit`) for the child to exit; its exit status.
fn exit_within(served: &mut Served, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = served.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            started.elapsed() < limit,
            "toolport serve still running after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One request on a fresh connection; status, headers and body, or why the
/// exchange failed (refused, or the connection cut before the answer).
async fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(StatusCode, http::HeaderMap, String), String> {
    let stream = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((parts.status, parts.headers, String::from_utf8_lossy(&body).into_owned()))
}

async fn get(addr: SocketAddr, path: &str) -> (StatusCode, http::HeaderMap, String) {
    exchange(addr, "GET", path, &[], "")
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// A 2026-07-28 `tools/call`, stateless; the JSON-RPC answer.
async fn call_tool(addr: SocketAddr, tool: &str, arguments: &str) -> Result<(StatusCode, Value), String> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},{MODERN_META}}}}}"#
    );
    let (status, _, text) = exchange(addr, "POST", "/mcp", &modern_headers("tools/call", Some(tool)), &body).await?;
    let answer = serde_json::from_str(&text).map_err(|e| format!("{status}: {e}: {text}"))?;
    Ok((status, answer))
}

/// The text of a successful tool result.
fn result_text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

/// How many `long_task` runs the demo server has started.
async fn long_tasks_started(addr: SocketAddr) -> u64 {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"j","method":"resources/read","params":{{"uri":"demo://jobs",{MODERN_META}}}}}"#
    );
    let headers = modern_headers("resources/read", Some("demo://jobs"));
    let (_, _, text) = exchange(addr, "POST", "/mcp", &headers, &body).await.unwrap();
    let answer: Value = serde_json::from_str(&text).unwrap();
    let jobs: Value = serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    jobs["started"].as_u64().unwrap()
}

/// Waits (at most 10 s) until the replica has started `count` long tasks.
async fn until_long_tasks(addr: SocketAddr, count: u64) {
    for _ in 0..2000 {
        if long_tasks_started(addr).await == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("long_task did not start {count} run(s) within 10 s");
}

#[tokio::test]
async fn sigterm_fails_ready_at_once_serves_through_the_drain_and_lets_in_flight_calls_finish() {
    let (mut served, addr) = demo_replica(2, 20, &[]);
    assert_eq!(get(addr, "/ready").await.0, StatusCode::OK);
    // A handshake-era session with its standalone stream open.
    let session = initialize(addr, "2025-11-25").await;
    let mut get_headers = legacy_headers(&session);
    get_headers.retain(|(name, _)| *name != "content-type");
    let mut standalone = send(addr, "GET", &get_headers, "").await;
    assert_eq!(standalone.status, StatusCode::OK);
    // A slow call (4 s) in flight across the drain.
    let slow = tokio::spawn(call_tool(addr, "long_task", r#"{"steps":40,"step_ms":100}"#));
    until_long_tasks(addr, 1).await;

    terminate(&served);
    let sent = Instant::now();
    let mut ready = StatusCode::OK;
    for _ in 0..1000 {
        ready = get(addr, "/ready").await.0;
        if ready != StatusCode::OK {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(
        ready,
        StatusCode::SERVICE_UNAVAILABLE,
        "/ready fails once SIGTERM arrived"
    );
    let (_, _, body) = get(addr, "/ready").await;
    assert_eq!(body, "draining: shutting down\n");
    // Still serving during the drain delay, and telling clients to reconnect.
    let (health, headers, _) = get(addr, "/health").await;
    assert_eq!(health, StatusCode::OK);
    assert_eq!(headers.get("connection").unwrap(), "close");
    let (status, answer) = call_tool(addr, "echo", r#"{"message":"still here"}"#).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(result_text(&answer), "still here");
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "the checks above ran within the drain delay ({:?}), else they proved nothing",
        sent.elapsed()
    );
    assert!(
        !slow.is_finished(),
        "the slow call is still running when the drain ends"
    );

    // After the drain delay: the standalone stream ends so its client
    // reconnects elsewhere; new connections are refused.
    let mut events = 0;
    while standalone.next_event().await.is_some() {
        events += 1;
        assert!(events < 100, "the standalone stream ended");
    }
    let mut refused = false;
    for _ in 0..1000 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(refused, "new connections are refused after the drain delay");

    // The call in flight finishes, then the process exits on its own.
    let (status, answer) = slow.await.unwrap().expect("the in-flight call is answered");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(result_text(&answer), "finished 40 steps");
    let exit = exit_within(&mut served, Duration::from_secs(20));
    assert!(exit.success(), "toolport serve exits cleanly after a drain: {exit}");
}

#[tokio::test]
async fn work_still_running_after_the_grace_period_is_cut_off_and_the_process_exits() {
    let (mut served, addr) = demo_replica(0, 1, &[]);
    // A call that would run for a minute.
    let endless = tokio::spawn(call_tool(addr, "long_task", r#"{"steps":600,"step_ms":100}"#));
    until_long_tasks(addr, 1).await;
    terminate(&served);
    // Well before the call would end: the 1 s grace period cut it.
    let exit = exit_within(&mut served, Duration::from_secs(15));
    assert!(exit.success(), "{exit}");
    let outcome = endless.await.unwrap();
    assert!(outcome.is_err(), "the cut-off call gets no answer: {outcome:?}");
}

#[tokio::test]
async fn bad_drain_settings_are_refused_with_the_key() {
    let output = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--bind", "127.0.0.1:0"])
        .env("TOOLPORT_HTTP__SHUTDOWN_GRACE_SECONDS", "soon")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("http.shutdown_grace_seconds")
            && stderr.contains("TOOLPORT_HTTP__SHUTDOWN_GRACE_SECONDS")
            && stderr.contains("a whole number"),
        "{stderr}"
    );
}
