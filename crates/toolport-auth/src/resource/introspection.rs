//! RFC 7662 token introspection, for opaque (non-JWT) access tokens.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::Value;
use toolport_server::Principal;

use super::config::{IntrospectionConfig, ResourceServerConfig};
use super::token::{TokenError, scopes_of};
use crate::http::{self, HttpClient};

#[derive(Debug, Deserialize)]
struct Introspected {
    #[serde(default)]
    active: bool,
    scope: Option<Value>,
    client_id: Option<String>,
    sub: Option<String>,
    aud: Option<Value>,
    iss: Option<String>,
    exp: Option<u64>,
    nbf: Option<u64>,
}

/// Asks the authorization server about `token`. Only an active token issued
/// by our issuer for this resource, inside its validity window, passes.
pub(crate) async fn introspect(
    token: &str,
    introspection: &IntrospectionConfig,
    config: &ResourceServerConfig,
    client: &dyn HttpClient,
) -> Result<(Principal, Option<u64>), TokenError> {
    let credentials = STANDARD.encode(format!(
        "{}:{}",
        form_urlencoded::byte_serialize(introspection.client_id.as_bytes()).collect::<String>(),
        form_urlencoded::byte_serialize(introspection.client_secret.as_bytes()).collect::<String>()
    ));
    let request = http::post_form(
        &introspection.endpoint,
        &[("token", token), ("token_type_hint", "access_token")],
        Some(&format!("Basic {credentials}")),
    )
    .map_err(|_| TokenError::Inactive)?;
    let response = client.send(request).await.map_err(|e| {
        tracing::warn!(error = %e, "token introspection failed");
        TokenError::Inactive
    })?;
    if !response.status().is_success() {
        tracing::warn!(status = %response.status(), "token introspection refused");
        return Err(TokenError::Inactive);
    }
    let answer: Introspected = serde_json::from_slice(response.body()).map_err(|_| TokenError::Inactive)?;
    let exp = answer.exp;
    check(answer, config).map(|p| (p, exp))
}

fn check(answer: Introspected, config: &ResourceServerConfig) -> Result<Principal, TokenError> {
    if !answer.active {
        return Err(TokenError::Inactive);
    }
    if answer.iss.as_ref().is_some_and(|iss| iss != &config.issuer) {
        return Err(TokenError::Issuer);
    }
    let for_us = match &answer.aud {
        Some(Value::String(aud)) => aud == &config.resource,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&config.resource)),
        // Audience binding is not optional (RFC 8707): no `aud`, no access.
        _ => false,
    };
    if !for_us {
        return Err(TokenError::Audience);
    }
    let now = jsonwebtoken::get_current_timestamp();
    let leeway = config.leeway.as_secs();
    if answer.exp.is_some_and(|exp| exp + leeway < now) {
        return Err(TokenError::Expired);
    }
    if answer.nbf.is_some_and(|nbf| nbf > now + leeway) {
        return Err(TokenError::NotYetValid);
    }
    let subject = answer
        .sub
        .or_else(|| answer.client_id.clone())
        .ok_or_else(|| TokenError::Claims("sub".into()))?;
    Ok(Principal {
        subject,
        client_id: answer.client_id,
        scopes: scopes_of(answer.scope.as_ref(), None),
        credential: None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::resource::config::JwksSource;

    fn config() -> ResourceServerConfig {
        ResourceServerConfig::new(
            "https://mcp.example.com/mcp",
            "https://as.example.com",
            JwksSource::Static(Default::default()),
        )
    }

    fn answer(value: Value) -> Introspected {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_active_tokens_for_this_resource_pass() {
        let now = jsonwebtoken::get_current_timestamp();
        let good = json!({"active": true, "sub": "u1", "client_id": "c", "scope": "a b",
            "aud": ["https://mcp.example.com/mcp"], "iss": "https://as.example.com", "exp": now + 60});
        let p = check(answer(good.clone()), &config()).unwrap();
        assert_eq!((p.subject.as_str(), p.scopes.len()), ("u1", 2));
        let mut inactive = good.clone();
        inactive["active"] = json!(false);
        assert_eq!(check(answer(inactive), &config()), Err(TokenError::Inactive));
        let mut other = good.clone();
        other["aud"] = json!("https://other.example.com");
        assert_eq!(check(answer(other), &config()), Err(TokenError::Audience));
        let mut no_aud = good.clone();
        no_aud.as_object_mut().unwrap().remove("aud");
        assert_eq!(check(answer(no_aud), &config()), Err(TokenError::Audience));
        let mut expired = good.clone();
        expired["exp"] = json!(now - 3600);
        assert_eq!(check(answer(expired), &config()), Err(TokenError::Expired));
        let mut foreign = good;
        foreign["iss"] = json!("https://evil.example.com");
        assert_eq!(check(answer(foreign), &config()), Err(TokenError::Issuer));
    }
}
