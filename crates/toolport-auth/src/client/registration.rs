//! Getting a client id at an authorization server: pre-registered
//! credentials, a Client ID Metadata Document URL, or dynamic registration
//! (RFC 7591, deprecated but still common), in that order.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::discovery::ServerMetadata;
use super::{AuthError, OAuthConfig};
use crate::http::{self, HttpClient};

/// A client id at one authorization server, and how to authenticate with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The issuer this registration belongs to; it is never used with another.
    pub issuer: String,
    /// The client id.
    pub client_id: String,
    /// The secret, for confidential clients.
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    pub auth_method: String,
}

/// The token-endpoint authentication a client uses: what its registration
/// said, else the best the server supports for what the client holds.
pub(crate) fn choose_auth_method(
    registered: Option<&str>,
    has_secret: bool,
    has_key: bool,
    server: &ServerMetadata,
) -> String {
    if let Some(method) = registered {
        return method.to_owned();
    }
    // RFC 8414: when absent, the default is client_secret_basic.
    let supported = server
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_else(|| vec!["client_secret_basic".into()]);
    let offers = |m: &str| supported.iter().any(|s| s == m);
    if has_key && offers("private_key_jwt") {
        "private_key_jwt".into()
    } else if has_secret && offers("client_secret_basic") {
        "client_secret_basic".into()
    } else if has_secret && offers("client_secret_post") {
        "client_secret_post".into()
    } else if has_secret && !offers("none") {
        "client_secret_basic".into()
    } else {
        "none".into()
    }
}

#[derive(Debug, Deserialize)]
struct RegistrationResponse {
    client_id: String,
    client_secret: Option<String>,
    token_endpoint_auth_method: Option<String>,
}

/// A registration for `server`, made or chosen following MCP's priority.
/// `pre_registered_at` is the issuer pre-registered credentials without an
/// issuer of their own were first used with: they belong to it from then on.
pub(crate) async fn register(
    client: &dyn HttpClient,
    config: &OAuthConfig,
    server: &ServerMetadata,
    pre_registered_at: Option<&str>,
) -> Result<ClientRegistration, AuthError> {
    let machine = config.grant.is_machine();
    let has_key = config.private_key.is_some();
    if let Some(pre) = &config.pre_registered {
        // Pre-registered credentials belong to one authorization server; when
        // the MCP server names another, say so rather than try them there.
        if let Some(owner) = pre.issuer.as_deref().or(pre_registered_at)
            && owner != server.issuer
        {
            return Err(AuthError::Registration(format!(
                "the pre-registered client belongs to {owner}, but the MCP server now names {}",
                server.issuer
            )));
        }
        let auth_method = choose_auth_method(pre.auth_method.as_deref(), pre.client_secret.is_some(), has_key, server);
        return Ok(ClientRegistration {
            issuer: server.issuer.clone(),
            client_id: pre.client_id.clone(),
            client_secret: pre.client_secret.clone(),
            auth_method,
        });
    }
    if let Some(url) = &config.client_metadata_url
        && server.client_id_metadata_document_supported
        && !machine
    {
        return Ok(ClientRegistration {
            issuer: server.issuer.clone(),
            client_id: url.clone(),
            client_secret: None,
            auth_method: "none".into(),
        });
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(AuthError::Registration(format!(
            "{} offers no way to get a client id: configure a pre-registered client",
            server.issuer
        )));
    };
    // A public client when the server allows one (no secret to keep), unless
    // it acts on its own behalf, which needs a secret.
    let offered = server
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_else(|| vec!["client_secret_basic".into()]);
    let offers = |m: &str| offered.iter().any(|o| o == m);
    let auth_method = if !machine && offers("none") {
        "none"
    } else if offers("client_secret_basic") || !offers("client_secret_post") {
        "client_secret_basic"
    } else {
        "client_secret_post"
    };
    let grant_types = if machine {
        json!([config.grant.grant_type()])
    } else {
        json!(["authorization_code", "refresh_token"])
    };
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": [config.redirect_uri],
        "grant_types": grant_types,
        "response_types": if machine { json!([]) } else { json!(["code"]) },
        "token_endpoint_auth_method": auth_method,
        // A loopback redirect makes this a native application (SEP-837).
        "application_type": "native",
    });
    let request = http::post_json(endpoint, &body).map_err(|e| AuthError::Registration(e.to_string()))?;
    let response = client
        .send(request)
        .await
        .map_err(|e| AuthError::Registration(e.to_string()))?;
    if !response.status().is_success() {
        return Err(AuthError::Registration(format!(
            "{endpoint} refused the registration ({}): {}",
            http::status_text(response.status()),
            String::from_utf8_lossy(response.body())
                .chars()
                .take(300)
                .collect::<String>()
        )));
    }
    let answer: RegistrationResponse = serde_json::from_slice(response.body())
        .map_err(|e| AuthError::Registration(format!("{endpoint}: not a registration response: {e}")))?;
    let auth_method = choose_auth_method(
        answer.token_endpoint_auth_method.as_deref(),
        answer.client_secret.is_some(),
        false,
        server,
    );
    Ok(ClientRegistration {
        issuer: server.issuer.clone(),
        client_id: answer.client_id,
        client_secret: answer.client_secret,
        auth_method,
    })
}

/// The Client ID Metadata Document a client hosts at its client id URL.
pub fn client_metadata_document(config: &OAuthConfig) -> serde_json::Value {
    json!({
        "client_id": config.client_metadata_url,
        "client_name": config.client_name,
        "redirect_uris": [config.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::PreRegistered;
    use crate::http::{HttpError, HttpFuture};

    /// Registration by pre-registered credentials needs no network.
    #[derive(Debug)]
    struct Offline;

    impl HttpClient for Offline {
        fn send(
            &self,
            _: ::http::Request<bytes::Bytes>,
        ) -> HttpFuture<'_, Result<::http::Response<bytes::Bytes>, HttpError>> {
            panic!("no request is expected")
        }
    }

    fn server(issuer: &str) -> ServerMetadata {
        serde_json::from_value(json!({"issuer": issuer, "token_endpoint": format!("{issuer}/token"),
            "token_endpoint_auth_methods_supported": ["client_secret_post"]}))
        .unwrap()
    }

    #[tokio::test]
    async fn pre_registered_credentials_stay_with_their_authorization_server() {
        let mut config = OAuthConfig::new("https://mcp.example/mcp", "c", "http://127.0.0.1:1/cb");
        config.pre_registered = Some(PreRegistered {
            client_id: "id".into(),
            client_secret: Some("secret".into()),
            issuer: None,
            auth_method: None,
        });
        let first = register(&Offline, &config, &server("https://as1.example"), None)
            .await
            .unwrap();
        assert_eq!(
            (first.client_id.as_str(), first.auth_method.as_str()),
            ("id", "client_secret_post")
        );
        let moved = register(
            &Offline,
            &config,
            &server("https://as2.example"),
            Some("https://as1.example"),
        )
        .await;
        assert!(
            matches!(moved, Err(AuthError::Registration(ref m)) if m.contains("as1.example")),
            "{moved:?}"
        );
        config.pre_registered.as_mut().unwrap().issuer = Some("https://as1.example".into());
        assert!(
            register(&Offline, &config, &server("https://as2.example"), None)
                .await
                .is_err()
        );
    }
}
