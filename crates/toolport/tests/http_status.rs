//! Every status-code rule of Streamable HTTP, spoken in raw HTTP with exact
//! headers against `toolport_http` serving the demo server.

mod support;

use http::StatusCode;
use serde_json::json;
use support::*;
use toolport_http::HttpConfig;

#[tokio::test]
async fn foreign_origins_and_hosts_are_forbidden() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    let mut headers = modern_headers("tools/list", None);
    headers.push(("origin", "http://evil.example"));
    let (status, _, answer) = call(s.addr, "POST", &headers, &body).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("origin"),
        "{answer}"
    );
    let mut headers = modern_headers("tools/list", None);
    headers.push(("host", "evil.example:8080"));
    let (status, _, _) = call(s.addr, "POST", &headers, &body).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "DNS rebinding: a foreign Host is refused"
    );
    let mut headers = modern_headers("tools/list", None);
    headers.push(("origin", "http://localhost:5173"));
    let (status, _, _) = call(s.addr, "POST", &headers, &body).await;
    assert_eq!(status, StatusCode::OK, "a page on this machine may call a local server");
}

#[tokio::test]
async fn content_type_accept_and_size_are_checked() {
    let s = TestServer::demo(HttpConfig {
        max_body_bytes: 1024,
        ..HttpConfig::default()
    })
    .await;
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    let mut headers = modern_headers("tools/list", None);
    headers[0] = ("content-type", "text/plain");
    assert_eq!(
        call(s.addr, "POST", &headers, &body).await.0,
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    let mut headers = modern_headers("tools/list", None);
    headers[1] = ("accept", "text/html");
    assert_eq!(
        call(s.addr, "POST", &headers, &body).await.0,
        StatusCode::NOT_ACCEPTABLE
    );
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}},{MODERN_META}}}}}"#,
        "x".repeat(2000)
    );
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("tools/call", Some("echo")), &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("tools/list", None), "{not json").await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32700))
    );
    // A client that takes only event streams gets one, even for a plain answer.
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    let mut headers = modern_headers("tools/list", None);
    headers[1] = ("accept", "text/event-stream");
    let mut stream = send(s.addr, "POST", &headers, &list).await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    assert_eq!(stream.next_message().await.unwrap().1["id"], 1);
    // listen needs a stream.
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{{"notifications":{{}},{MODERN_META}}}}}"#
    );
    let mut headers = modern_headers("subscriptions/listen", None);
    headers[1] = ("accept", "application/json");
    assert_eq!(
        call(s.addr, "POST", &headers, &listen).await.0,
        StatusCode::NOT_ACCEPTABLE
    );
}

#[tokio::test]
async fn stateless_requests_get_their_statuses() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let list = format!(r#"{{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{{{MODERN_META}}}}}"#);
    // Session ids and Last-Event-ID are ignored in 2026-07-28.
    let mut headers = modern_headers("tools/list", None);
    headers.push(("mcp-session-id", "not-a-session"));
    headers.push(("last-event-id", "1-1"));
    let (status, answer_headers, answer) = call(s.addr, "POST", &headers, &list).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        answer_headers.get("mcp-session-id").is_none(),
        "no session is minted in 2026-07-28"
    );
    assert_eq!(answer["result"]["resultType"], "complete");
    // GET and DELETE do not exist.
    let get = [ACCEPT, ("mcp-protocol-version", "2026-07-28")];
    assert_eq!(call(s.addr, "GET", &get, "").await.0, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(call(s.addr, "DELETE", &get, "").await.0, StatusCode::METHOD_NOT_ALLOWED);
    // Headers must mirror the body.
    for headers in [
        modern_headers("tools/call", None),
        vec![JSON, ACCEPT, ("mcp-method", "tools/list")],
        vec![
            JSON,
            ACCEPT,
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
        ],
    ] {
        let (status, _, answer) = call(s.addr, "POST", &headers, &list).await;
        assert_eq!(
            (status, answer["error"]["code"].clone(), answer["id"].clone()),
            (StatusCode::BAD_REQUEST, json!(-32020), json!("a")),
            "{headers:?}"
        );
    }
    let call_echo = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m"}},{MODERN_META}}}}}"#
    );
    let (status, _, answer) = call(
        s.addr,
        "POST",
        &modern_headers("tools/call", Some("get_weather")),
        &call_echo,
    )
    .await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );
    let (status, _, answer) = call(
        s.addr,
        "POST",
        &modern_headers("tools/call", Some("=?base64?ZWNobw==?=")),
        &call_echo,
    )
    .await;
    assert_eq!(
        (status, answer["result"]["content"][0]["text"].clone()),
        (StatusCode::OK, json!("m"))
    );
    // Unsupported version, missing _meta field, unknown and removed methods.
    let old = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = vec![
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "tools/list"),
    ];
    let (status, _, answer) = call(s.addr, "POST", &headers, old).await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32022))
    );
    assert_eq!(answer["error"]["data"]["supported"], json!(["2026-07-28"]));
    let no_caps = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("tools/list", None), no_caps).await;
    assert_eq!(
        (status, answer["error"]["code"].clone(), answer["id"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32602), json!(4))
    );
    for method in [
        "no/such/method",
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{{{MODERN_META}}}}}"#);
        let (status, _, answer) = call(s.addr, "POST", &modern_headers(method, None), &body).await;
        assert_eq!(
            (status, answer["error"]["code"].clone()),
            (StatusCode::NOT_FOUND, json!(-32601)),
            "{method}"
        );
    }
    // A missing capability is 400 with -32021.
    let book = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{{"name":"book_table","arguments":{{"restaurant":"r"}},{MODERN_META}}}}}"#
    );
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("tools/call", Some("book_table")), &book).await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32021))
    );
    // Notifications are accepted with 202 and no body.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("notifications/cancelled", None), note).await;
    assert_eq!((status, answer), (StatusCode::ACCEPTED, serde_json::Value::Null));
}

#[tokio::test]
async fn handshake_sessions_follow_the_rules() {
    let s = TestServer::demo(HttpConfig::default()).await;
    let session = initialize(s.addr, "2025-11-25").await;
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let with = |id: &'static str| {
        vec![
            JSON,
            ACCEPT,
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-session-id", id),
        ]
    };
    let session: &'static str = Box::leak(session.into_boxed_str());
    let (status, _, answer) = call(s.addr, "POST", &with(session), list).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["tools"].as_array().unwrap().len(), 5);
    // No session id: 400. An unknown one: 404.
    let (status, _, answer) = call(
        s.addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-protocol-version", "2025-11-25")],
        list,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        call(s.addr, "POST", &with("no-such-session"), list).await.0,
        StatusCode::NOT_FOUND
    );
    // An unsupported version header: 400. No header at all: 2025-03-26.
    let bad_version = [
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "1999-01-01"),
        ("mcp-session-id", session),
    ];
    assert_eq!(
        call(s.addr, "POST", &bad_version, list).await.0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        call(s.addr, "POST", &[JSON, ACCEPT, ("mcp-session-id", session)], list)
            .await
            .0,
        StatusCode::OK
    );
    // A notification is 202 with no body.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
    let (status, headers, answer) = call(s.addr, "POST", &with(session), note).await;
    assert_eq!((status, answer), (StatusCode::ACCEPTED, serde_json::Value::Null));
    assert!(headers.get("content-type").is_none());
    // Batches: only for 2025-03-26.
    let batch = r#"[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"message":"b"}}}]"#;
    let (status, _, answer) = call(s.addr, "POST", &with(session), batch).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let old_session: &'static str = Box::leak(initialize(s.addr, "2025-03-26").await.into_boxed_str());
    let (status, _, answer) = call(s.addr, "POST", &[JSON, ACCEPT, ("mcp-session-id", old_session)], batch).await;
    assert_eq!(status, StatusCode::OK);
    let answers = answer.as_array().expect("a batch answer");
    assert_eq!(answers.len(), 2);
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 8 && a["result"]["content"][0]["text"] == "b"),
        "{answer}"
    );
    // DELETE ends the session; afterwards it is 404.
    let (status, _, _) = call(s.addr, "DELETE", &with(session), "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        call(s.addr, "POST", &with(session), list).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(s.addr, "DELETE", &with(session), "").await.0,
        StatusCode::NOT_FOUND
    );
    // Other methods are not allowed on the endpoint.
    assert_eq!(call(s.addr, "PUT", &[JSON], "").await.0, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn idle_sessions_expire() {
    let idle = std::time::Duration::from_millis(200);
    let s = TestServer::demo(HttpConfig {
        session_idle_timeout: idle,
        ..HttpConfig::default()
    })
    .await;
    let session = initialize(s.addr, "2025-11-25").await;
    let headers = [
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", session.as_str()),
    ];
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(call(s.addr, "POST", &headers, list).await.0, StatusCode::OK);
    // Unused, it expires within a few reaper periods: poll a bounded number of times.
    let started = std::time::Instant::now();
    tokio::time::sleep(idle).await;
    let mut expired = false;
    while started.elapsed() < std::time::Duration::from_secs(10) {
        let ping = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        if call(s.addr, "POST", &headers, ping).await.0 == StatusCode::NOT_FOUND {
            expired = true;
            break;
        }
        // Each probe uses the session again, so wait longer than the timeout between probes.
        tokio::time::sleep(idle * 2).await;
    }
    assert!(expired, "the session never expired");
}

#[tokio::test]
async fn stateless_mode_serves_handshake_requests_without_sessions() {
    let s = TestServer::demo(HttpConfig {
        sessions: false,
        ..HttpConfig::default()
    })
    .await;
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let (status, headers, _) = call(s.addr, "POST", &[JSON, ACCEPT], init).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers.get("mcp-session-id").is_none());
    let echo = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"any replica"}}}"#;
    let (status, _, answer) = call(
        s.addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-protocol-version", "2025-11-25")],
        echo,
    )
    .await;
    assert_eq!(
        (status, answer["result"]["content"][0]["text"].clone()),
        (StatusCode::OK, json!("any replica"))
    );
    assert_eq!(
        call(s.addr, "GET", &[ACCEPT], "").await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
}
