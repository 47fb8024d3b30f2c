//! The OAuth client's decisions that neither the conformance suite nor
//! oidc-provider exercise, against a scripted authorization server behind the
//! `HttpClient` trait (a stand-in inside a test; the real peers are in
//! `toolport-client/tests/conformance_suite.rs` and `oidc_provider.rs`): refusing a server without
//! PKCE S256, a refresh answering a 401 once, then a new authorization, and
//! a refused refresh falling back to a new authorization.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use serde_json::{Value, json};
use toolport_auth::client::{AuthError, HeadlessUserAgent, OAuthClient, OAuthConfig, PreRegistered, TokenProvider};
use toolport_auth::http::{HttpClient, HttpError, HttpFuture};

const SERVER: &str = "http://mcp.test/mcp";
const ISSUER: &str = "http://as.test";
const REDIRECT: &str = "http://127.0.0.1:9/cb";

/// A scripted authorization server: metadata, an auto-approving
/// authorization endpoint, and a token endpoint that counts grants.
#[derive(Debug, Default)]
struct Script {
    pkce: bool,
    refresh_works: bool,
    grants: Mutex<Vec<String>>,
    issued: Mutex<u32>,
}

impl Script {
    fn grants(&self) -> Vec<String> {
        self.grants.lock().unwrap().clone()
    }
}

fn json(status: StatusCode, body: Value) -> Response<Bytes> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap()
}

impl HttpClient for Script {
    fn send(&self, request: Request<Bytes>) -> HttpFuture<'_, Result<Response<Bytes>, HttpError>> {
        Box::pin(async move {
            let uri = request.uri().to_string();
            let path = request.uri().path().to_owned();
            Ok(match path.as_str() {
                "/.well-known/oauth-protected-resource/mcp" => json(
                    StatusCode::OK,
                    json!({"resource": SERVER, "authorization_servers": [ISSUER], "scopes_supported": ["mcp"]}),
                ),
                "/.well-known/oauth-authorization-server" => {
                    let mut metadata = json!({"issuer": ISSUER, "authorization_endpoint": format!("{ISSUER}/authorize"),
                        "token_endpoint": format!("{ISSUER}/token"), "token_endpoint_auth_methods_supported": ["none"],
                        "scopes_supported": ["mcp", "offline_access"]});
                    if self.pkce {
                        metadata["code_challenge_methods_supported"] = json!(["S256"]);
                    }
                    json(StatusCode::OK, metadata)
                }
                "/authorize" => {
                    let query: BTreeMap<String, String> =
                        form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
                            .into_owned()
                            .collect();
                    Response::builder()
                        .status(StatusCode::FOUND)
                        .header(
                            "location",
                            format!("{REDIRECT}?code=c1&state={}&iss={ISSUER}", query["state"]),
                        )
                        .body(Bytes::new())
                        .unwrap()
                }
                "/token" => {
                    let form: BTreeMap<String, String> = form_urlencoded::parse(request.body()).into_owned().collect();
                    let grant = form["grant_type"].clone();
                    self.grants.lock().unwrap().push(grant.clone());
                    if grant == "refresh_token" && !self.refresh_works {
                        json(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}))
                    } else {
                        let mut issued = self.issued.lock().unwrap();
                        *issued += 1;
                        json(
                            StatusCode::OK,
                            json!({"access_token": format!("at-{issued}"), "token_type": "Bearer",
                                "expires_in": 300, "refresh_token": "rt", "scope": "mcp"}),
                        )
                    }
                }
                _ => json(StatusCode::NOT_FOUND, json!({"error": "not found", "uri": uri})),
            })
        })
    }
}

fn client(script: Arc<Script>) -> OAuthClient {
    let mut config = OAuthConfig::new(SERVER, "test", REDIRECT);
    config.pre_registered = Some(PreRegistered {
        client_id: "c".into(),
        client_secret: None,
        issuer: Some(ISSUER.into()),
        auth_method: Some("none".into()),
    });
    OAuthClient::new(config, script.clone(), Arc::new(HeadlessUserAgent::new(script)))
}

const CHALLENGE: &str =
    r#"Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="mcp""#;

#[tokio::test]
async fn an_authorization_server_without_pkce_s256_is_refused() {
    let script = Arc::new(Script::default());
    let oauth = client(script.clone());
    assert_eq!(oauth.on_unauthorized(Some(CHALLENGE)).await, Err(AuthError::NoPkce));
    assert!(script.grants().is_empty(), "no code was ever exchanged");
    assert_eq!(oauth.token().await.unwrap(), None);
}

#[tokio::test]
async fn a_401_is_answered_by_one_refresh_then_by_a_new_authorization() {
    let script = Arc::new(Script {
        pkce: true,
        refresh_works: true,
        ..Script::default()
    });
    let oauth = client(script.clone());
    oauth.on_unauthorized(Some(CHALLENGE)).await.unwrap();
    assert_eq!(oauth.token().await.unwrap().as_deref(), Some("at-1"));
    // The server refuses the token: refreshing may be enough.
    oauth.on_unauthorized(Some(CHALLENGE)).await.unwrap();
    assert_eq!(oauth.token().await.unwrap().as_deref(), Some("at-2"));
    // Refused again right after a refresh: authorize anew.
    oauth.on_unauthorized(Some(CHALLENGE)).await.unwrap();
    assert_eq!(
        script.grants(),
        ["authorization_code", "refresh_token", "authorization_code"]
    );
}

#[tokio::test]
async fn a_refused_refresh_falls_back_to_a_new_authorization() {
    let script = Arc::new(Script {
        pkce: true,
        refresh_works: false,
        ..Script::default()
    });
    let oauth = client(script.clone());
    oauth.on_unauthorized(Some(CHALLENGE)).await.unwrap();
    oauth.expire_access_token().await;
    // The refresh fails, so no token is sent and the next 401 authorizes anew.
    assert_eq!(oauth.token().await.unwrap(), None);
    oauth.on_unauthorized(Some(CHALLENGE)).await.unwrap();
    assert_eq!(oauth.token().await.unwrap().as_deref(), Some("at-2"));
    assert_eq!(
        script.grants(),
        ["authorization_code", "refresh_token", "authorization_code"]
    );
    // A 403 that is not about scope is final.
    let forbidden = oauth.on_forbidden(Some(r#"Bearer error="access_denied""#)).await;
    assert!(matches!(forbidden, Err(AuthError::Forbidden(_))), "{forbidden:?}");
}
