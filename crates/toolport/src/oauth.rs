//! `toolport serve --oauth-issuer ...`: the HTTP endpoint as an OAuth 2.1
//! resource server (toolport-auth), configured from flags or environment.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use toolport_auth::client::server_metadata;
use toolport_auth::http::HyperClient;
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};

/// Flags that protect the endpoint with OAuth 2.1.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct OAuthArgs {
    /// Accept only access tokens issued by this authorization server.
    #[arg(long, env = "OAUTH_ISSUER", value_name = "URL")]
    oauth_issuer: Option<String>,
    /// The issuer's JWK set URL (default: its metadata's jwks_uri).
    #[arg(long, env = "OAUTH_JWKS_URI", value_name = "URL", requires = "oauth_issuer")]
    oauth_jwks_uri: Option<String>,
    /// A JWK set file instead of a URL.
    #[arg(
        long,
        value_name = "PATH",
        requires = "oauth_issuer",
        conflicts_with = "oauth_jwks_uri"
    )]
    oauth_jwks_file: Option<PathBuf>,
    /// This server's canonical URI, the audience its tokens must name
    /// (default: http://<bind><path>).
    #[arg(long, env = "OAUTH_RESOURCE", value_name = "URL", requires = "oauth_issuer")]
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
    /// The resource server these flags describe; `None` without `--oauth-issuer`.
    pub(crate) async fn resource_server(&self, default_resource: String) -> Result<Option<Arc<ResourceServer>>> {
        let Some(issuer) = &self.oauth_issuer else {
            return Ok(None);
        };
        let jwks = match (&self.oauth_jwks_file, &self.oauth_jwks_uri) {
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
                    .with_context(|| format!("discovering the metadata of {issuer} (or give --oauth-jwks-uri)"))?;
                JwksSource::Url(
                    metadata
                        .jwks_uri
                        .with_context(|| format!("{issuer} publishes no jwks_uri"))?,
                )
            }
        };
        let resource = self.oauth_resource.clone().unwrap_or(default_resource);
        let mut config = ResourceServerConfig::new(resource, issuer.clone(), jwks);
        config.scopes_supported = self.oauth_scopes.clone();
        for text in &self.tool_scopes {
            let (name, scopes) = rule(text).context("--oauth-tool-scope")?;
            config.tool_scopes.insert(name, scopes);
        }
        for text in &self.resource_scopes {
            let (uri, scopes) = rule(text).context("--oauth-resource-scope")?;
            config.resource_scopes.insert(uri, scopes);
        }
        for text in &self.prompt_scopes {
            let (name, scopes) = rule(text).context("--oauth-prompt-scope")?;
            config.prompt_scopes.insert(name, scopes);
        }
        Ok(Some(Arc::new(
            ResourceServer::new(config).context("the OAuth configuration")?,
        )))
    }
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
