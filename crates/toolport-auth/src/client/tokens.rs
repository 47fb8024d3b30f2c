//! The token endpoint: exchanging a code, refreshing, client credentials;
//! and authenticating the client there (Basic, form post, private_key_jwt).

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::json;

use super::dpop::Dpop;
use super::registration::ClientRegistration;
use super::{AuthError, PrivateKey};
use crate::http::{self, HttpClient};

/// The RFC 7523 JWT bearer grant type.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Tokens from a token endpoint. Never logged: `Debug` hides them.
#[derive(Clone)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<Instant>,
    /// The scopes granted (or, when the server did not say, requested).
    pub scopes: Vec<String>,
    /// Bound to the client's DPoP key: presented with the `DPoP` scheme and a proof.
    pub dpop: bool,
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("dpop", &self.dpop)
            .finish()
    }
}

impl TokenSet {
    /// Whether the access token is expired or about to (within `skew`).
    pub fn expires_within(&self, skew: Duration) -> bool {
        self.expires_at.is_some_and(|at| at <= Instant::now() + skew)
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    expires_in: Option<u64>,
    refresh_token: Option<String>,
    scope: Option<String>,
}

#[derive(Deserialize)]
struct TokenErrorResponse {
    error: String,
    error_description: Option<String>,
}

/// The keys a token request may be signed with.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Keys<'a> {
    /// For `private_key_jwt` client authentication.
    pub(crate) private_key: Option<&'a PrivateKey>,
    /// For a DPoP-bound token.
    pub(crate) dpop: Option<&'a Dpop>,
}

/// A token request with `params`, authenticated as `client`; with a DPoP
/// key, the token is bound to it (and a `use_dpop_nonce` answer is retried
/// once with the server's nonce).
pub(crate) async fn request(
    http_client: &dyn HttpClient,
    token_endpoint: &str,
    issuer: &str,
    client: &ClientRegistration,
    keys: Keys<'_>,
    params: &[(&str, &str)],
    requested_scopes: &[String],
) -> Result<TokenSet, AuthError> {
    let private_key = keys.private_key;
    let mut pairs: Vec<(&str, String)> = params.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
    let mut authorization = None;
    match client.auth_method.as_str() {
        "client_secret_basic" => {
            let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let secret = client.client_secret.as_deref().unwrap_or("");
            authorization = Some(format!(
                "Basic {}",
                STANDARD.encode(format!("{}:{}", encode(&client.client_id), encode(secret)))
            ));
        }
        "client_secret_post" => {
            pairs.push(("client_id", client.client_id.clone()));
            pairs.push(("client_secret", client.client_secret.clone().unwrap_or_default()));
        }
        "private_key_jwt" => {
            let key = private_key
                .ok_or_else(|| AuthError::Token("private_key_jwt needs a private key in the configuration".into()))?;
            pairs.push(("client_id", client.client_id.clone()));
            pairs.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            pairs.push(("client_assertion", client_assertion(&client.client_id, issuer, key)?));
        }
        _ => pairs.push(("client_id", client.client_id.clone())),
    }
    let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut response = None;
    for _ in 0..2 {
        let mut request = http::post_form(token_endpoint, &borrowed, authorization.as_deref())
            .map_err(|e| AuthError::Token(e.to_string()))?;
        if let Some(dpop) = keys.dpop {
            let nonce = Dpop::nonce(&dpop.token_nonce);
            let proof = dpop.proof("POST", token_endpoint, nonce.as_deref(), None)?;
            let value = ::http::HeaderValue::from_str(&proof).map_err(|e| AuthError::Token(e.to_string()))?;
            request.headers_mut().insert("dpop", value);
        }
        let answer = http_client
            .send(request)
            .await
            .map_err(|e| AuthError::Token(e.to_string()))?;
        let nonce = answer.headers().get("dpop-nonce").and_then(|v| v.to_str().ok());
        let retry = match (keys.dpop, nonce) {
            (Some(dpop), Some(nonce)) => {
                Dpop::remember(&dpop.token_nonce, nonce);
                answer.status() == ::http::StatusCode::BAD_REQUEST
                    && serde_json::from_slice::<TokenErrorResponse>(answer.body())
                        .is_ok_and(|e| e.error == "use_dpop_nonce")
            }
            _ => false,
        };
        response = Some(answer);
        if !retry {
            break;
        }
    }
    let response = response.expect("the loop sends at least once");
    if !response.status().is_success() {
        let why = serde_json::from_slice::<TokenErrorResponse>(response.body())
            .map(|e| format!("{}: {}", e.error, e.error_description.unwrap_or_default()))
            .unwrap_or_else(|_| http::status_text(response.status()));
        return Err(AuthError::Token(format!("{token_endpoint} refused: {why}")));
    }
    let answer: TokenResponse = serde_json::from_slice(response.body())
        .map_err(|_| AuthError::Token(format!("{token_endpoint}: not a token response")))?;
    let dpop = keys.dpop.is_some() && answer.token_type.eq_ignore_ascii_case("dpop");
    if !dpop && !answer.token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Token(format!(
            "unsupported token type {:?} (Bearer, or DPoP after a DPoP proof)",
            answer.token_type
        )));
    }
    Ok(TokenSet {
        access_token: answer.access_token,
        refresh_token: answer.refresh_token,
        expires_at: answer.expires_in.map(|s| Instant::now() + Duration::from_secs(s)),
        scopes: match answer.scope {
            Some(scope) => scope.split_ascii_whitespace().map(str::to_owned).collect(),
            None => requested_scopes.to_vec(),
        },
        dpop,
    })
}

/// A private_key_jwt client assertion (RFC 7523): issued by and about the
/// client, for the authorization server's issuer, valid for five minutes.
fn client_assertion(client_id: &str, issuer: &str, key: &PrivateKey) -> Result<String, AuthError> {
    let encoding = match key.algorithm {
        jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
            jsonwebtoken::EncodingKey::from_ec_pem(key.pem.as_bytes())
        }
        jsonwebtoken::Algorithm::EdDSA => jsonwebtoken::EncodingKey::from_ed_pem(key.pem.as_bytes()),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(key.pem.as_bytes()),
    }
    .map_err(|e| AuthError::Token(format!("the private key cannot be read: {e}")))?;
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "iat": now,
        "exp": now + 300,
        "jti": super::pkce::random(16),
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(key.algorithm), &claims, &encoding)
        .map_err(|e| AuthError::Token(format!("cannot sign the client assertion: {e}")))
}
