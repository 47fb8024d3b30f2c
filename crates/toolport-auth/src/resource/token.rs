//! Checking a JWT access token: its algorithm against the allowlist, its key
//! against the issuer's JWKS, then issuer, audience (this server's canonical
//! URI, RFC 8707), expiry and not-before with a small leeway.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, Validation, errors::ErrorKind};
use serde::Deserialize;
use serde_json::Value;
use toolport_server::Principal;

use super::config::ResourceServerConfig;
use super::jwks::{JwksCache, KeyError};

/// Why a token was refused (the text goes into `error_description`; it never
/// contains the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWS in compact form, or its header does not parse (this is also
    /// what `alg: none` comes to).
    #[error("the token is not a signed JWT")]
    Malformed,
    /// The algorithm is not on the allowlist.
    #[error("the token's signing algorithm is not accepted")]
    Algorithm,
    /// No published key fits the token.
    #[error("the token's signing key is unknown")]
    UnknownKey,
    /// The keys could not be fetched.
    #[error("the issuer's keys are unavailable")]
    KeysUnavailable,
    /// The signature does not verify.
    #[error("the token's signature is invalid")]
    Signature,
    /// Expired.
    #[error("the token has expired")]
    Expired,
    /// Not valid yet.
    #[error("the token is not valid yet")]
    NotYetValid,
    /// Issued by someone else.
    #[error("the token was issued by another authorization server")]
    Issuer,
    /// Issued for another resource.
    #[error("the token was not issued for this resource")]
    Audience,
    /// A required claim is missing or malformed.
    #[error("the token lacks a required claim ({0})")]
    Claims(String),
    /// The token's type is not `at+jwt`.
    #[error("the token is not an access token")]
    Type,
    /// Introspection said the token is not active, or failed.
    #[error("the token is not active")]
    Inactive,
}

#[derive(Debug, Deserialize)]
struct AccessClaims {
    exp: Option<u64>,
    sub: Option<String>,
    client_id: Option<String>,
    azp: Option<String>,
    scope: Option<Value>,
    scp: Option<Value>,
}

/// The scopes of a `scope` (space-separated string) or `scp` (array) claim.
pub(crate) fn scopes_of(scope: Option<&Value>, scp: Option<&Value>) -> Vec<String> {
    let from = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => s.split_ascii_whitespace().map(str::to_owned).collect(),
            Value::Array(items) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        }
    };
    let mut scopes = scope.map(from).unwrap_or_default();
    if let Some(scp) = scp {
        for s in from(scp) {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
    }
    scopes
}

/// Whether `token` looks like a JWS (three base64url parts).
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

/// Whether `jwk` may verify `alg`: the key's own `alg` (if it says) agrees,
/// its type fits the algorithm family, and it is not an encryption key.
fn key_fits(jwk: &Jwk, alg: Algorithm) -> bool {
    if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
        return false;
    }
    if let Some(key_alg) = jwk.common.key_algorithm
        && !key_alg_is(key_alg, alg)
    {
        return false;
    }
    match (&jwk.algorithm, alg) {
        (
            AlgorithmParameters::RSA(_),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512,
        ) => true,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES384) => p.curve == EllipticCurve::P384,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => p.curve == EllipticCurve::Ed25519,
        _ => false,
    }
}

fn key_alg_is(key_alg: KeyAlgorithm, alg: Algorithm) -> bool {
    format!("{key_alg:?}") == format!("{alg:?}")
}

fn is_hmac(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// Verifies a JWT access token and returns who it speaks for, and its `exp`.
pub(crate) async fn verify_jwt(
    token: &str,
    config: &ResourceServerConfig,
    keys: &JwksCache,
) -> Result<(Principal, Option<u64>), TokenError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Malformed)?;
    if is_hmac(header.alg) || !config.algorithms.contains(&header.alg) {
        return Err(TokenError::Algorithm);
    }
    if config.require_at_jwt
        && !header
            .typ
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt"))
    {
        return Err(TokenError::Type);
    }
    let candidates = keys.candidates(header.kid.as_deref()).await.map_err(|e| match e {
        KeyError::Unknown => TokenError::UnknownKey,
        KeyError::Unavailable(_) => TokenError::KeysUnavailable,
    })?;
    let mut validation = Validation::new(header.alg);
    validation.leeway = config.leeway.as_secs();
    validation.validate_nbf = true;
    validation.validate_aud = true;
    validation.set_audience(&[&config.resource]);
    validation.set_issuer(&[&config.issuer]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    let mut last = TokenError::UnknownKey;
    for candidate in candidates.iter().filter(|k| key_fits(&k.jwk, header.alg)) {
        let Some(key) = &candidate.key else {
            continue;
        };
        match jsonwebtoken::decode::<AccessClaims>(token, key, &validation) {
            Ok(data) => {
                let exp = data.claims.exp;
                return principal(data.claims).map(|p| (p, exp));
            }
            Err(e) => {
                last = match e.kind() {
                    ErrorKind::InvalidSignature | ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidRsaKey(_) => {
                        TokenError::Signature
                    }
                    ErrorKind::ExpiredSignature => return Err(TokenError::Expired),
                    ErrorKind::ImmatureSignature => return Err(TokenError::NotYetValid),
                    ErrorKind::InvalidIssuer => return Err(TokenError::Issuer),
                    ErrorKind::InvalidAudience => return Err(TokenError::Audience),
                    ErrorKind::MissingRequiredClaim(c) => return Err(TokenError::Claims(c.clone())),
                    ErrorKind::InvalidAlgorithm => TokenError::Algorithm,
                    _ => TokenError::Malformed,
                };
            }
        }
    }
    Err(last)
}

fn principal(claims: AccessClaims) -> Result<Principal, TokenError> {
    let client_id = claims.client_id.or(claims.azp);
    let subject = claims
        .sub
        .or_else(|| client_id.clone())
        .ok_or_else(|| TokenError::Claims("sub".into()))?;
    Ok(Principal {
        subject,
        client_id,
        scopes: scopes_of(claims.scope.as_ref(), claims.scp.as_ref()),
        credential: None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn scopes_come_from_scope_strings_and_scp_arrays() {
        assert_eq!(scopes_of(Some(&json!("a  b")), None), ["a", "b"]);
        assert_eq!(scopes_of(None, Some(&json!(["x", "y"]))), ["x", "y"]);
        assert_eq!(scopes_of(Some(&json!("a")), Some(&json!(["a", "c"]))), ["a", "c"]);
        assert!(scopes_of(Some(&json!(5)), None).is_empty());
    }

    #[test]
    fn keys_must_fit_the_algorithm_family() {
        let rsa: Jwk = serde_json::from_value(json!({"kty":"RSA","n":"sXch","e":"AQAB","kid":"r"})).unwrap();
        let ec: Jwk = serde_json::from_value(json!({"kty":"EC","crv":"P-256","x":"AA","y":"AA","kid":"e"})).unwrap();
        let enc: Jwk = serde_json::from_value(json!({"kty":"RSA","n":"sXch","e":"AQAB","use":"enc"})).unwrap();
        let pinned: Jwk = serde_json::from_value(json!({"kty":"RSA","n":"sXch","e":"AQAB","alg":"PS256"})).unwrap();
        assert!(key_fits(&rsa, Algorithm::RS256));
        assert!(!key_fits(&rsa, Algorithm::ES256));
        assert!(!key_fits(&rsa, Algorithm::HS256), "an RSA key never verifies HMAC");
        assert!(key_fits(&ec, Algorithm::ES256));
        assert!(!key_fits(&ec, Algorithm::ES384));
        assert!(!key_fits(&enc, Algorithm::RS256));
        assert!(key_fits(&pinned, Algorithm::PS256));
        assert!(!key_fits(&pinned, Algorithm::RS256));
    }
}
