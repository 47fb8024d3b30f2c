//! Enterprise-managed authorization: the user's ID token is exchanged at the
//! enterprise identity provider (RFC 8693 token exchange) for an Identity
//! Assertion JWT Authorization Grant (ID-JAG) addressed to the MCP server's
//! authorization server, which then takes it with the JWT bearer grant.

use serde::Deserialize;

use super::{AuthError, IdJag};
use crate::http::{self, HttpClient};

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

#[derive(Deserialize)]
struct ExchangeResponse {
    access_token: String,
    issued_token_type: String,
}

#[derive(Deserialize)]
struct ExchangeError {
    error: String,
    error_description: Option<String>,
}

/// Exchanges the ID token for an ID-JAG for `audience` (the authorization
/// server's issuer) and `resource` (the MCP server).
pub(crate) async fn exchange(
    http_client: &dyn HttpClient,
    idjag: &IdJag,
    audience: &str,
    resource: &str,
    scope: &str,
) -> Result<String, AuthError> {
    let mut pairs = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("subject_token", idjag.id_token.as_str()),
        ("subject_token_type", ID_TOKEN),
        ("audience", audience),
        ("resource", resource),
        ("client_id", idjag.idp_client_id.as_str()),
    ];
    if let Some(secret) = &idjag.idp_client_secret {
        pairs.push(("client_secret", secret));
    }
    if !scope.is_empty() {
        pairs.push(("scope", scope));
    }
    let endpoint = &idjag.idp_token_endpoint;
    let request = http::post_form(endpoint, &pairs, None).map_err(|e| AuthError::Token(e.to_string()))?;
    let response = http_client
        .send(request)
        .await
        .map_err(|e| AuthError::Token(e.to_string()))?;
    if !response.status().is_success() {
        let why = serde_json::from_slice::<ExchangeError>(response.body())
            .map(|e| format!("{}: {}", e.error, e.error_description.unwrap_or_default()))
            .unwrap_or_else(|_| http::status_text(response.status()));
        return Err(AuthError::Token(format!(
            "the identity provider {endpoint} refused the token exchange: {why}"
        )));
    }
    let answer: ExchangeResponse = serde_json::from_slice(response.body())
        .map_err(|_| AuthError::Token(format!("{endpoint}: not a token-exchange response")))?;
    if answer.issued_token_type != ID_JAG {
        return Err(AuthError::Token(format!(
            "{endpoint} issued a {:?}, not an ID-JAG",
            answer.issued_token_type
        )));
    }
    Ok(answer.access_token)
}
