//! The client under test for the official conformance suite's `auth/*`
//! scenarios: runs the OAuth flows of `toolport-auth` against the suite's
//! mock authorization and MCP servers, then lists and calls a tool.
//!
//! The suite runs `<this program> <server url>` with
//! `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for
//! some scenarios, `MCP_CONFORMANCE_CONTEXT` (pre-registered credentials,
//! a private key) in the environment. Exit 0 means the flow completed.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use toolport_auth::client::{Grant, HeadlessUserAgent, OAuthClient, OAuthConfig, PreRegistered, PrivateKey};
use toolport_auth::http::{HttpClient, HyperClient};
use toolport_auth::mcp_http::McpHttpCaller;

/// The Client ID Metadata Document URL the suite expects a CIMD client to use.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

fn main() -> ExitCode {
    let Some(server_url) = std::env::args().nth(1).filter(|a| a.starts_with("http")) else {
        eprintln!("usage: toolport-oauth-conformance-client <server url>");
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match runtime.block_on(run(&server_url)) {
        Ok(()) => {
            eprintln!("conformance client: done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance client: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(server_url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into());
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    eprintln!("conformance client: scenario {scenario:?}, protocol {version}");

    let http: Arc<dyn HttpClient> = Arc::new(HyperClient::default());
    let mut config = OAuthConfig::new(
        server_url,
        "toolport conformance client",
        "http://127.0.0.1:3000/callback",
    );
    config.client_metadata_url = Some(CLIENT_METADATA_URL.into());
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(client_id) = text("client_id") {
        config.pre_registered = Some(PreRegistered {
            client_id,
            client_secret: text("client_secret"),
            issuer: None,
            auth_method: None,
        });
    }
    if let Some(pem) = text("private_key_pem") {
        let algorithm = text("signing_algorithm")
            .and_then(|a| a.parse().ok())
            .unwrap_or(jsonwebtoken::Algorithm::ES256);
        config.private_key = Some(PrivateKey { pem, algorithm });
    }
    if scenario.starts_with("auth/client-credentials") {
        config.grant = Grant::ClientCredentials;
    }
    let auth = Arc::new(OAuthClient::new(
        config,
        http.clone(),
        Arc::new(HeadlessUserAgent::new(http.clone())),
    ));
    let caller = McpHttpCaller::new(server_url, version, http, Some(auth));
    caller.connect().await?;
    let tools = caller.list_tools().await?;
    eprintln!("conformance client: {} tool(s)", tools.len());
    if let Some(name) = tools.first().and_then(|t| t.get("name")).and_then(Value::as_str) {
        let result = caller.call_tool(name, json!({})).await?;
        eprintln!(
            "conformance client: called {name}: isError={}",
            result.get("isError").and_then(Value::as_bool).unwrap_or(false)
        );
    }
    Ok(())
}
