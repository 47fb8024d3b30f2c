//! The resource server in front of a real Toolport HTTP endpoint, over raw
//! HTTP: metadata documents, 401 challenges for every kind of bad token,
//! per-tool scopes (403 `insufficient_scope`), lists trimmed to the caller,
//! the principal reaching handlers, sessions bound to their creator, and
//! the transport's own defences (Origin/Host, header and body limits).

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};
use toolport_http::HttpConfig;

use common::*;

fn config() -> ResourceServerConfig {
    let mut config = ResourceServerConfig::new(RESOURCE, ISSUER, JwksSource::Static(jwks(&["rsa-1", "ec-1"])))
        .tool_scopes("delete_file", &["files:write"])
        .resource_scopes("file:///*", &["notes:read"]);
    config.scopes_supported = vec!["mcp:tools".into()];
    config.leeway = std::time::Duration::from_secs(5);
    config
}

struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(http: HttpConfig) -> Running {
    start_serving(protected_server(), http).await
}

async fn start_serving(server: toolport_server::Server, http: HttpConfig) -> Running {
    let auth = Arc::new(ResourceServer::new(config()).unwrap());
    let http = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..http
    };
    let (addr, stop) = serve_protected(server, auth, http).await;
    Running { addr, stop: Some(stop) }
}

fn list_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
}

#[tokio::test]
async fn metadata_is_published_at_both_well_known_paths() {
    let s = start(HttpConfig::default()).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let answer = send(s.addr, "GET", path, &[], "").await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.headers["content-type"], "application/json");
        assert_eq!(answer.body["resource"], RESOURCE);
        assert_eq!(answer.body["authorization_servers"], json!([ISSUER]));
        assert_eq!(answer.body["scopes_supported"], json!(["mcp:tools"]));
    }
    let other = send(s.addr, "GET", "/.well-known/oauth-protected-resource/other", &[], "").await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_request_without_a_token_gets_401_pointing_at_the_metadata() {
    let s = start(HttpConfig::default()).await;
    let answer = rpc(s.addr, None, &[], initialize_body()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer.challenge(),
        r#"Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#
    );
    assert!(
        answer.body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Unauthorized")
    );
    // Other schemes are as good as nothing; GET and DELETE are protected too.
    let basic = rpc(s.addr, None, &[("authorization", "Basic dTpw")], initialize_body()).await;
    assert_eq!(basic.status, StatusCode::UNAUTHORIZED);
    for method in ["GET", "DELETE"] {
        let answer = send(s.addr, method, "/mcp", &[("accept", "text/event-stream")], "").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{method}");
    }
}

#[tokio::test]
async fn a_malformed_authorization_header_is_400() {
    let s = start(HttpConfig::default()).await;
    let headers = [
        ("content-type", "application/json"),
        ("authorization", "Bearer a"),
        ("authorization", "Bearer b"),
    ];
    let answer = send(s.addr, "POST", "/mcp", &headers, &initialize_body().to_string()).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.challenge().contains(r#"error="invalid_request""#),
        "{}",
        answer.challenge()
    );
}

/// Every way a token can be wrong gets 401 `invalid_token`, and its reason
/// in `error_description`.
#[tokio::test]
async fn bad_tokens_are_refused_with_invalid_token() {
    let s = start(HttpConfig::default()).await;
    let good = claims("alice", "mcp:tools");
    let with = |key: &str, value: Value| {
        let mut c = good.clone();
        c[key] = value;
        c
    };
    let good_token = token("alice", "mcp:tools");
    let (head, rest) = good_token.split_once('.').unwrap();
    let (payload, signature) = rest.split_once('.').unwrap();
    // Flip a bit of the payload: the signature no longer matches.
    let mut forged_payload = URL_SAFE_NO_PAD.decode(payload).unwrap();
    let at = forged_payload.iter().position(|b| *b == b'a').unwrap();
    forged_payload[at] = b'b';
    let tampered = format!("{head}.{}.{signature}", URL_SAFE_NO_PAD.encode(&forged_payload));
    let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let alg_none = format!("{none_header}.{payload}.");
    // HS256 "signed" with the RSA public key as the secret: the classic
    // algorithm-confusion forgery.
    let hmac_header = json!({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"});
    let hmac = {
        let secret = std::fs::read(keys_dir().join("rsa-1.jwk.json")).unwrap();
        let mut header = jsonwebtoken::Header::new(Algorithm::HS256);
        header.kid = hmac_header["kid"].as_str().map(str::to_owned);
        jsonwebtoken::encode(
            &header,
            &good,
            &jsonwebtoken::EncodingKey::from_secret(&secret).unwrap(),
        )
        .unwrap()
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "wrong audience",
            sign(
                "rsa-1",
                Algorithm::RS256,
                Some("rsa-1"),
                &with("aud", json!("http://other.test/mcp")),
            ),
            "not issued for this resource",
        ),
        (
            "expired",
            sign(
                "rsa-1",
                Algorithm::RS256,
                Some("rsa-1"),
                &with("exp", json!(now() - 60)),
            ),
            "expired",
        ),
        (
            "not valid yet",
            sign(
                "rsa-1",
                Algorithm::RS256,
                Some("rsa-1"),
                &with("nbf", json!(now() + 600)),
            ),
            "not valid yet",
        ),
        (
            "wrong issuer",
            sign(
                "rsa-1",
                Algorithm::RS256,
                Some("rsa-1"),
                &with("iss", json!("https://evil.test")),
            ),
            "another authorization server",
        ),
        ("tampered", tampered, "signature is invalid"),
        ("alg none", alg_none, "not a signed JWT"),
        ("hmac with the public key", hmac, "algorithm is not accepted"),
        (
            "another key under a known kid",
            sign("attacker", Algorithm::RS256, Some("rsa-1"), &good),
            "signature is invalid",
        ),
        (
            "an unknown key",
            sign("attacker", Algorithm::RS256, Some("attacker"), &good),
            "signing key is unknown",
        ),
        (
            "opaque, without introspection",
            "opaque-token-value".into(),
            "not a signed JWT",
        ),
    ];
    for (what, bad, reason) in cases {
        let answer = rpc(s.addr, Some(&bad), &[], initialize_body()).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{what}");
        let challenge = answer.challenge();
        assert!(
            challenge.starts_with(r#"Bearer error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(reason), "{what}: {challenge}");
        assert!(challenge.contains("resource_metadata="), "{what}: {challenge}");
        assert!(!answer.text.contains(&bad), "{what}: the token is never echoed");
    }
    // The same claims, properly signed, with either key type, pass.
    for good in [good_token.clone(), sign("ec-1", Algorithm::ES256, Some("ec-1"), &good)] {
        let answer = rpc(s.addr, Some(&good), &[], initialize_body()).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    }
}

#[tokio::test]
async fn scopes_decide_what_a_caller_sees_and_may_call() {
    let s = start(HttpConfig::default()).await;
    let reader = token("alice", "mcp:tools");
    let session = initialize(s.addr, &reader).await;
    let listed = in_session(s.addr, &reader, &session, "tools/list", json!({})).await;
    let names: Vec<&str> = listed.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "whoami"], "delete_file needs files:write");
    let refused = in_session(s.addr, &reader, &session, "tools/call", json!({"name": "delete_file"})).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.challenge(),
        r#"Bearer error="insufficient_scope", scope="files:write", resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", error_description="the tool \"delete_file\" needs the scope(s) files:write""#
    );
    assert_eq!(refused.body["id"], 1);
    let notes = in_session(
        s.addr,
        &reader,
        &session,
        "resources/read",
        json!({"uri": "file:///notes"}),
    )
    .await;
    assert_eq!(notes.status, StatusCode::FORBIDDEN);
    assert!(notes.challenge().contains(r#"scope="notes:read""#));
    let resources = in_session(s.addr, &reader, &session, "resources/list", json!({})).await;
    assert_eq!(resources.body["result"]["resources"], json!([]));

    let writer = token("bob", "mcp:tools files:write notes:read");
    let session = initialize(s.addr, &writer).await;
    let listed = in_session(s.addr, &writer, &session, "tools/list", json!({})).await;
    assert_eq!(listed.body["result"]["tools"].as_array().unwrap().len(), 3);
    let called = in_session(s.addr, &writer, &session, "tools/call", json!({"name": "delete_file"})).await;
    assert_eq!(called.status, StatusCode::OK);
    assert_eq!(called.body["result"]["content"][0]["text"], "deleted");
    let notes = in_session(
        s.addr,
        &writer,
        &session,
        "resources/read",
        json!({"uri": "file:///notes"}),
    )
    .await;
    assert_eq!(notes.body["result"]["contents"][0]["text"], "secret notes");
    // The principal reaches the handler.
    let me = in_session(s.addr, &writer, &session, "tools/call", json!({"name": "whoami"})).await;
    assert_eq!(
        me.body["result"]["content"][0]["text"],
        "bob|client-of-bob|mcp:tools files:write notes:read"
    );
}

#[tokio::test]
async fn the_principal_reaches_rate_limits_and_the_audit_stream() {
    use toolport_server::audit::{AuditKey, AuditLog, AuditOptions};
    use toolport_server::policy::{PolicyConfig, RateConfig};
    use toolport_server::{NoArgs, Server, tool};

    let dir = std::env::temp_dir().join(format!("toolport-auth-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&path);
    // One call per principal, then nothing for a long while.
    let policies = PolicyConfig {
        rate_per_principal: Some(RateConfig {
            per_second: 0.001,
            burst: 1,
        }),
        ..PolicyConfig::default()
    };
    let server = Server::builder("limited", "1.0.0")
        .tool(
            tool("echo")
                .description("Echoes.")
                .handler(|_: NoArgs| async { "echo".to_owned() }),
        )
        .policies(policies)
        .audit(AuditLog::open(path.to_str().unwrap(), AuditKey::generate(), AuditOptions::default()).unwrap())
        .build()
        .unwrap();
    let s = start_serving(server.clone(), HttpConfig::default()).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}, "_meta": meta}});
    let (alice, bob) = (token("alice", "mcp:tools"), token("bob", "mcp:tools"));
    let first = rpc(s.addr, Some(&alice), &headers, body.clone()).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    let again = rpc(s.addr, Some(&alice), &headers, body.clone()).await;
    assert_eq!(again.status, StatusCode::TOO_MANY_REQUESTS, "{}", again.text);
    assert!(again.headers.contains_key("retry-after"));
    // Bob has his own bucket.
    let other = rpc(s.addr, Some(&bob), &headers, body).await;
    assert_eq!(other.status, StatusCode::OK, "{}", other.text);

    server.flush_audit();
    let text = std::fs::read_to_string(&path).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "call")
        .collect();
    let who: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["principal"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(who[0], ("alice", "ok"), "{text}");
    assert_eq!(who.last().unwrap(), &("bob", "ok"), "{text}");
    assert!(
        !text.contains(&alice) && !text.contains(&bob),
        "tokens never reach the audit stream"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn stateless_requests_are_authorized_the_same_way() {
    let s = start(HttpConfig::default()).await;
    let reader = token("alice", "mcp:tools");
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "delete_file"),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "delete_file", "arguments": {}, "_meta": meta}});
    let refused = rpc(s.addr, Some(&reader), &headers, body.clone()).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let allowed = rpc(s.addr, Some(&token("bob", "files:write")), &headers, body).await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text);
    assert_eq!(allowed.body["result"]["content"][0]["text"], "deleted");

    // A list that differs by caller is never left cacheable by anyone.
    let list_headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    let list = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": meta}});
    let listed = rpc(s.addr, Some(&reader), &list_headers, list).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    assert_eq!(listed.body["result"]["cacheScope"], "private");
    assert_eq!(listed.body["result"]["ttlMs"], 60_000);
    assert_eq!(listed.body["result"]["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_session_id_replayed_by_another_principal_is_not_found() {
    let s = start(HttpConfig::default()).await;
    let alice = token("alice", "mcp:tools");
    let mallory = token("mallory", "mcp:tools");
    let session = initialize(s.addr, &alice).await;
    let stolen = in_session(s.addr, &mallory, &session, "tools/list", json!({})).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND, "{}", stolen.text);
    let headers = [
        ("authorization", format!("Bearer {mallory}")),
        ("mcp-session-id", session.clone()),
    ];
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let ended = send(s.addr, "DELETE", "/mcp", &headers, "").await;
    assert_eq!(
        ended.status,
        StatusCode::NOT_FOUND,
        "another principal cannot end it either"
    );
    // The same subject with a fresh token keeps its session.
    let again = in_session(s.addr, &token("alice", "mcp:tools"), &session, "tools/list", json!({})).await;
    assert_eq!(again.status, StatusCode::OK);
}

#[tokio::test]
async fn dns_rebinding_is_refused_even_with_a_valid_token() {
    let s = start(HttpConfig::default()).await;
    let alice = token("alice", "mcp:tools");
    let foreign_origin = rpc(
        s.addr,
        Some(&alice),
        &[("origin", "http://evil.example")],
        initialize_body(),
    )
    .await;
    assert_eq!(foreign_origin.status, StatusCode::FORBIDDEN);
    let foreign_host = rpc(s.addr, Some(&alice), &[("host", "evil.example")], initialize_body()).await;
    assert_eq!(foreign_host.status, StatusCode::FORBIDDEN);
    let local_origin = rpc(
        s.addr,
        Some(&alice),
        &[("origin", "http://localhost:5173")],
        initialize_body(),
    )
    .await;
    assert_eq!(local_origin.status, StatusCode::OK);
}

#[tokio::test]
async fn oversized_heads_and_bodies_are_refused() {
    let s = start(HttpConfig {
        max_body_bytes: 4096,
        max_header_bytes: 8192,
        ..HttpConfig::default()
    })
    .await;
    let alice = token("alice", "mcp:tools");
    let huge = "x".repeat(20_000);
    let answer = rpc(s.addr, Some(&alice), &[("x-padding", &huge)], initialize_body()).await;
    assert_eq!(answer.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    let big_body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "y".repeat(8000)}});
    let answer = rpc(s.addr, Some(&alice), &[], big_body).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    // Unauthenticated requests are refused before their body is read.
    let answer = rpc(s.addr, None, &[], list_body()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}
