//! The caller's token across the hop (`forward_token`), the gateway's own
//! credential for an upstream's lists, scopes from `[upstream.limits]`, and
//! no token in any log line.
//!
//! The upstream is a Toolport server protected by the OAuth resource server
//! of `toolport-auth`, trusting the same issuer and audience as the gateway
//! (what `forward_token` asks of an upstream); tokens are signed with
//! `toolport-auth`'s test keys. Everything logs at TRACE into a buffer that
//! is searched for the tokens at the end.

mod support;

use std::sync::Arc;

use support::{loopback, serve_http};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};
use toolport_client::{Client, ClientError};
use toolport_gateway::{Gateway, GatewaySection, Share, UpstreamConfig, UpstreamLimits};
use toolport_http::HttpServer;
use toolport_protocol::ProtocolVersion;
use toolport_server::{NoArgs, Server, tool};

const ISSUER: &str = "https://as.test";
/// The audience of every token here: the gateway's, which the upstream also accepts.
const AUDIENCE: &str = "http://127.0.0.1:8080/mcp";

fn keys() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../toolport-auth/tests/keys")
}

fn token(sub: &str, scope: &str) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "client_id": format!("app-of-{sub}"),
        "scope": scope, "iat": now, "exp": now + 600});
    let pem = std::fs::read(keys().join("ec-1.pem")).unwrap();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec-1".into());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_pem(&pem).unwrap()).unwrap()
}

fn resource_server(keep_token: bool, tweak: impl FnOnce(&mut ResourceServerConfig)) -> Arc<ResourceServer> {
    let text = std::fs::read_to_string(keys().join("ec-1.jwk.json")).unwrap();
    let jwks = JwkSet {
        keys: vec![serde_json::from_str(&text).unwrap()],
    };
    let mut config = ResourceServerConfig::new(AUDIENCE, ISSUER, JwksSource::Static(jwks));
    config.keep_token = keep_token;
    tweak(&mut config);
    Arc::new(ResourceServer::new(config).unwrap())
}

/// The upstream: `whoami` answers with the subject of the token it got.
async fn upstream() -> String {
    let server = Server::builder("protected-upstream", "1.0.0")
        .tool(
            tool("whoami").handler(|cx: toolport_server::RequestContext, _: NoArgs| async move {
                cx.principal().map(|p| p.subject.clone()).unwrap_or_default()
            }),
        )
        .build()
        .unwrap();
    serve_http(HttpServer::new(server, loopback()).with_authenticator(resource_server(false, |_| {}))).await
}

/// Every log line of this test binary, at TRACE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callers_token_travels_to_the_upstream_and_never_into_a_log() {
    let logs = support::Captured::start();
    let upstream_url = upstream().await;
    let (alice, bob, own) = (
        token("alice", "up:use"),
        token("bob", "other"),
        token("gateway-service", ""),
    );
    // Lists with the gateway's own token, calls with the caller's; the
    // upstream's tools need `up:use`.
    let up = UpstreamConfig {
        forward_token: true,
        share: Share::PerPrincipal,
        bearer: Some(toolport_gateway::Secret(own.clone())),
        limits: UpstreamLimits {
            scopes: vec!["up:use".into()],
            ..UpstreamLimits::default()
        },
        ..UpstreamConfig::http("up", &upstream_url)
    };
    let section = GatewaySection::default();
    let empty = Default::default();
    let (_, scopes) = toolport_gateway::policy::layers(
        &toolport_server::policy::PolicyConfig::default(),
        (&empty, &empty),
        &section,
        std::slice::from_ref(&up),
    )
    .unwrap();
    let server = Server::builder("gateway", "1.0.0").build().unwrap();
    let gateway = Gateway::start(section, vec![up.clone()], &server).await.unwrap();
    let auth = resource_server(true, |c| c.tool_scopes = scopes.tools.clone());
    let url = serve_http(HttpServer::new(server, loopback()).with_authenticator(auth)).await;

    for version in [Some(ProtocolVersion::V2025_11_25), None] {
        let a = support::client_with(&url, version, Some(&alice)).await;
        let listed: Vec<String> = a.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert!(listed.contains(&"up__whoami".to_owned()), "{listed:?}");
        // The upstream saw alice's token: it names her, not the gateway.
        assert_eq!(
            support::text(&a.call_tool("up__whoami", json!({})).await.unwrap()),
            "alice"
        );
    }
    // Bob lacks the upstream's scope: not listed, and refused with the challenge.
    let b = support::client_with(&url, Some(ProtocolVersion::V2025_11_25), Some(&bob)).await;
    let listed: Vec<String> = b.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(!listed.contains(&"up__whoami".to_owned()), "{listed:?}");
    match b.call_tool("up__whoami", json!({})).await {
        Err(ClientError::Forbidden { www_authenticate }) => {
            let challenge = www_authenticate.unwrap_or_default();
            assert!(
                challenge.contains("insufficient_scope") && challenge.contains("up:use"),
                "{challenge}"
            );
        }
        other => panic!("bob called a tool he has no scope for: {other:?}"),
    }

    // A gateway without authentication has no token to pass on: the call
    // is refused, clearly, before anything goes upstream.
    let open = Server::builder("open-gateway", "1.0.0").build().unwrap();
    let open_gateway = Gateway::start(GatewaySection::default(), vec![up], &open)
        .await
        .unwrap();
    let open_url = serve_http(HttpServer::new(open, loopback())).await;
    let anonymous = Client::http(&open_url).connect().await.unwrap();
    let refused = anonymous.call_tool("up__whoami", json!({})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        support::text(&refused).contains("came without one"),
        "{}",
        support::text(&refused)
    );

    gateway.stop().await;
    open_gateway.stop().await;
    let logged = logs.text();
    assert!(
        logged.contains("toolport::upstream") && logged.contains("listing installed"),
        "the logs were not captured: {logged:.2000}"
    );
    for (who, secret) in [("alice", &alice), ("bob", &bob), ("the gateway", &own)] {
        // Any 24 characters of a token's signature would do to replay it.
        let tail = &secret[secret.len() - 24..];
        assert!(!logged.contains(tail), "{who}'s token is in the logs");
    }
}
