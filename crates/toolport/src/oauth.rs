//! `toolport serve --oauth-issuer ...`: the HTTP endpoint as an OAuth 2.1
//! resource server (toolport-auth), configured by the `[oauth]` section of
//! the configuration (and its environment variables), which these flags
//! override.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use toolport::config::OAuthSection;
use toolport_auth::client::server_metadata;
use toolport_auth::http::HyperClient;
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};

/// Flags that protect the endpoint with OAuth 2.1 (over `[oauth]`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct OAuthArgs {
    /// Accept only access tokens issued by this authorization server (oauth.issuer).
    #[arg(long, value_name = "URL")]
    oauth_issuer: Option<String>,
    /// The issuer's JWK set URL (default: its metadata's jwks_uri).
    #[arg(long, value_name = "URL")]
    oauth_jwks_uri: Option<String>,
    /// A JWK set file instead of a URL.
    #[arg(long, value_name = "PATH", conflicts_with = "oauth_jwks_uri")]
    oauth_jwks_file: Option<PathBuf>,
    /// This server's canonical URI, the audience its tokens must name
    /// (default: http://<bind><path>).
    #[arg(long, value_name = "URL")]
    oauth_resource: Option<String>,
    /// Scopes basic use needs, advertised in the metadata and challenges.
    #[arg(long = "oauth-scope", value_name = "SCOPE", value_delimiter = ',')]
    oauth_scopes: Vec<String>,
    /// Scopes a tool needs: NAME=SCOPE[,SCOPE...] (repeatable).
    #[arg(long = "oauth-tool-scope", value_name = "NAME=SCOPES")]
    tool_scopes: Vec<String>,
    /// Scopes a resource needs: URI=SCOPE[,SCOPE...]; a URI ending in * is a prefix (repeatable).
    #[arg(long = "oauth-resource-scope", value_name = "URI=SCOPES")]
    resource_scopes: Vec<String>,
    /// Scopes a prompt needs: NAME=SCOPE[,SCOPE...] (repeatable).
    #[arg(long = "oauth-prompt-scope", value_name = "NAME=SCOPES")]
    prompt_scopes: Vec<String>,
}

fn rule(text: &str) -> Result<(String, Vec<String>)> {
    let Some((name, scopes)) = text.rsplit_once('=') else {
        bail!("{text:?}: expected NAME=SCOPE[,SCOPE...]");
    };
    let scopes: Vec<String> = scopes.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if name.is_empty() || scopes.is_empty() {
        bail!("{text:?}: expected NAME=SCOPE[,SCOPE...]");
    }
    Ok((name.to_owned(), scopes))
}

impl OAuthArgs {
    /// Lays the flags over the configured section: a flag replaces a key, a
    /// scope rule adds to (or replaces) the configured rule for its name.
    pub(crate) fn apply(&self, section: &mut OAuthSection) -> Result<()> {
        let replace = |flag: &Option<String>, key: &mut Option<String>| {
            if flag.is_some() {
                key.clone_from(flag);
            }
        };
        replace(&self.oauth_issuer, &mut section.issuer);
        replace(&self.oauth_resource, &mut section.resource);
        if self.oauth_jwks_uri.is_some() {
            section.jwks_uri.clone_from(&self.oauth_jwks_uri);
            section.jwks_file = None;
        }
        if self.oauth_jwks_file.is_some() {
            section.jwks_file.clone_from(&self.oauth_jwks_file);
            section.jwks_uri = None;
        }
        if !self.oauth_scopes.is_empty() {
            section.scopes.clone_from(&self.oauth_scopes);
        }
        for (flag, rules, map) in [
            ("--oauth-tool-scope", &self.tool_scopes, &mut section.tool_scopes),
            (
                "--oauth-resource-scope",
                &self.resource_scopes,
                &mut section.resource_scopes,
            ),
            ("--oauth-prompt-scope", &self.prompt_scopes, &mut section.prompt_scopes),
        ] {
            for text in rules {
                let (name, scopes) = rule(text).context(flag)?;
                map.insert(name, scopes);
            }
        }
        Ok(())
    }
}

/// The resource server `section` describes; `None` without an issuer.
pub(crate) async fn resource_server(
    section: &OAuthSection,
    default_resource: String,
) -> Result<Option<Arc<ResourceServer>>> {
    resource_server_keeping(section, default_resource, false).await
}

/// [`resource_server`], keeping each request's token in its principal when
/// `keep_token` (a gateway with an upstream that takes the caller's token).
pub(crate) async fn resource_server_keeping(
    section: &OAuthSection,
    default_resource: String,
    keep_token: bool,
) -> Result<Option<Arc<ResourceServer>>> {
    let Some(issuer) = &section.issuer else {
        return Ok(None);
    };
    let jwks = match (&section.jwks_file, &section.jwks_uri) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            JwksSource::Static(
                serde_json::from_str(&text).with_context(|| format!("{} is not a JWK set", path.display()))?,
            )
        }
        (None, Some(url)) => JwksSource::Url(url.clone()),
        (None, None) => {
            let metadata = server_metadata(&HyperClient::default(), issuer)
                .await
                .with_context(|| format!("discovering the metadata of {issuer} (or set oauth.jwks_uri)"))?;
            JwksSource::Url(
                metadata
                    .jwks_uri
                    .with_context(|| format!("{issuer} publishes no jwks_uri"))?,
            )
        }
    };
    let resource = section.resource.clone().unwrap_or(default_resource);
    let mut config = ResourceServerConfig::new(resource, issuer.clone(), jwks);
    config.scopes_supported.clone_from(&section.scopes);
    config.tool_scopes.extend(section.tool_scopes.clone());
    config.resource_scopes.extend(section.resource_scopes.clone());
    config.prompt_scopes.extend(section.prompt_scopes.clone());
    config.keep_token = keep_token;
    Ok(Some(Arc::new(
        ResourceServer::new(config).context("the OAuth configuration")?,
    )))
}

#[cfg(test)]
mod tests {
    use super::rule;

    #[test]
    fn scope_rules_are_read_strictly() {
        assert_eq!(
            rule("delete=files:write,admin").unwrap(),
            ("delete".into(), vec!["files:write".into(), "admin".into()])
        );
        assert_eq!(rule("file:///a*=x").unwrap().0, "file:///a*");
        for bad in ["delete", "=x", "delete=", "delete=,"] {
            assert!(rule(bad).is_err(), "{bad}");
        }
    }
}
