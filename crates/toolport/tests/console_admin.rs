//! The console's pages and admin API on a running `toolport serve --ui`:
//! the page and its assets, the Origin check, the views, stopping a call
//! (with its CSRF token), and bad, hostile and out-of-order requests; then
//! on a protected server: the same authentication as MCP, each caller seeing
//! only its own work, an operator seeing and stopping everyone's.

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use http_body_util::{BodyExt, Full};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use support::{MODERN_META, modern_headers, spawn_serve};

async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, HeaderMap, String) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut builder = http::Request::builder().method(method).uri(path);
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        builder = builder.header("host", addr.to_string());
    }
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let response = sender
        .send_request(builder.body(Full::new(Bytes::from(body.to_owned()))).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts.status, parts.headers, String::from_utf8_lossy(&body).into_owned())
}

async fn get_json(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let (status, _, body) = request(addr, "GET", path, headers, "").await;
    (status, serde_json::from_str(&body).unwrap_or(Value::String(body)))
}

fn addr_of(url: &str) -> SocketAddr {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap()
}

/// Starts long_task (40 steps of 100 ms) over 2026-07-28 MCP; the task
/// resolves with its answer.
fn start_long_task(addr: SocketAddr, token: Option<String>) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"long_task","arguments":{{"steps":40,"step_ms":100}},{MODERN_META}}}}}"#
        );
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = modern_headers("tools/call", Some("long_task"));
        if let Some(bearer) = &bearer {
            headers.push(("authorization", bearer));
        }
        let (_, _, body) = request(addr, "POST", "/mcp", &headers, &body).await;
        body
    })
}

/// Polls (bounded) until `/admin/calls` lists `count` calls for this caller.
async fn until_calls(addr: SocketAddr, headers: &[(&str, &str)], count: usize) -> Value {
    for _ in 0..500 {
        let (status, calls) = get_json(addr, "/admin/calls", headers).await;
        assert_eq!(status, StatusCode::OK, "{calls}");
        if calls["calls"].as_array().unwrap().len() == count {
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("/admin/calls did not list {count} call(s) within 5 s");
}

#[tokio::test]
async fn the_console_and_its_admin_api_without_oauth() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let (_served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--ui"])
            .env("TOOLPORT_AUDIT__PATH", &audit)
            .env("TOOLPORT_LIMITS__MAX_CONCURRENT", "4"),
    );
    let addr = addr_of(&url);
    let own_origin = format!("http://{addr}");

    // The page: tools by name, a strict policy, no inline script.
    let (status, headers, page) = request(addr, "GET", "/ui", &[], "").await;
    assert_eq!(status, StatusCode::OK);
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'self'; script-src 'self';"), "{policy}");
    assert!(
        !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"),
        "{policy}"
    );
    assert_eq!(headers["x-frame-options"], "DENY");
    for tool in ["echo", "long_task", "book_table"] {
        assert!(page.contains(&format!("data-tool=\"{tool}\"")), "{tool} listed");
    }
    assert!(!page.contains("<script>"), "no inline script");
    let (status, headers, _) = request(addr, "GET", "/ui/assets/app.js", &[], "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/javascript"));
    for missing in [
        "/ui/assets/nope.js",
        "/ui/assets/../Cargo.toml",
        "/ui/assets/",
        "/ui/other",
    ] {
        let (status, _, _) = request(addr, "GET", missing, &[], "").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    }
    let (status, _, _) = request(addr, "POST", "/ui", &[], "").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);

    // Foreign pages are turned away; the console's own origin passes.
    let (status, _) = get_json(addr, "/admin/overview", &[("origin", "http://evil.example")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = get_json(addr, "/ui", &[("host", "evil.example")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "DNS rebinding");
    let (status, overview) = get_json(addr, "/admin/overview", &[("origin", &own_origin)]).await;
    assert_eq!(status, StatusCode::OK, "{overview}");
    assert_eq!(overview["server"]["name"], "toolport-demo");
    assert_eq!(overview["you"]["operator"], true);
    assert_eq!(overview["views"]["audit"], true);
    let csrf = overview["csrf"].as_str().unwrap().to_owned();

    // A running call is listed, and stopped only with the token.
    let call = start_long_task(addr, None);
    let calls = until_calls(addr, &[], 1).await;
    let running = &calls["calls"][0];
    assert_eq!(running["tool"], "long_task");
    let id = running["id"].as_u64().unwrap();
    let (_, limits) = get_json(addr, "/admin/limits", &[]).await;
    let gate = &limits["gates"][0];
    assert_eq!(
        (gate["gate"].as_str(), gate["max"].as_u64(), gate["in_use"].as_u64()),
        (Some("the server"), Some(4), Some(1))
    );
    let cancel = format!("/admin/calls/{id}/cancel");
    for headers in [
        vec![],
        vec![("x-toolport-csrf", "wrong")],
        vec![("x-toolport-csrf", "")],
    ] {
        let (status, _, body) = request(addr, "POST", &cancel, &headers, "").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    }
    let (status, _, _) = request(addr, "GET", &cancel, &[], "").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let big = "x".repeat(5 * 1024 * 1024);
    let (status, _, _) = request(addr, "POST", &cancel, &[("x-toolport-csrf", &csrf)], &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        until_calls(addr, &[], 1).await["calls"][0]["id"],
        id,
        "refusals stopped nothing"
    );
    let (status, _, body) = request(addr, "POST", &cancel, &[("x-toolport-csrf", &csrf)], "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap();
    assert!(answer.contains("Request cancelled"), "{answer}");
    until_calls(addr, &[], 0).await;
    let (status, _, _) = request(addr, "POST", &cancel, &[("x-toolport-csrf", &csrf)], "").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a call that ended");
    for (path, expected) in [
        ("/admin/calls/abc/cancel", StatusCode::BAD_REQUEST),
        ("/admin/calls/-1/cancel", StatusCode::BAD_REQUEST),
        ("/admin/calls/99999999999999999999999/cancel", StatusCode::BAD_REQUEST),
        ("/admin/calls/18446744073709551615/cancel", StatusCode::NOT_FOUND),
    ] {
        let (status, _, body) = request(addr, "POST", path, &[("x-toolport-csrf", &csrf)], "").await;
        assert_eq!(status, expected, "{path}: {body}");
    }
    let (_, errors) = get_json(addr, "/admin/errors", &[]).await;
    assert_eq!(errors["errors"][0]["outcome"], "cancelled", "{errors}");
    assert_eq!(errors["errors"][0]["tool"], "long_task");

    // The audit tail shows the call as the audit stream recorded it (among
    // the chain's own records).
    let mut recorded = None;
    for _ in 0..500 {
        let tail = get_json(addr, "/admin/audit?limit=5", &[]).await.1;
        let records = tail["records"].as_array().unwrap();
        assert!(records.len() <= 5, "{tail}");
        if let Some(call) = records.iter().find(|r| r["tool"] == "long_task") {
            recorded = Some(call.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let recorded = recorded.expect("the call reaches the audit tail within 5 s");
    assert_eq!(recorded["outcome"], "cancelled", "{recorded}");
    let (status, _) = get_json(addr, "/admin/audit?limit=many", &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Views that are not there say so; unknown ones and other methods are refused.
    let (_, upstreams) = get_json(addr, "/admin/upstreams", &[]).await;
    assert_eq!(upstreams["available"], false);
    // `toolport serve` keeps tasks: the caller's are listed (none made yet).
    let (_, tasks) = get_json(addr, "/admin/tasks", &[]).await;
    assert_eq!(tasks["available"], true, "{tasks}");
    assert!(tasks["tasks"].as_array().unwrap().is_empty(), "{tasks}");
    let (_, bench) = get_json(addr, "/admin/bench", &[]).await;
    assert_eq!(bench["available"], false);
    let (status, _) = get_json(addr, "/admin/bench.svg", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = get_json(addr, "/admin/../metrics", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = get_json(addr, "/admin/nope", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = request(addr, "DELETE", "/admin/sessions", &[], "").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, sessions) = get_json(addr, "/admin/sessions", &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        sessions["sessions"].as_array().unwrap().is_empty(),
        "2026-07-28 calls have no session"
    );
}

fn keys() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../toolport-auth/tests/keys")
}

fn token(resource: &str, subject: &str, scope: &str) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({"iss": "https://as.test", "aud": resource, "sub": subject, "scope": scope,
        "iat": now, "exp": now + 300});
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("rsa-1".into());
    let key = EncodingKey::from_rsa_pem(&std::fs::read(keys().join("rsa-1.pem")).unwrap()).unwrap();
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

#[tokio::test]
async fn with_oauth_each_caller_sees_its_own_work_and_an_operator_everyones() {
    let dir = tempfile::tempdir().unwrap();
    let jwk: Value = serde_json::from_str(&std::fs::read_to_string(keys().join("rsa-1.jwk.json")).unwrap()).unwrap();
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, json!({"keys": [jwk]}).to_string()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let resource = format!("http://{addr}/mcp");
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolport"));
    command
        .args([
            "--demo",
            "--ui",
            "--oauth-issuer",
            "https://as.test",
            "--oauth-jwks-file",
        ])
        .arg(&jwks)
        .args(["--oauth-scope", "mcp:tools", "--oauth-resource", &resource])
        .env("TOOLPORT_AUDIT__PATH", dir.path().join("audit.jsonl"))
        .env("TOOLPORT_UI__OAUTH_CLIENT_ID", "toolport-console");
    // spawn_serve binds port 0: this server needs its port in the resource.
    let mut child = Command::new(command.get_program())
        .args(["serve", "--bind", &addr.to_string()])
        .args(command.get_args())
        .envs(command.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _served = support::Served(child);
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    for line in lines.by_ref() {
        if line.unwrap().contains("serving MCP") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));

    // The page is public but names no tools; the API is not.
    let (status, headers, page) = request(addr, "GET", "/ui", &[], "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("data-tool=\"echo\""), "no tool names before sign-in");
    assert!(page.contains("data-oauth-client-id=\"toolport-console\""));
    assert!(page.contains(&format!("data-oauth-resource=\"{resource}\"")));
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("connect-src 'self' https://as.test;"), "{policy}");
    let (status, headers, _) = request(addr, "GET", "/admin/overview", &[], "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(headers["www-authenticate"].to_str().unwrap().starts_with("Bearer "));
    let (status, _) = get_json(addr, "/admin/calls", &[("authorization", "Bearer not-a-token")]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (alice, bob, root) = (
        token(&resource, "alice", "mcp:tools"),
        token(&resource, "bob", "mcp:tools"),
        token(&resource, "root", "mcp:tools toolport:admin"),
    );
    let bearer = |t: &str| format!("Bearer {t}");
    let (alice_h, bob_h, root_h) = (bearer(&alice), bearer(&bob), bearer(&root));
    let as_alice = [("authorization", alice_h.as_str())];
    let as_bob = [("authorization", bob_h.as_str())];
    let as_root = [("authorization", root_h.as_str())];
    let (_, overview) = get_json(addr, "/admin/overview", &as_alice).await;
    assert_eq!(overview["you"]["principal"], "alice");
    assert_eq!(overview["you"]["operator"], false);
    assert_eq!(overview["views"]["audit"], false, "the audit tail is for operators");
    let alice_csrf = overview["csrf"].as_str().unwrap().to_owned();
    let (_, overview) = get_json(addr, "/admin/overview", &as_root).await;
    assert_eq!(overview["you"]["operator"], true);
    let root_csrf = overview["csrf"].as_str().unwrap().to_owned();
    assert_ne!(alice_csrf, root_csrf);

    let call = start_long_task(addr, Some(alice.clone()));
    let seen = until_calls(addr, &as_alice, 1).await;
    assert_eq!(seen["calls"][0]["principal"], "alice");
    let id = seen["calls"][0]["id"].as_u64().unwrap();
    assert!(
        until_calls(addr, &as_bob, 0).await["calls"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    until_calls(addr, &as_root, 1).await;
    let cancel = format!("/admin/calls/{id}/cancel");
    let bob_csrf = get_json(addr, "/admin/overview", &as_bob).await.1["csrf"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _, _) = request(addr, "POST", &cancel, &[as_bob[0], ("x-toolport-csrf", &bob_csrf)], "").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "bob cannot stop alice's call, nor learn it exists"
    );
    let (status, _, _) = request(
        addr,
        "POST",
        &cancel,
        &[as_root[0], ("x-toolport-csrf", &alice_csrf)],
        "",
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a token is its caller's only");
    let (status, _) = get_json(addr, "/admin/audit", &as_alice).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = get_json(addr, "/admin/audit", &as_root).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = request(
        addr,
        "POST",
        &cancel,
        &[as_root[0], ("x-toolport-csrf", &root_csrf)],
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap();
    assert!(answer.contains("Request cancelled"), "{answer}");
    let (_, errors) = get_json(addr, "/admin/errors", &as_bob).await;
    assert!(
        errors["errors"].as_array().unwrap().is_empty(),
        "bob sees none of alice's errors: {errors}"
    );
    let (_, errors) = get_json(addr, "/admin/errors", &as_alice).await;
    assert_eq!(errors["errors"][0]["principal"], "alice");
}
