//! The client against Toolport's own server over Streamable HTTP, in both
//! eras: concurrency, deadlines, cancellation, progress, input (MRTR and
//! server requests), and recovery when the server restarts.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::net::TcpListener;
use toolport_client::handler::{self, BoxFuture, accept_defaults};
use toolport_client::{CallOptions, Client, ClientError, ClientHandler, ClientOptions, VersionPolicy};
use toolport_protocol::capabilities::ClientCapabilities;
use toolport_protocol::elicitation::{ElicitRequestParams, ElicitResult};
use toolport_protocol::{ErrorObject, ProtocolVersion};

use common::{Running, eventually};

const ERAS: [VersionPolicy; 3] = [
    VersionPolicy::Auto,
    VersionPolicy::Pinned(ProtocolVersion::V2025_11_25),
    VersionPolicy::Pinned(ProtocolVersion::V2025_03_26),
];

fn options(version: VersionPolicy) -> ClientOptions {
    ClientOptions {
        version,
        request_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

/// Accepts every form with its defaults.
#[derive(Debug)]
struct Defaults;

impl ClientHandler for Defaults {
    fn capabilities(&self) -> ClientCapabilities {
        handler::capabilities(true, false, false)
    }
    fn elicit(&self, request: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move { Ok(accept_defaults(&request)) })
    }
}

/// Starts a `slow` call of a minute and waits (bounded) until the server runs it.
async fn slow_call_running(
    client: &Client,
    server: &Running,
) -> tokio::task::JoinHandle<Result<toolport_protocol::tools::CallToolResult, ClientError>> {
    let started = server.counters.started.load(Ordering::SeqCst);
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", json!({"ms": 60_000})).await }
    });
    let running = eventually(Duration::from_secs(5), || {
        server.counters.started.load(Ordering::SeqCst) > started
    });
    assert!(running.await, "the slow call did not start");
    call
}

/// Waits (bounded) until the server has seen `expected` cancelled runs.
async fn assert_cancelled(server: &Running, expected: usize, what: &str) {
    let seen = eventually(Duration::from_secs(5), || {
        server.counters.cancelled.load(Ordering::SeqCst) == expected
    });
    assert!(seen.await, "{what}: the server did not see the call stop");
}

fn text(result: &toolport_protocol::tools::CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_calls_each_get_their_own_answer_in_both_eras() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    for version in ERAS {
        let client = Client::http(server.url()).options(options(version)).build().unwrap();
        let calls = (0..100).map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let result = client.call_tool("echo", json!({"message": format!("call {i}")})).await;
                (i, result)
            })
        });
        let calls: Vec<_> = calls.collect();
        for call in calls {
            let (i, result) = call.await.unwrap();
            assert_eq!(text(&result.unwrap()), format!("call {i}"), "{version:?}");
        }
        let era = client.server().await.unwrap().protocol_version;
        match version {
            VersionPolicy::Auto => assert_eq!(era, ProtocolVersion::V2026_07_28),
            VersionPolicy::Pinned(v) => assert_eq!(era, v),
        }
        client.close().await;
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout_not_a_hang() {
    // Accepts connections and reads, but never writes a byte.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let client = Client::http(format!("http://{addr}/mcp"))
        .options(ClientOptions {
            request_timeout: Duration::from_millis(500),
            probe_timeout: Duration::from_millis(200),
            ..ClientOptions::default()
        })
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(err, ClientError::Timeout(Duration::from_millis(500)));
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // A per-call override wins over the default.
    let started = Instant::now();
    let err = client
        .request(
            "tools/list",
            json!({}),
            CallOptions::default().timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
    assert_eq!(err, ClientError::Timeout(Duration::from_millis(100)));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_or_timed_out_call_stops_on_the_server_in_both_eras() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    let mut expected = 0;
    for version in ERAS {
        let client = Client::http(server.url())
            .options(options(version))
            .connect()
            .await
            .unwrap();
        // Timed out: cancelled.
        let err = client
            .call_tool_with(
                "slow",
                json!({"ms": 60_000}),
                CallOptions::default().timeout(Duration::from_millis(300)),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout(_)), "{err}");
        expected += 1;
        assert_cancelled(&server, expected, &format!("{version:?}: timed-out")).await;
        // Dropped by its caller: cancelled.
        let call = slow_call_running(&client, &server).await;
        call.abort();
        expected += 1;
        assert_cancelled(&server, expected, &format!("{version:?}: dropped")).await;
        client.close().await;
    }
}

#[tokio::test]
async fn progress_reaches_its_call_and_input_is_answered_in_both_eras() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    for version in ERAS {
        let client = Client::http(server.url())
            .options(options(version))
            .handler(Defaults)
            .connect()
            .await
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let result = client
            .call_tool_with("steps", json!({"steps": 3}), CallOptions::default().progress(tx))
            .await
            .unwrap();
        assert_eq!(text(&result), "3 steps");
        let mut seen = Vec::new();
        while let Ok(p) = rx.try_recv() {
            seen.push(p.progress);
        }
        assert_eq!(seen, [1.0, 2.0, 3.0], "{version:?}");
        // MRTR in 2026-07-28, an elicitation/create request in the handshake era.
        let result = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(text(&result), "hello Ada", "{version:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn without_a_handler_a_question_is_a_clear_error() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    let client = Client::http(server.url())
        .options(options(VersionPolicy::Auto))
        .build()
        .unwrap();
    let result = client.call_tool("ask", json!({})).await;
    // The server may refuse itself (missing capability) or ask anyway.
    match result {
        Err(ClientError::Remote(e)) => {
            assert_eq!(e.code, toolport_protocol::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
        }
        Err(ClientError::InputUnavailable(why)) => assert!(why.contains("elicitation"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_fails_calls_fast_and_a_restarted_one_is_used_again() {
    let mut server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    let addr = server.addr;
    for version in ERAS {
        let client = Client::http(server.url())
            .options(options(version))
            .connect()
            .await
            .unwrap();
        assert_eq!(
            text(&client.call_tool("echo", json!({"message": "before"})).await.unwrap()),
            "before"
        );
        // Stop the server with a call in flight: the call fails (`slow` is
        // not safe to repeat) long before its timeout.
        let call = slow_call_running(&client, &server).await;
        let stopped = Instant::now();
        server.stop().await;
        let err = call.await.unwrap().unwrap_err();
        assert!(stopped.elapsed() < Duration::from_secs(5), "{version:?}: {err}");
        assert!(!matches!(err, ClientError::Timeout(_)), "{version:?}: {err}");
        // A new server on the same port has forgotten every session: the
        // next call reconnects (with a new session in the handshake era).
        server = Running::start(addr).await;
        let result = client.call_tool("echo", json!({"message": "after"})).await.unwrap();
        assert_eq!(text(&result), "after", "{version:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn calls_made_while_the_server_is_down_wait_for_it_with_backoff() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    let addr = server.addr;
    server.stop().await;
    let client = Client::http(format!("http://{addr}/mcp"))
        .options(options(VersionPolicy::Auto))
        .build()
        .unwrap();
    // While the server is down, a stand-in answers 503 (as a load balancer
    // with no backend does) and counts the attempts: the real server comes
    // up only once the client has tried again after a backoff.
    let stand_in = TcpListener::bind(addr).await.unwrap();
    let (attempts_tx, mut attempts) = tokio::sync::mpsc::unbounded_channel();
    let unavailable = tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = stand_in.accept().await else {
                return;
            };
            let attempts = attempts_tx.clone();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buffer[..n]),
                    }
                }
                let reply = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                let _ = socket.write_all(reply).await;
                let _ = attempts.send(());
            });
        }
    });
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("echo", json!({"message": "late"})).await }
    });
    for attempt in 1..=2 {
        tokio::time::timeout(Duration::from_secs(10), attempts.recv())
            .await
            .unwrap_or_else(|_| panic!("attempt {attempt} within 10 s"))
            .unwrap();
    }
    unavailable.abort();
    let _ = unavailable.await;
    let _server = Running::start(addr).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(text(&result), "late");
    // With nothing coming back, the client gives up with a clear error.
    let nobody = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let client = Client::http(format!("http://{nobody}/mcp"))
        .options(ClientOptions {
            backoff: toolport_client::Backoff {
                initial: Duration::from_millis(10),
                max: Duration::from_millis(50),
                max_attempts: 3,
            },
            ..ClientOptions::default()
        })
        .build()
        .unwrap();
    let err = client.list_tools().await.unwrap_err();
    assert!(matches!(err, ClientError::Unreachable(_)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_the_server_forgot_is_renewed_and_the_call_sent_again() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    let addr = server.addr;
    let client = Client::http(server.url())
        .options(options(VersionPolicy::Pinned(ProtocolVersion::V2025_11_25)))
        .connect()
        .await
        .unwrap();
    assert_eq!(
        text(&client.call_tool("echo", json!({"message": "one"})).await.unwrap()),
        "one"
    );
    // A new server process answers the old session id with 404.
    server.stop().await;
    let _server = Running::start(addr).await;
    let result = client.call_tool("slow", json!({"ms": 1})).await.unwrap();
    assert_eq!(text(&result), "slept 1");
    assert_eq!(
        client.server().await.unwrap().protocol_version,
        ProtocolVersion::V2025_11_25
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_in_flight_and_connections_are_bounded() {
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    for (max_in_flight, max_connections, expected) in [(2, 32, 2), (32, 1, 1)] {
        server.counters.max_running.store(0, Ordering::SeqCst);
        let client = Client::http(server.url())
            .options(ClientOptions {
                max_in_flight,
                max_connections,
                ..options(VersionPolicy::Auto)
            })
            .build()
            .unwrap();
        let calls: Vec<_> = (0..6)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move { client.call_tool("slow", json!({"ms": 100})).await })
            })
            .collect();
        for call in calls {
            assert_eq!(text(&call.await.unwrap().unwrap()), "slept 100");
        }
        assert_eq!(server.counters.max_running.load(Ordering::SeqCst), expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_and_resource_updates_arrive_as_events_in_both_eras() {
    use toolport_client::ClientEvent;
    let server = Running::start("127.0.0.1:0".parse().unwrap()).await;
    for version in [VersionPolicy::Auto, VersionPolicy::Pinned(ProtocolVersion::V2025_11_25)] {
        let client = Client::http(server.url())
            .options(options(version))
            .connect()
            .await
            .unwrap();
        let mut events = client.events().await.unwrap();
        client.subscribe_resource("test://watched").await.unwrap();
        server.server.tools().insert(common::extra_tool()).unwrap();
        server.server.resource_updated("test://watched");
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while seen.len() < 2 {
            let event = tokio::time::timeout_at(deadline, events.next())
                .await
                .unwrap_or_else(|_| panic!("{version:?}: events so far {seen:?}"))
                .unwrap();
            if matches!(
                event,
                ClientEvent::ToolsListChanged | ClientEvent::ResourceUpdated { .. }
            ) {
                seen.push(event);
            }
        }
        assert!(seen.contains(&ClientEvent::ToolsListChanged), "{version:?}: {seen:?}");
        assert!(
            seen.contains(&ClientEvent::ResourceUpdated {
                uri: "test://watched".into()
            }),
            "{version:?}: {seen:?}"
        );
        // The new tool is there to be called.
        assert_eq!(text(&client.call_tool("added", json!({})).await.unwrap()), "added");
        assert!(server.server.tools().remove("added"));
        client.close().await;
    }
}
