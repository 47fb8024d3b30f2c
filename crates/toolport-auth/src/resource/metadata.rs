//! Protected Resource Metadata (RFC 9728) and the challenges that point to it.

use serde_json::{Value, json};

use super::config::ResourceServerConfig;
use crate::uri::{WELL_KNOWN, split_origin};

/// Where the metadata of `resource` is published: the path-suffixed form
/// first (clients try it first), then the root form.
pub(crate) fn document_paths(resource: &str) -> Vec<String> {
    let path = split_origin(resource).map_or("", |(_, p)| p).trim_end_matches('/');
    let mut paths = Vec::new();
    if !path.is_empty() {
        paths.push(format!("{WELL_KNOWN}{path}"));
    }
    paths.push(WELL_KNOWN.to_owned());
    paths
}

/// The absolute URL of the metadata document named in challenges.
pub(crate) fn document_url(resource: &str) -> String {
    let (origin, _) = split_origin(resource).unwrap_or((resource, ""));
    format!("{origin}{}", document_paths(resource)[0])
}

/// The metadata document.
pub(crate) fn document(config: &ResourceServerConfig) -> Value {
    let mut doc = json!({
        "resource": config.resource,
        "authorization_servers": config.authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    let scopes: Vec<&String> = config
        .scopes_supported
        .iter()
        .filter(|s| s.as_str() != "offline_access")
        .collect();
    if !scopes.is_empty() {
        doc["scopes_supported"] = json!(scopes);
    }
    if let Some(name) = &config.resource_name {
        doc["resource_name"] = json!(name);
    }
    doc
}

/// A `WWW-Authenticate: Bearer ...` value with these parameters, quoted as
/// RFC 6750 wants (backslash and quote escaped).
pub(crate) fn challenge(params: &[(&str, &str)]) -> String {
    let parts: Vec<String> = params
        .iter()
        .map(|(name, value)| {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            format!("{name}=\"{escaped}\"")
        })
        .collect();
    if parts.is_empty() {
        "Bearer".to_owned()
    } else {
        format!("Bearer {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_lives_at_the_path_suffixed_and_root_well_known_paths() {
        assert_eq!(
            document_paths("https://mcp.example.com/public/mcp"),
            [
                "/.well-known/oauth-protected-resource/public/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            document_paths("https://mcp.example.com"),
            ["/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            document_url("http://127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(split_origin("mcp.example.com"), None);
        assert_eq!(split_origin("https://a.example/x#frag"), None);
    }

    #[test]
    fn challenges_quote_their_values() {
        assert_eq!(
            challenge(&[("error", "invalid_token"), ("error_description", "a \"b\"")]),
            r#"Bearer error="invalid_token", error_description="a \"b\"""#
        );
        assert_eq!(challenge(&[]), "Bearer");
    }
}
