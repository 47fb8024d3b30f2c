//! The `[oauth]` section: the resource server's settings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// OAuth 2.1 resource-server settings; the endpoint is protected when
/// `issuer` is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuthSection {
    /// The authorization server whose access tokens are accepted (`OAUTH_ISSUER`).
    pub issuer: Option<String>,
    /// Its JWK set URL (`OAUTH_JWKS_URI`); default: its metadata's `jwks_uri`.
    pub jwks_uri: Option<String>,
    /// A JWK set file instead of a URL.
    pub jwks_file: Option<PathBuf>,
    /// This server's canonical URI, the audience tokens must name
    /// (`OAUTH_RESOURCE`); default: `http://<bind><path>`.
    pub resource: Option<String>,
    /// Scopes basic use needs, advertised in the metadata and challenges.
    pub scopes: Vec<String>,
    /// Scopes each tool needs, by tool name.
    pub tool_scopes: BTreeMap<String, Vec<String>>,
    /// Scopes resources need, by URI (a URI ending in `*` is a prefix).
    pub resource_scopes: BTreeMap<String, Vec<String>>,
    /// Scopes each prompt needs, by prompt name.
    pub prompt_scopes: BTreeMap<String, Vec<String>>,
}

impl OAuthSection {
    /// Checks the section after command-line flags changed it.
    pub fn check_flags(&self) -> Result<(), ConfigError> {
        self.validate().map_err(|(key, value, expected)| ConfigError::Invalid {
            key,
            value,
            expected,
            origin: "from the command line".into(),
        })
    }

    /// Checks what the types cannot: (key, value, expected) on the first problem.
    pub(super) fn validate(&self) -> Result<(), (String, String, String)> {
        let bad =
            |key: &str, value: &str, expected: &str| Err((key.to_owned(), format!("{value:?}"), expected.to_owned()));
        let url = |u: &str| {
            (u.starts_with("https://") || u.starts_with("http://"))
                && u.parse::<http::Uri>().is_ok_and(|u| u.host().is_some())
        };
        match &self.issuer {
            Some(issuer) if !url(issuer) => {
                return bad("oauth.issuer", issuer, "an https:// URL of an authorization server");
            }
            Some(_) => {}
            None => {
                let configured = self.jwks_uri.is_some()
                    || self.jwks_file.is_some()
                    || self.resource.is_some()
                    || !self.scopes.is_empty()
                    || !self.tool_scopes.is_empty()
                    || !self.resource_scopes.is_empty()
                    || !self.prompt_scopes.is_empty();
                if configured {
                    return bad(
                        "oauth.issuer",
                        "",
                        "the issuer whose tokens are accepted: the other oauth keys need it",
                    );
                }
            }
        }
        if let Some(uri) = self.jwks_uri.as_deref().filter(|u| !url(u)) {
            return bad("oauth.jwks_uri", uri, "an https:// URL of a JWK set");
        }
        if self.jwks_uri.is_some() && self.jwks_file.is_some() {
            return bad(
                "oauth.jwks_file",
                "both",
                "either oauth.jwks_uri or oauth.jwks_file, not both",
            );
        }
        if let Some(resource) = self.resource.as_deref().filter(|u| !url(u)) {
            return bad(
                "oauth.resource",
                resource,
                "this server's URL, such as https://mcp.example.com/mcp",
            );
        }
        for (section, rules) in [
            ("tool_scopes", &self.tool_scopes),
            ("resource_scopes", &self.resource_scopes),
            ("prompt_scopes", &self.prompt_scopes),
        ] {
            for (name, scopes) in rules {
                if scopes.is_empty() || scopes.iter().any(|s| s.is_empty() || s.contains(' ')) {
                    return bad(
                        &format!("oauth.{section}.{name}"),
                        &scopes.join(" "),
                        "a list of one or more scope names without spaces",
                    );
                }
            }
        }
        Ok(())
    }
}
