//! Hand-made hostile requests, in both eras: origins that only start like
//! ours, single-valued headers sent twice, and a tool whose structured
//! result breaks its own `outputSchema`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::StatusCode;
use schemars::JsonSchema;
use serde_json::{Value, json};
use support::*;
use toolport_http::HttpConfig;
use toolport_http::store::{MemoryEventLog, MemorySessionStore};
use toolport_protocol::tools::CallToolResult;
use toolport_server::{Json, NoArgs, Server, ToolError, tool};

const MODERN: &str = "2026-07-28";

#[derive(serde::Serialize, JsonSchema)]
struct Total {
    sum: f64,
}

/// `echo` counts its runs; `broken` answers structured content its schema
/// forbids; `empty` declares an output schema and answers none.
async fn hostile_server(runs: Arc<AtomicUsize>) -> Running {
    let echo = tool("echo").handler(move |_: NoArgs| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            "echoed"
        }
    });
    let broken = tool("broken").handler(|_: NoArgs| async {
        // A non-finite float serializes as null, which `number` excludes.
        Ok::<_, ToolError>(Json(Total { sum: f64::INFINITY }))
    });
    let schema = toolport_server::schema::schema_for::<Total>();
    let mut definition = toolport_protocol::tools::Tool::new("empty", toolport_server::schema::schema_for::<Empty>());
    definition.output_schema = Some(schema);
    let empty = tool("empty").raw(definition, |_, _| async { Ok(CallToolResult::text("no structure")) });
    let server = Server::builder("hostile", "1")
        .tool(echo)
        .tool(broken)
        .tool(empty)
        .build()
        .unwrap();
    serve(
        server,
        HttpConfig::default(),
        Arc::new(MemorySessionStore::new()),
        Arc::new(MemoryEventLog::new(64)),
    )
    .await
}

#[derive(serde::Deserialize, JsonSchema)]
struct Empty {}

fn modern_call(id: u64, name: &str) -> String {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    )
}

fn modern_headers(name: &str) -> Vec<(&str, &str)> {
    let mut headers = fresh();
    headers.extend([
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ]);
    headers
}

fn legacy_call(id: u64, name: &str) -> String {
    request(id, "tools/call", json!({"name": name, "arguments": {}}))
}

#[tokio::test]
async fn origins_that_only_start_like_a_loopback_one_are_refused_in_both_eras() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = hostile_server(runs.clone()).await;
    let port = s.addr.port();
    let session = open_session(s.addr).await;
    let ours = format!("http://127.0.0.1:{port}");
    let hostile = [
        format!("http://127.0.0.1:{port}@evil.example"),
        format!("http://127.0.0.1:{port}.evil.example"),
        format!("http://localhost:{port}/../@evil.example"),
    ];
    for origin in &hostile {
        let mut headers = modern_headers("echo");
        headers.push(("origin", origin));
        let answer = send(s.addr, "POST", &headers, &modern_call(1, "echo")).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "2026-07-28 from {origin}");
        let mut headers = in_session(&session);
        headers.push(("origin", origin));
        let answer = send(s.addr, "POST", &headers, &legacy_call(2, "echo")).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "handshake era from {origin}");
        // Before a session exists, too.
        let answer = send(
            s.addr,
            "POST",
            &[fresh(), vec![("origin", origin)]].concat(),
            &initialize_request(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "initialize from {origin}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no hostile call ran");
    // The page on this machine still gets through, in both eras.
    let mut headers = modern_headers("echo");
    headers.push(("origin", &ours));
    assert_eq!(
        send(s.addr, "POST", &headers, &modern_call(3, "echo")).await.status,
        StatusCode::OK
    );
    let mut headers = in_session(&session);
    headers.push(("origin", &ours));
    assert_eq!(
        send(s.addr, "POST", &headers, &legacy_call(4, "echo")).await.status,
        StatusCode::OK
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_single_valued_header_sent_twice_is_refused_in_both_eras() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = hostile_server(runs.clone()).await;
    let session = open_session(s.addr).await;
    let twice = [
        ("mcp-name", "echo", "other"),
        ("mcp-name", "echo", "echo"),
        ("mcp-method", "tools/call", "tools/list"),
        ("mcp-protocol-version", MODERN, "2025-11-25"),
    ];
    for (header, first, second) in twice {
        // 2026-07-28: the body says tools/call echo; the first line agrees.
        let mut headers: Vec<(&str, &str)> = modern_headers("echo")
            .into_iter()
            .filter(|(k, _)| *k != header)
            .collect();
        headers.push((header, first));
        headers.push((header, second));
        let answer = send(s.addr, "POST", &headers, &modern_call(1, "echo")).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{header} twice");
        let body = answer.json().await;
        assert_eq!(body["error"]["code"], -32020, "{header} twice: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains(header), "{body}");
        // The handshake era reads no routing headers, but an intermediary
        // may: the request is refused the same way.
        let mut headers = in_session(&session);
        if header == "mcp-protocol-version" {
            headers.retain(|(k, _)| *k != header);
            headers.extend([(header, "2025-11-25"), (header, "2025-11-25")]);
        } else {
            headers.extend([(header, first), (header, second)]);
        }
        let answer = send(s.addr, "POST", &headers, &legacy_call(2, "echo")).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "handshake era, {header} twice");
        assert_eq!(answer.json().await["error"]["code"], -32020);
    }
    // A session id twice is no session id.
    let mut headers = in_session(&session);
    headers.push(("mcp-session-id", "another"));
    let answer = send(s.addr, "POST", &headers, &legacy_call(3, "echo")).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no call with a repeated header ran");
    // Sent once, the same requests run.
    let answer = send(s.addr, "POST", &modern_headers("echo"), &modern_call(4, "echo")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

async fn legacy_result(s: &Running, session: &str, name: &str) -> Value {
    let answer = send(s.addr, "POST", &in_session(session), &legacy_call(7, name)).await;
    assert_eq!(answer.status, StatusCode::OK);
    answer.json().await["result"].clone()
}

async fn modern_result(s: &Running, name: &str) -> Value {
    let answer = send(s.addr, "POST", &modern_headers(name), &modern_call(8, name)).await;
    assert_eq!(answer.status, StatusCode::OK);
    answer.json().await["result"].clone()
}

#[tokio::test]
async fn a_structured_result_that_breaks_its_output_schema_is_an_error_result_in_both_eras() {
    let s = hostile_server(Arc::default()).await;
    let session = open_session(s.addr).await;
    for (era, result) in [
        ("handshake", legacy_result(&s, &session, "broken").await),
        ("2026-07-28", modern_result(&s, "broken").await),
    ] {
        assert_eq!(result["isError"], true, "{era}: {result}");
        assert!(result.get("structuredContent").is_none(), "{era}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("outputSchema") && text.contains("structuredContent/sum"),
            "{era}: {text}"
        );
    }
    for (era, result) in [
        ("handshake", legacy_result(&s, &session, "empty").await),
        ("2026-07-28", modern_result(&s, "empty").await),
    ] {
        assert_eq!(result["isError"], true, "{era}: {result}");
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("no structuredContent"),
            "{era}"
        );
    }
    // A result that fits passes untouched.
    let echo = modern_result(&s, "echo").await;
    assert_eq!(echo["content"][0]["text"], "echoed");
}
