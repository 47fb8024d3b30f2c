//! What operators rely on: health, readiness and metrics endpoints, 429 with
//! Retry-After, slow consumers cut off, vanished clients' work cancelled, and
//! the audit stream with its tamper check.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolport_http::HttpConfig;
use toolport_server::Server;
use toolport_server::audit::{AuditKey, AuditLog, AuditOptions};
use toolport_server::policy::{PolicyConfig, ToolPolicyConfig};

#[tokio::test]
async fn health_ready_and_metrics() {
    let server = toolport::demo::server();
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::default()
    };
    let bound = toolport_http::HttpServer::new(server, config)
        .metrics(|| "# TYPE toolport_up gauge\ntoolport_up 1\n".to_owned())
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    for (path, expected) in [
        ("/health", "ok\n"),
        ("/ready", "ready\n"),
        ("/metrics", "toolport_up 1"),
    ] {
        let mut response = send_path(addr, path).await;
        assert_eq!(response.0, StatusCode::OK, "{path}");
        assert!(
            std::mem::take(&mut response.1).contains(expected),
            "{path}: {}",
            response.1
        );
    }
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

async fn send_path(addr: std::net::SocketAddr, path: &str) -> (StatusCode, String) {
    use http_body_util::BodyExt;
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let request = http::Request::get(path)
        .header("host", addr.to_string())
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn overload_is_429_with_retry_after() {
    let policies = PolicyConfig {
        tools: BTreeMap::from([(
            "echo".to_owned(),
            ToolPolicyConfig {
                rate: Some(toolport_server::policy::RateConfig {
                    per_second: 0.2,
                    burst: 1,
                }),
                ..Default::default()
            },
        )]),
        ..PolicyConfig::default()
    };
    let server = toolport::demo::install(Server::builder("t", "1"))
        .policies(policies)
        .build()
        .unwrap();
    let s = TestServer::start(server, HttpConfig::default()).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m"}},{MODERN_META}}}}}"#
    );
    let headers = modern_headers("tools/call", Some("echo"));
    assert_eq!(call(s.addr, "POST", &headers, &body).await.0, StatusCode::OK);
    let (status, response_headers, answer) = call(s.addr, "POST", &headers, &body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert_eq!(answer["error"]["code"], -32010);
    let retry: u64 = response_headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=5).contains(&retry), "Retry-After {retry}");
    // A handshake-era session gets the same status.
    let session = initialize(s.addr, "2025-11-25").await;
    let legacy =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"}}}"#;
    assert_eq!(
        call(s.addr, "POST", &legacy_headers(&session), legacy).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
}

/// A tool that sends progress notifications of 2 KB as fast as it can, and
/// counts its runs that ended (finished or stopped).
fn flood_server(ended: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> Server {
    use toolport_server::{NoArgs, RequestContext, tool};
    struct Ended(std::sync::Arc<std::sync::atomic::AtomicUsize>);
    impl Drop for Ended {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    Server::builder("t", "1")
        .tool(tool("flood").handler(move |cx: RequestContext, _: NoArgs| {
            let ended = Ended(ended.clone());
            async move {
                let _ended = ended;
                let padding = "x".repeat(2048);
                for i in 0..20_000 {
                    cx.progress(f64::from(i), None, Some(padding.clone())).await;
                }
                "flooded"
            }
        }))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_its_stream_is_cut_off_and_memory_stays_bounded() {
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let s = TestServer::start(
        flood_server(ended.clone()),
        HttpConfig {
            stream_buffer: 16,
            ..HttpConfig::default()
        },
    )
    .await;
    // 20,000 events of 2 KB (40 MB) against a client that reads nothing: far
    // more than the socket buffers and the stream's queue of 16 hold.
    let modern = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let session = initialize(s.addr, "2025-11-25").await;
    let legacy = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood","arguments":{},"_meta":{"progressToken":2}}}"#;
    for (run, (headers, body)) in [
        (modern_headers("tools/call", Some("flood")), modern),
        (legacy_headers(&session), legacy),
    ]
    .into_iter()
    .enumerate()
    {
        let mut stream = send(s.addr, "POST", &headers, body).await;
        assert_eq!(stream.headers["content-type"], "text/event-stream");
        // Read nothing until the tool's run has ended (stopped with its
        // reader in 2026-07-28, finished into the event log in the handshake
        // era), then read what was left in flight.
        let deadline = Instant::now() + Duration::from_secs(30);
        while ended.load(std::sync::atomic::Ordering::SeqCst) <= run && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            ended.load(std::sync::atomic::Ordering::SeqCst),
            run + 1,
            "the run did not end"
        );
        let mut received = 0;
        let mut answered = false;
        while let Some((_, message)) = stream.next_message().await {
            if message["method"] == "notifications/progress" {
                received += 1;
            }
            answered |= message.get("result").is_some();
        }
        assert!(
            received < 20_000 && !answered,
            "the reader was cut off ({received} of 20000 delivered, answered: {answered})"
        );
    }
}

#[tokio::test]
async fn a_vanished_handshake_client_has_its_work_cancelled_within_5_seconds() {
    let s = TestServer::demo(HttpConfig {
        resume_grace: Duration::from_secs(2),
        ..HttpConfig::default()
    })
    .await;
    let session = initialize(s.addr, "2025-11-25").await;
    let before = jobs(&s).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long_task","arguments":{"steps":1000,"step_ms":20},"_meta":{"progressToken":1}}}"#;
    let mut stream = send(s.addr, "POST", &legacy_headers(&session), body).await;
    stream.next_message().await.expect("a first progress event");
    drop(stream);
    let gone = Instant::now();
    let mut after = before.clone();
    while gone.elapsed() < Duration::from_secs(10) && after["cancelled"] == before["cancelled"] {
        tokio::time::sleep(Duration::from_millis(50)).await;
        after = jobs(&s).await;
    }
    assert_eq!(
        after["cancelled"].as_u64(),
        before["cancelled"].as_u64().map(|n| n + 1),
        "{before} -> {after}"
    );
    assert!(
        gone.elapsed() < Duration::from_secs(5),
        "cancelled after {:?}",
        gone.elapsed()
    );
}

#[tokio::test]
async fn every_tool_call_is_audited_and_tampering_is_found() {
    let dir = std::env::temp_dir().join(format!("toolport-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&path);
    let key_file = dir.join("audit.key");
    let key = AuditKey::load_or_create(&key_file).unwrap();
    let options = AuditOptions {
        redact: vec!["message".into()],
        ..AuditOptions::default()
    };
    let audit = AuditLog::open(path.to_str().unwrap(), key, options).unwrap();
    let server = toolport::demo::install(Server::builder("t", "1"))
        .audit(audit)
        .build()
        .unwrap();
    let s = TestServer::start(server, HttpConfig::default()).await;
    for (i, city) in ["Paris", "Rome"].iter().enumerate() {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"get_weather","arguments":{{"city":"{city}"}},{MODERN_META}}}}}"#
        );
        call(
            s.addr,
            "POST",
            &modern_headers("tools/call", Some("get_weather")),
            &body,
        )
        .await;
    }
    let secret = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"s3cret"}},{MODERN_META}}}}}"#
    );
    call(s.addr, "POST", &modern_headers("tools/call", Some("echo")), &secret).await;
    // Each record is queued before its call is answered; wait for the writes.
    // The closing checkpoint seals the stream.
    s.server.close_audit();
    let text = std::fs::read_to_string(&path).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "call")
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["tool"], "get_weather");
    assert_eq!(records[0]["arguments"], json!({"city": "Paris"}));
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[2]["arguments"], json!({"message": "[redacted]"}));
    assert!(!text.contains("s3cret"));
    let verify = |path: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["audit", "verify"])
            .arg(path)
            .arg("--key-file")
            .arg(&key_file)
            .output()
            .unwrap()
    };
    let ok = verify(&path);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(
        String::from_utf8_lossy(&ok.stdout).contains("3 records in 1 runs, chain intact, closed"),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    std::fs::write(&path, text.replacen("Rome", "Oslo", 1)).unwrap();
    let broken = verify(&path);
    assert_eq!(broken.status.code(), Some(1));
    let message = String::from_utf8_lossy(&broken.stderr);
    assert!(
        message.contains("record 3 (line 3)") && message.contains("edited"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `toolport serve` exposes what an operator graphs and alerts on: requests
/// and errors per method, latency histograms per method and per tool, calls
/// in flight, queue waits, rejections by reason, open sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolport_serve_exports_its_request_tool_gate_and_session_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolport.toml");
    std::fs::write(
        &config,
        "[limits]\nqueue = 4\nqueue_timeout_ms = 100\n\
         [limits.tools.long_task]\nmax_concurrent = 1\n\
         [limits.tools.get_weather.rate]\nper_second = 0.001\nburst = 1\n",
    )
    .unwrap();
    let (_served, url) = spawn_serve(
        std::process::Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--config"])
            .arg(&config),
    );
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let _session = initialize(addr, "2025-11-25").await;
    let call = |id: u32, tool: &'static str, arguments: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},{MODERN_META}}}}}"#
        );
        async move { support::call(addr, "POST", &modern_headers("tools/call", Some(tool)), &body).await }
    };
    let (status, _, answer) = call(1, "echo", r#"{"message":"hi"}"#).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, _, _) = call(2, "get_weather", r#"{"city":"Oslo"}"#).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, answer) = call(3, "get_weather", r#"{"city":"Oslo"}"#).await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "the rate limit of one call: {answer}"
    );

    // One long call holds the tool's only place; a second waits its 100 ms and is refused.
    let long = tokio::spawn(call(4, "long_task", r#"{"steps":40,"step_ms":250}"#));
    assert!(
        metric_shows(addr, "toolport_requests_in_flight 1").await,
        "the long call shows in flight"
    );
    let (status, _, answer) = call(5, "long_task", r#"{"steps":1,"step_ms":0}"#).await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "the queue wait ran out: {answer}"
    );

    let (status, text) = send_path(addr, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    for expected in [
        r#"toolport_requests_total{method="tools/call",outcome="ok"} 2"#,
        r#"toolport_requests_total{method="tools/call",outcome="-32010"} 2"#,
        r#"toolport_requests_total{method="initialize",outcome="ok"} 1"#,
        r#"toolport_request_duration_seconds_bucket{method="tools/call",le="+Inf"} 4"#,
        r#"toolport_tool_calls_total{tool="echo",outcome="ok"} 1"#,
        r#"toolport_tool_call_duration_seconds_bucket{tool="echo",le="+Inf"} 1"#,
        r#"toolport_rejections_total{reason="rate_limited"} 1"#,
        r#"toolport_rejections_total{reason="queue_timeout"} 1"#,
        r#"toolport_queue_wait_seconds_count 1"#,
        "toolport_sessions 1",
    ] {
        assert!(text.lines().any(|l| l == expected), "missing {expected:?} in\n{text}");
    }
    assert!(text.lines().any(|l| l == "toolport_requests_in_flight 1"), "{text}");
    long.abort();
    // The client of the long call went away: its call is dropped and counted out.
    assert!(
        metric_shows(addr, "toolport_requests_in_flight 0").await,
        "the abandoned call left toolport_requests_in_flight within 5 s"
    );
}

/// Whether `/metrics` shows `line` within 5 s.
async fn metric_shows(addr: std::net::SocketAddr, line: &str) -> bool {
    for _ in 0..250 {
        let (_, text) = send_path(addr, "/metrics").await;
        if text.lines().any(|l| l == line) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
