//! Test support: raw HTTP requests, test keys and token minting.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::path::PathBuf;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use toolport_protocol::content::ResourceContents;
use toolport_protocol::resources::Resource;
use toolport_server::{NoArgs, RequestContext, ResourceEntry, Server, tool};

pub fn keys_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/keys")
}

/// A test key's public JWK.
pub fn jwk(name: &str) -> Jwk {
    let text = std::fs::read_to_string(keys_dir().join(format!("{name}.jwk.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

pub fn jwks(names: &[&str]) -> JwkSet {
    JwkSet {
        keys: names.iter().map(|n| jwk(n)).collect(),
    }
}

/// Signs `claims` with the test key `key`, naming `kid` in the header.
pub fn sign(key: &str, alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let pem = std::fs::read(keys_dir().join(format!("{key}.pem"))).unwrap();
    let encoding = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem).unwrap(),
        _ => EncodingKey::from_rsa_pem(&pem).unwrap(),
    };
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    header.typ = Some("at+jwt".into());
    jsonwebtoken::encode(&header, claims, &encoding).unwrap()
}

pub fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

pub const ISSUER: &str = "https://as.test";
pub const RESOURCE: &str = "http://127.0.0.1:8080/mcp";

/// Claims of a good token for `sub` with `scope`.
pub fn claims(sub: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": sub,
        "client_id": format!("client-of-{sub}"),
        "scope": scope,
        "iat": now(),
        "exp": now() + 300,
    })
}

/// A good RS256 token.
pub fn token(sub: &str, scope: &str) -> String {
    sign("rsa-1", Algorithm::RS256, Some("rsa-1"), &claims(sub, scope))
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Answer {
    pub fn challenge(&self) -> &str {
        self.headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// One request on a fresh connection.
pub async fn send(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut request = Request::builder().method(method).uri(path);
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request = request.header("host", addr.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = sender
        .send_request(request.body(Full::new(Bytes::from(body.to_owned()))).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = if let Some(data) = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .filter(|d| !d.is_empty())
    {
        serde_json::from_str(data).unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    Answer {
        status: parts.status,
        headers: parts.headers,
        body,
        text,
    }
}

/// A JSON-RPC POST to /mcp with a bearer token (if any) and extra headers.
pub async fn rpc(addr: SocketAddr, token: Option<&str>, extra: &[(&str, &str)], body: Value) -> Answer {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth.as_str()));
    }
    headers.extend_from_slice(extra);
    send(addr, "POST", "/mcp", &headers, &body.to_string()).await
}

pub fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// Initializes a session as the bearer of `token`; returns the session id.
pub async fn initialize(addr: SocketAddr, token: &str) -> String {
    let answer = rpc(addr, Some(token), &[], initialize_body()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let session = answer.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let done = rpc(
        addr,
        Some(token),
        &[("mcp-session-id", &session), ("mcp-protocol-version", "2025-11-25")],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(done.status, StatusCode::ACCEPTED);
    session
}

/// A request in a session.
pub async fn in_session(addr: SocketAddr, token: &str, session: &str, method: &str, params: Value) -> Answer {
    rpc(
        addr,
        Some(token),
        &[("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")],
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .await
}

/// The MCP server the tests protect: `echo` (any caller), `delete_file`
/// (needs `files:write` in the tests' configurations), `whoami` (reports
/// the principal) and the resource `file:///notes`.
pub fn protected_server() -> Server {
    // Lists are marked cacheable by anyone: the resource server must narrow
    // that, since what a caller sees depends on who it is.
    let public = toolport_server::CacheHints {
        ttl_ms: 60_000,
        scope: toolport_protocol::result::CacheScope::Public,
    };
    Server::builder("protected", "1.0.0")
        .options(toolport_server::ServerOptions {
            list_cache: public,
            ..Default::default()
        })
        .tool(
            tool("echo")
                .description("Echoes.")
                .handler(|_: NoArgs| async { "echo".to_owned() }),
        )
        .tool(
            tool("delete_file")
                .description("Deletes a file.")
                .handler(|_: NoArgs| async { "deleted".to_owned() }),
        )
        .tool(
            tool("whoami")
                .description("Who is calling.")
                .handler(|cx: RequestContext, _: NoArgs| async move {
                    let p = cx.principal().cloned().unwrap_or_default();
                    format!(
                        "{}|{}|{}",
                        p.subject,
                        p.client_id.unwrap_or_default(),
                        p.scopes.join(" ")
                    )
                }),
        )
        .resource(ResourceEntry::new(
            Resource {
                uri: "file:///notes".into(),
                name: "notes".into(),
                ..Default::default()
            },
            |_cx, req| async move { ResourceContents::text(req.uri, Some("text/plain"), "secret notes") },
        ))
        .build()
        .unwrap()
}

/// Serves `server` with `http` behind the resource server `auth`; its
/// address, and the sender whose drop stops it.
pub async fn serve_protected(
    server: Server,
    auth: std::sync::Arc<toolport_auth::resource::ResourceServer>,
    http: toolport_http::HttpConfig,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let bound = toolport_http::HttpServer::new(server, http)
        .with_authenticator(auth)
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}
