//! What the resource server is told: who it is, whom it trusts, and which
//! scopes each tool, resource and prompt needs.

use std::collections::BTreeMap;
use std::time::Duration;

use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::JwkSet;

/// Where the issuer's signing keys come from.
#[derive(Debug, Clone)]
pub enum JwksSource {
    /// Fetched from the issuer's `jwks_uri`, cached, and refetched when a
    /// token names an unknown key (at a bounded rate) or the cache is old.
    Url(String),
    /// A fixed set (tests, air-gapped deployments).
    Static(JwkSet),
}

/// RFC 7662 token introspection, for tokens that are not JWTs.
#[derive(Debug, Clone)]
pub struct IntrospectionConfig {
    /// The introspection endpoint.
    pub endpoint: String,
    /// This resource server's client id at the authorization server.
    pub client_id: String,
    /// Its secret (sent with HTTP Basic authentication).
    pub client_secret: String,
}

/// The asymmetric algorithms accepted by default. HMAC is never accepted: a
/// resource server that verified HS256 with a public key as the secret could
/// be fooled by anyone who has that key (algorithm confusion), and `none` is
/// not an algorithm at all.
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Settings of the OAuth 2.1 resource server.
#[derive(Debug, Clone)]
pub struct ResourceServerConfig {
    /// The canonical URI of this MCP server (RFC 8707), for example
    /// `https://mcp.example.com/mcp`: tokens must name it in `aud`.
    pub resource: String,
    /// The authorization servers listed in the protected-resource metadata.
    pub authorization_servers: Vec<String>,
    /// The issuer whose tokens are accepted (`iss`).
    pub issuer: String,
    /// The issuer's signing keys.
    pub jwks: JwksSource,
    /// Accepted signature algorithms; HMAC algorithms are refused even if
    /// listed here.
    pub algorithms: Vec<Algorithm>,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
    /// Scopes advertised in the metadata and in the 401 challenge: what
    /// basic use needs (never `offline_access`).
    pub scopes_supported: Vec<String>,
    /// Scopes every request needs, whatever it does.
    pub required_scopes: Vec<String>,
    /// Scopes a tool needs, by tool name or prefix ending in `*` (the
    /// longest one wins; a gateway's upstream: `files__*`).
    pub tool_scopes: BTreeMap<String, Vec<String>>,
    /// Scopes a resource needs, by URI, URI template, or prefix ending in `*`.
    pub resource_scopes: BTreeMap<String, Vec<String>>,
    /// Scopes a prompt needs, by prompt name or prefix ending in `*`.
    pub prompt_scopes: BTreeMap<String, Vec<String>>,
    /// Scopes a tool, resource or prompt not named above needs. Empty: any
    /// authenticated caller may use it.
    pub default_scopes: Vec<String>,
    /// Broader scopes and the narrower ones each implies (`mcp:admin` →
    /// `mcp:write`, `mcp:read`); followed transitively.
    pub scope_hierarchy: BTreeMap<String, Vec<String>>,
    /// Introspection for opaque tokens; without it only JWTs are accepted.
    pub introspection: Option<IntrospectionConfig>,
    /// Least time between two JWKS fetches caused by unknown key ids, so a
    /// flood of forged `kid`s cannot make this server hammer the issuer.
    pub jwks_refetch_interval: Duration,
    /// How long fetched keys are used before they are fetched again.
    pub jwks_max_age: Duration,
    /// How long a verified JWT is remembered (never past its `exp`, and
    /// forgotten when the keys are fetched again); zero turns it off.
    pub verified_token_ttl: Duration,
    /// How long an introspection answer is remembered (never past the
    /// token's `exp`); revocations take up to this long to bite. Zero turns
    /// it off.
    pub introspection_cache_ttl: Duration,
    /// Require the RFC 9068 `typ: at+jwt` header, so an ID token can never
    /// pass as an access token.
    pub require_at_jwt: bool,
    /// A human-readable name for the metadata document.
    pub resource_name: Option<String>,
    /// Keep each request's access token in its [`Principal`]'s
    /// `credential`, for a gateway that passes it on (`forward_token`).
    /// Off by default: handlers never see tokens.
    ///
    /// [`Principal`]: toolport_server::Principal
    pub keep_token: bool,
}

impl ResourceServerConfig {
    /// A server at `resource` trusting `issuer`, whose keys are at `jwks_uri`.
    pub fn new(resource: impl Into<String>, issuer: impl Into<String>, jwks: JwksSource) -> Self {
        let issuer = issuer.into();
        ResourceServerConfig {
            resource: resource.into(),
            authorization_servers: vec![issuer.clone()],
            issuer,
            jwks,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(30),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            tool_scopes: BTreeMap::new(),
            resource_scopes: BTreeMap::new(),
            prompt_scopes: BTreeMap::new(),
            default_scopes: Vec::new(),
            scope_hierarchy: BTreeMap::new(),
            introspection: None,
            jwks_refetch_interval: Duration::from_secs(10),
            jwks_max_age: Duration::from_secs(600),
            verified_token_ttl: Duration::from_secs(300),
            introspection_cache_ttl: Duration::from_secs(30),
            require_at_jwt: false,
            resource_name: None,
            keep_token: false,
        }
    }

    /// Requires `scopes` for the tool `name`.
    pub fn tool_scopes(mut self, name: &str, scopes: &[&str]) -> Self {
        self.tool_scopes.insert(name.to_owned(), owned(scopes));
        self
    }

    /// Requires `scopes` for the resource `uri` (or template, or prefix `...*`).
    pub fn resource_scopes(mut self, uri: &str, scopes: &[&str]) -> Self {
        self.resource_scopes.insert(uri.to_owned(), owned(scopes));
        self
    }

    /// Requires `scopes` for the prompt `name`.
    pub fn prompt_scopes(mut self, name: &str, scopes: &[&str]) -> Self {
        self.prompt_scopes.insert(name.to_owned(), owned(scopes));
        self
    }
}

pub(crate) fn owned(scopes: &[&str]) -> Vec<String> {
    scopes.iter().map(|s| (*s).to_owned()).collect()
}
