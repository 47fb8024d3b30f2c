//! SSE over Streamable HTTP in raw HTTP: resumption after a dropped stream,
//! keep-alives, cancellation by closing a 2026-07-28 stream, listen, the
//! handshake-era GET stream, requests to the client, graceful shutdown.

mod support;

use std::time::Duration;

use http::StatusCode;
use serde_json::json;
use support::*;
use toolport_http::HttpConfig;
use toolport_server::{NoArgs, tool};

#[tokio::test]
async fn a_dropped_stream_resumes_from_last_event_id_with_nothing_lost_or_repeated() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let session = initialize(s.addr, "2025-11-25").await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long_task","arguments":{"steps":12,"step_ms":20},"_meta":{"progressToken":"t"}}}"#;
    let mut stream = send(s.addr, "POST", &legacy_headers(&session), body).await;
    assert_eq!(stream.status, StatusCode::OK);
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    // The priming event: an id, a retry hint, no data.
    let priming = stream.next_event().await.unwrap();
    assert!(
        priming.starts_with("id: ") && priming.contains("\nretry: "),
        "{priming:?}"
    );
    let mut seen = Vec::new();
    let mut last_id = String::new();
    while seen.len() < 3 {
        let (id, message) = stream.next_message().await.unwrap();
        if message["method"] == "notifications/progress" {
            seen.push(message["params"]["progress"].as_u64().unwrap());
            last_id = id.expect("every event has an id");
        }
    }
    drop(stream); // the connection goes away mid-call
    let mut headers = legacy_headers(&session);
    headers[1] = ("accept", "text/event-stream");
    headers.push(("last-event-id", &last_id));
    let mut resumed = send(s.addr, "GET", &headers, "").await;
    assert_eq!(resumed.status, StatusCode::OK);
    let mut result = None;
    while let Some((_, message)) = resumed.next_message().await {
        if message["method"] == "notifications/progress" {
            seen.push(message["params"]["progress"].as_u64().unwrap());
        } else if message["id"] == 1 {
            result = Some(message);
            break;
        }
    }
    assert_eq!(seen, (1..=12).collect::<Vec<_>>(), "every progress event exactly once");
    assert_eq!(result.unwrap()["result"]["content"][0]["text"], "finished 12 steps");
    // A resumption from an unknown position is refused, not answered with an empty stream.
    let mut headers = legacy_headers(&session);
    headers.push(("last-event-id", "99-1"));
    assert_eq!(call(s.addr, "GET", &headers, "").await.0, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn idle_streams_carry_keep_alive_comments() {
    let s = TestServer::demo(HttpConfig {
        keep_alive: Duration::from_millis(50),
        ..HttpConfig::default()
    })
    .await;
    let session = initialize(s.addr, "2025-11-25").await;
    let mut headers = legacy_headers(&session);
    headers[1] = ("accept", "text/event-stream");
    let mut get = send(s.addr, "GET", &headers, "").await;
    assert_eq!(get.status, StatusCode::OK);
    assert_eq!(get.next_event().await.unwrap(), ": keep-alive");
    // A second standalone stream for the same session is refused.
    assert_eq!(call(s.addr, "GET", &headers, "").await.0, StatusCode::CONFLICT);
}

#[tokio::test]
async fn closing_a_2026_stream_cancels_its_request() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let before = jobs(&s).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long_task","arguments":{"steps":1000,"step_ms":20},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut stream = send(s.addr, "POST", &modern_headers("tools/call", Some("long_task")), body).await;
    let (id, first) = stream.next_message().await.unwrap();
    assert_eq!(id, None, "2026-07-28 events carry no ids");
    assert_eq!(first["method"], "notifications/progress");
    drop(stream);
    let mut after = before.clone();
    for _ in 0..200 {
        after = jobs(&s).await;
        if after["cancelled"] != before["cancelled"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        after["cancelled"].as_u64(),
        before["cancelled"].as_u64().map(|n| n + 1),
        "{before} -> {after}"
    );
    assert_eq!(after["completed"], before["completed"]);
}

#[tokio::test]
async fn listen_streams_acknowledge_then_deliver_what_was_asked() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{MODERN_META}}}}}"#
    );
    let mut stream = send(s.addr, "POST", &modern_headers("subscriptions/listen", None), &body).await;
    let (_, ack) = stream.next_message().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    s.server.prompts().remove("plan_trip"); // not asked for
    s.server
        .tools()
        .insert(tool("added").handler(|_: NoArgs| async { "" }))
        .unwrap();
    let (_, changed) = stream.next_message().await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
}

#[tokio::test]
async fn the_handshake_get_stream_carries_list_changes_and_subscribed_updates() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let session = initialize(s.addr, "2025-11-25").await;
    let subscribe = r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"demo://readme"}}"#;
    assert_eq!(
        call(s.addr, "POST", &legacy_headers(&session), subscribe).await.2["result"],
        json!({})
    );
    let mut headers = legacy_headers(&session);
    headers[1] = ("accept", "text/event-stream");
    let mut get = send(s.addr, "GET", &headers, "").await;
    assert_eq!(get.status, StatusCode::OK);
    // The stream is attached before its response head is sent, so every
    // event from here on reaches it.
    s.server.resource_updated("demo://jobs"); // not subscribed
    s.server.resource_updated("demo://readme");
    s.server.tools().remove("echo");
    let (_, first) = get.next_message().await.unwrap();
    assert_eq!(
        first,
        json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://readme"}})
    );
    let (_, second) = get.next_message().await.unwrap();
    assert_eq!(second["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn handshake_requests_to_the_client_travel_on_the_post_stream() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (_, headers, _) = call(s.addr, "POST", &[JSON, ACCEPT], init).await;
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let book = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_table","arguments":{"restaurant":"Http"}}}"#;
    let mut stream = send(s.addr, "POST", &legacy_headers(&session), book).await;
    let (_, question) = stream.next_message().await.unwrap();
    assert_eq!(question["method"], "elicitation/create");
    let answer =
        json!({"jsonrpc":"2.0","id":question["id"],"result":{"action":"accept","content":{"name":"Lin","guests":3}}});
    let (status, _, _) = call(s.addr, "POST", &legacy_headers(&session), &answer.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, result) = stream.next_message().await.unwrap();
    assert_eq!(
        result["result"]["content"][0]["text"],
        "Booked a table for 3 at Http under the name Lin."
    );
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let mut s = TestServer::demo(HttpConfig::default()).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"long_task","arguments":{{"steps":5,"step_ms":40}},{MODERN_META}}}}}"#
    );
    let addr = s.addr;
    let in_flight =
        tokio::spawn(async move { call(addr, "POST", &modern_headers("tools/call", Some("long_task")), &body).await });
    // Make sure the request has started before stopping.
    until_started(&s, 1).await;
    s.stop();
    let (status, _, answer) = in_flight.await.unwrap();
    assert_eq!(
        (status, answer["result"]["content"][0]["text"].clone()),
        (StatusCode::OK, json!("finished 5 steps"))
    );
    tokio::time::timeout(Duration::from_secs(10), &mut s.done)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test]
async fn shutdown_closes_streams_that_would_never_end() {
    let grace = Duration::from_millis(300);
    let mut s = TestServer::demo(HttpConfig {
        shutdown_grace: grace,
        ..HttpConfig::default()
    })
    .await;
    // A 2026-07-28 listen stream only ends when the server does.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{MODERN_META}}}}}"#
    );
    let mut listen = send(s.addr, "POST", &modern_headers("subscriptions/listen", None), &body).await;
    listen.next_message().await.expect("the acknowledgement");
    // A long call on another connection outlives the grace period.
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"long_task","arguments":{{"steps":1000,"step_ms":100}},{MODERN_META}}}}}"#
    );
    let addr = s.addr;
    let slow =
        tokio::spawn(async move { send(addr, "POST", &modern_headers("tools/call", Some("long_task")), &call).await });
    until_started(&s, 1).await;
    s.stop();
    tokio::time::timeout(Duration::from_secs(10), &mut s.done)
        .await
        .expect("serve returns after the grace period")
        .unwrap()
        .unwrap();
    // The listen stream ended with its result; the slow call's connection was closed.
    let mut ended_with_result = false;
    while let Some((_, message)) = listen.next_message().await {
        ended_with_result |= message["id"] == "L" && message.get("result").is_some();
    }
    assert!(ended_with_result);
    let _ = tokio::time::timeout(Duration::from_secs(10), slow)
        .await
        .expect("the slow call's connection ends");
}
