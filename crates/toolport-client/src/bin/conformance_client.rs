//! The client under test for the official conformance suite's client mode:
//!
//! ```sh
//! conformance client --command "target/debug/toolport-conformance-client" --suite all
//! ```
//!
//! The runner appends the mock server's URL as the last argument and names
//! the scenario in `MCP_CONFORMANCE_SCENARIO` (test data, when a scenario
//! has any, in `MCP_CONFORMANCE_CONTEXT`). Each scenario gets the ordinary
//! client doing what an agent would: list, then call. Authorization
//! scenarios get the OAuth client (`toolport-auth`) as the token provider.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolport_auth::client::{
    Algorithm, DpopPolicy, Grant, HeadlessUserAgent, IdJag, OAuthClient, OAuthConfig, PreRegistered, PrivateKey,
};
use toolport_auth::http::{HttpClient, HyperClient};
use toolport_client::handler::Canned;
use toolport_client::oauth::OAuth;
use toolport_client::{Client, ClientError};

/// The Client ID Metadata Document URL the suite expects a CIMD client to use.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // The runner appends the server URL as the last argument.
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: toolport-conformance-client <server URL> (set MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match run(&url, &scenario, &context).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scenario {scenario}: {e} ({})", e.hint());
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str, context: &Value) -> Result<(), ClientError> {
    // Answers every question the way a cooperative user and model would.
    let answers = Canned {
        sample_text: "This is a test response from the client".into(),
        roots: Vec::new(),
    };
    let mut builder = Client::http(url).handler(answers);
    if let Some(provider) = token_provider(scenario, url, context) {
        builder = builder.auth(provider);
    }
    let client = builder.connect().await?;
    let server = client.server().await?;
    eprintln!(
        "connected to {} {} at {}",
        server.implementation.name, server.implementation.version, server.protocol_version
    );
    let tools = client.list_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("tools: {names:?}");
    match scenario {
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => {}
        "tools_call" => {
            client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
        }
        "http-custom-headers" => {
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
                client.call_tool(name, arguments).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or_else(|| ClientError::Protocol("json_schema_2020_12_tool is not listed".into()))?;
            let schema = Value::Object(focal.input_schema.clone());
            client
                .call_tool("json_schema_echo", json!({ "schema": schema }))
                .await?;
        }
        "http-standard-headers" => {
            for tool in &tools {
                client
                    .call_tool(&tool.name, Value::Object(sample_arguments(&tool.input_schema)))
                    .await?;
            }
            for resource in client.list_resources().await? {
                client.read_resource(&resource.uri).await?;
            }
            for prompt in client.list_prompts().await? {
                client.get_prompt(&prompt.name, BTreeMap::new()).await?;
            }
        }
        _ => {
            // Everything else: call what is listed, as an agent would (the
            // invalid-tool scenario checks that filtered tools are not called).
            for tool in &tools {
                let arguments = Value::Object(sample_arguments(&tool.input_schema));
                match client.call_tool(&tool.name, arguments).await {
                    Ok(result) => eprintln!("{}: isError={:?}", tool.name, result.is_error),
                    Err(e @ ClientError::Remote(_)) => eprintln!("{}: {e}", tool.name),
                    Err(e) => return Err(e),
                }
            }
        }
    }
    client.close().await;
    Ok(())
}

/// The OAuth client for the `auth/*` scenarios: discovery, registration
/// (pre-registered credentials from `MCP_CONFORMANCE_CONTEXT`, a Client ID
/// Metadata Document, or dynamic registration), authorization code with
/// PKCE through a headless user agent, client credentials, a workload's JWT
/// (RFC 7523), an enterprise ID token exchanged for an ID-JAG, step-up.
fn token_provider(scenario: &str, url: &str, context: &Value) -> Option<OAuth<OAuthClient>> {
    if !scenario.starts_with("auth/") {
        return None;
    }
    let http: Arc<dyn HttpClient> = Arc::new(HyperClient::default());
    let mut config = OAuthConfig::new(url, "toolport conformance client", "http://127.0.0.1:3000/callback");
    config.client_metadata_url = Some(CLIENT_METADATA_URL.into());
    // The suite's MCP servers take DPoP tokens without saying so in their
    // metadata: DPoP whenever the authorization server offers it.
    config.dpop = DpopPolicy::Always;
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
            .unwrap_or(Algorithm::ES256);
        config.private_key = Some(PrivateKey { pem, algorithm });
    }
    if scenario.starts_with("auth/client-credentials") {
        config.grant = Grant::ClientCredentials;
    }
    // Workload identity federation: the platform's JWT is the grant.
    if let Some(assertion) = text("valid_jwt") {
        config.grant = Grant::JwtBearer { assertion };
    }
    // Enterprise-managed authorization: the IdP's ID token, exchanged for an ID-JAG.
    if let (Some(id_token), Some(idp_token_endpoint), Some(idp_client_id)) =
        (text("idp_id_token"), text("idp_token_endpoint"), text("idp_client_id"))
    {
        config.grant = Grant::IdJag(IdJag {
            idp_token_endpoint,
            idp_client_id,
            idp_client_secret: text("idp_client_secret"),
            id_token,
        });
    }
    let person = Arc::new(HeadlessUserAgent::new(http.clone()));
    Some(OAuth::new(OAuthClient::new(config, http, person)))
}

/// Arguments that satisfy the required properties of a simple schema.
fn sample_arguments(schema: &Map<String, Value>) -> Map<String, Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    required
        .into_iter()
        .map(|name| {
            let kind = properties
                .and_then(|p| p.get(name))
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str);
            let value = match kind {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("object") => json!({}),
                Some("array") => json!([]),
                _ => json!("test"),
            };
            (name.to_owned(), value)
        })
        .collect()
}
