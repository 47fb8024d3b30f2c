//! Finding the authorization server: protected-resource metadata (RFC 9728)
//! from the challenge or the well-known paths, then authorization-server
//! metadata (RFC 8414, OpenID Connect Discovery) with its issuer checked.

use serde::Deserialize;
use serde_json::Value;

use super::AuthError;
use crate::http::{self, HttpClient};
use crate::uri::{WELL_KNOWN, split_origin};

/// What the MCP server says about itself (RFC 9728).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResourceMetadata {
    /// Its resource identifier.
    pub resource: String,
    /// The authorization servers that issue tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes basic use needs.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// The DPoP proof algorithms it accepts (RFC 9728 §2).
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether it accepts DPoP-bound tokens only (RFC 9728 §2).
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
}

impl ResourceMetadata {
    /// Whether the resource says it takes DPoP-bound tokens.
    pub fn takes_dpop(&self) -> bool {
        self.dpop_bound_access_tokens_required
            || self
                .dpop_signing_alg_values_supported
                .as_ref()
                .is_some_and(|algs| !algs.is_empty())
    }
}

/// What an authorization server says about itself (RFC 8414).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ServerMetadata {
    /// Its issuer identifier.
    pub issuer: String,
    /// Where users authorize.
    pub authorization_endpoint: Option<String>,
    /// Where tokens are issued.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591), if offered.
    pub registration_endpoint: Option<String>,
    /// Scopes it knows.
    pub scopes_supported: Option<Vec<String>>,
    /// How clients authenticate at the token endpoint.
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods; absent means no PKCE, and then the client refuses.
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether it accepts Client ID Metadata Document URLs as client ids.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// Grant types it supports.
    pub grant_types_supported: Option<Vec<String>>,
    /// Where its signing keys are published.
    pub jwks_uri: Option<String>,
    /// The DPoP proof algorithms the server accepts (RFC 9449).
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// `scheme://authority` and path of an absolute URL.
pub(crate) fn split_url(url: &str) -> Result<(&str, &str), AuthError> {
    split_origin(url).ok_or_else(|| AuthError::Discovery(format!("{url:?} is not an absolute URL")))
}

/// The canonical form of a resource URI: lowercase scheme and host, no
/// fragment, no trailing slash on the path.
pub fn canonical_resource(url: &str) -> Result<String, AuthError> {
    let (origin, path) = split_url(url)?;
    let query = url.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
    Ok(format!(
        "{}{}{query}",
        origin.to_ascii_lowercase(),
        path.trim_end_matches('/')
    ))
}

/// Whether the metadata's `resource` may speak for `server_url`: same origin,
/// and its path a prefix (by whole segments) of the server's.
pub(crate) fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Ok((r_origin, r_path)), Ok((s_origin, s_path))) = (split_url(resource), split_url(server_url)) else {
        return false;
    };
    if !r_origin.eq_ignore_ascii_case(s_origin) {
        return false;
    }
    let r_path = r_path.trim_end_matches('/');
    let s_path = s_path.trim_end_matches('/');
    s_path == r_path || s_path.starts_with(&format!("{r_path}/"))
}

async fn fetch_json(client: &dyn HttpClient, url: &str) -> Result<Option<Value>, AuthError> {
    let request = http::get_json(url).map_err(|e| AuthError::Discovery(e.to_string()))?;
    let response = client
        .send(request)
        .await
        .map_err(|e| AuthError::Discovery(e.to_string()))?;
    if !http::is_json_ok(&response) {
        tracing::debug!(url, status = %response.status(), "no metadata here");
        return Ok(None);
    }
    Ok(serde_json::from_slice(response.body()).ok())
}

/// Protected-resource metadata for `server_url`: from the challenge's
/// `resource_metadata` if given, else the path-suffixed and then the root
/// well-known URL. `Ok(None)` when the server publishes none (2025-03-26).
pub(crate) async fn resource_metadata(
    client: &dyn HttpClient,
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, AuthError> {
    let (origin, path) = split_url(server_url)?;
    let path = path.trim_end_matches('/');
    let mut candidates: Vec<String> = from_challenge.map(str::to_owned).into_iter().collect();
    if !path.is_empty() {
        candidates.push(format!("{origin}{WELL_KNOWN}{path}"));
    }
    candidates.push(format!("{origin}{WELL_KNOWN}"));
    for url in candidates {
        let Some(value) = fetch_json(client, &url).await? else {
            continue;
        };
        let metadata: ResourceMetadata = serde_json::from_value(value)
            .map_err(|e| AuthError::Discovery(format!("{url}: not protected-resource metadata: {e}")))?;
        if !resource_covers(&metadata.resource, server_url) {
            return Err(AuthError::ResourceMismatch {
                resource: metadata.resource,
                server: server_url.to_owned(),
            });
        }
        if metadata.authorization_servers.is_empty() {
            return Err(AuthError::Discovery(format!("{url}: no authorization_servers")));
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

/// The well-known URLs to try for `issuer`, in the order MCP prescribes.
pub(crate) fn server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let (origin, path) = split_url(issuer)?;
    let path = path.trim_end_matches('/');
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// Authorization-server metadata for `issuer` (RFC 8414, then OpenID
/// Connect discovery); a document whose `issuer` is not exactly the one
/// asked for is not used (RFC 8414 §3.3).
pub async fn server_metadata(client: &dyn HttpClient, issuer: &str) -> Result<ServerMetadata, AuthError> {
    server_metadata_accepting(client, issuer, |found| found == issuer).await
}

async fn server_metadata_accepting(
    client: &dyn HttpClient,
    issuer: &str,
    accept: impl Fn(&str) -> bool,
) -> Result<ServerMetadata, AuthError> {
    let mut rejected = None;
    for url in server_metadata_urls(issuer)? {
        let Some(value) = fetch_json(client, &url).await? else {
            continue;
        };
        let Ok(metadata) = serde_json::from_value::<ServerMetadata>(value) else {
            continue;
        };
        if !accept(&metadata.issuer) {
            tracing::warn!(url, expected = issuer, found = %metadata.issuer, "authorization server metadata names another issuer; not used");
            rejected = Some(metadata.issuer);
            continue;
        }
        return Ok(metadata);
    }
    Err(match rejected {
        Some(found) => AuthError::IssuerMismatch {
            expected: issuer.to_owned(),
            found,
        },
        None => AuthError::Discovery(format!("no authorization server metadata for {issuer}")),
    })
}

/// The 2025-03-26 fallback when a server publishes no resource metadata:
/// the MCP server's origin is the authorization server, with its metadata
/// at the root or, failing that, the default endpoints. The MCP server is
/// then its own authorization server, so a document it serves naming an
/// issuer on its own origin (`https://mcp.example.com/oauth`) is used; one
/// naming another origin is not.
pub(crate) async fn legacy_server_metadata(
    client: &dyn HttpClient,
    server_url: &str,
) -> Result<ServerMetadata, AuthError> {
    let (origin, _) = split_url(server_url)?;
    let same_origin = |found: &str| split_url(found).is_ok_and(|(o, _)| o.eq_ignore_ascii_case(origin));
    if let Ok(metadata) = server_metadata_accepting(client, origin, same_origin).await {
        return Ok(metadata);
    }
    Ok(ServerMetadata {
        issuer: origin.to_owned(),
        authorization_endpoint: Some(format!("{origin}/authorize")),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        scopes_supported: None,
        token_endpoint_auth_methods_supported: None,
        code_challenge_methods_supported: Some(vec!["S256".into()]),
        client_id_metadata_document_supported: false,
        authorization_response_iss_parameter_supported: false,
        grant_types_supported: None,
        jwks_uri: None,
        dpop_signing_alg_values_supported: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_the_prescribed_order() {
        assert_eq!(
            server_metadata_urls("https://auth.example.com/tenant1").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(server_metadata_urls("https://auth.example.com").unwrap().len(), 2);
    }

    #[test]
    fn a_resource_covers_its_own_paths_only() {
        assert!(resource_covers("https://a.example/mcp", "https://a.example/mcp"));
        assert!(resource_covers("https://a.example", "https://a.example/mcp"));
        assert!(resource_covers("https://A.example/", "https://a.example/mcp"));
        assert!(!resource_covers("https://evil.example/mcp", "https://a.example/mcp"));
        assert!(!resource_covers("https://a.example/mc", "https://a.example/mcp"));
        assert!(!resource_covers("https://a.example/other", "https://a.example/mcp"));
        assert_eq!(
            canonical_resource("HTTPS://MCP.Example.com/mcp/").unwrap(),
            "https://mcp.example.com/mcp"
        );
    }
}
