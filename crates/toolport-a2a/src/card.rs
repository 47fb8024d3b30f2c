//! The Agent Card (§8): built from the configuration and the agent's
//! skills, signed (JWS over the JCS-canonical card, §8.4) when a key is
//! configured.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Map, Value, json};

use crate::types::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentInterface, AgentProvider, AgentSkill, PROTOCOL_VERSION,
};

/// Where the Agent Card is served.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// The JSON-RPC binding's URL path.
pub const JSONRPC_PATH: &str = "/a2a/jsonrpc";
/// The HTTP+JSON binding's base path.
pub const REST_PATH: &str = "/a2a/rest";

/// What the card says beyond the skills.
#[derive(Debug, Clone)]
pub struct CardConfig {
    /// The agent's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The agent's version.
    pub version: String,
    /// The URL clients reach this server at (`https://agents.example.com`);
    /// the interfaces' URLs are under it. `None`: the scheme-less
    /// `http://` + the `Host` the request came to (which the transport
    /// checked against its allowed hosts).
    pub base_url: Option<String>,
    /// Who runs it.
    pub provider: Option<AgentProvider>,
    /// Its documentation.
    pub documentation_url: Option<String>,
    /// Whether callers authenticate, so there is an extended card.
    pub extended: bool,
    /// Security schemes (OpenAPI-style JSON), by name.
    pub security_schemes: Map<String, Value>,
    /// Which schemes callers must satisfy.
    pub security_requirements: Vec<Value>,
    /// Signs the card when set.
    pub signer: Option<CardSigner>,
}

impl CardConfig {
    /// A card for `name`, with the crate's version, its URLs taken from
    /// each request's `Host`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> CardConfig {
        CardConfig {
            name: name.into(),
            description: description.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            base_url: None,
            provider: None,
            documentation_url: None,
            extended: false,
            security_schemes: Map::new(),
            security_requirements: Vec::new(),
            signer: None,
        }
    }

    /// Interfaces under `base_url` whatever `Host` a request names.
    pub fn base_url(mut self, base_url: impl Into<String>) -> CardConfig {
        self.base_url = Some(base_url.into().trim_end_matches('/').to_owned());
        self
    }

    /// Callers present a bearer token: the card says so, and an extended
    /// card is served to them.
    pub fn bearer(mut self) -> CardConfig {
        self.extended = true;
        self.security_schemes.insert(
            "bearer".into(),
            json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}),
        );
        self.security_requirements
            .push(json!({"schemes": {"bearer": {"list": []}}}));
        self
    }

    /// The card for `skills` as reached at `request_base` (used when no
    /// base URL is configured); `push` says whether push notifications are on.
    pub(crate) fn card(&self, request_base: &str, skills: Vec<AgentSkill>, push: bool) -> AgentCard {
        let base = self.base_url.as_deref().unwrap_or(request_base);
        let interface = |path: &str, binding: &str| AgentInterface {
            url: format!("{base}{path}"),
            protocol_binding: binding.into(),
            tenant: None,
            protocol_version: PROTOCOL_VERSION.into(),
        };
        let mut card = AgentCard {
            name: self.name.clone(),
            description: self.description.clone(),
            supported_interfaces: vec![interface(JSONRPC_PATH, "JSONRPC"), interface(REST_PATH, "HTTP+JSON")],
            provider: self.provider.clone(),
            version: self.version.clone(),
            documentation_url: self.documentation_url.clone(),
            capabilities: AgentCapabilities {
                streaming: Some(true),
                push_notifications: Some(push),
                extensions: Vec::new(),
                extended_agent_card: Some(self.extended),
            },
            security_schemes: self.security_schemes.clone(),
            security_requirements: self.security_requirements.clone(),
            default_input_modes: vec!["text/plain".into(), "application/json".into()],
            default_output_modes: vec!["text/plain".into(), "application/json".into()],
            skills,
            signatures: Vec::new(),
            icon_url: None,
        };
        if let Some(signer) = &self.signer {
            match signer.sign(&card) {
                Ok(signature) => card.signatures.push(signature),
                Err(e) => tracing::error!(error = %e, "the agent card could not be signed; served unsigned"),
            }
        }
        card
    }
}

/// A key that signs the card.
#[derive(Clone)]
pub struct CardSigner {
    key: EncodingKey,
    algorithm: Algorithm,
    key_id: String,
}

impl std::fmt::Debug for CardSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("CardSigner")
            .field("algorithm", &self.algorithm)
            .field("key_id", &self.key_id)
            .finish()
    }
}

impl CardSigner {
    /// A signer from a PEM private key: `ES256` (P-256), `RS256` or `EdDSA`,
    /// by `algorithm`; `key_id` goes into the `kid` header.
    pub fn from_pem(pem: &[u8], algorithm: &str, key_id: impl Into<String>) -> Result<CardSigner, String> {
        let (algorithm, key) = match algorithm {
            "ES256" => (Algorithm::ES256, EncodingKey::from_ec_pem(pem)),
            "RS256" => (Algorithm::RS256, EncodingKey::from_rsa_pem(pem)),
            "EdDSA" => (Algorithm::EdDSA, EncodingKey::from_ed_pem(pem)),
            other => return Err(format!("card signing takes ES256, RS256 or EdDSA, not {other:?}")),
        };
        let key = key.map_err(|e| format!("the card signing key is not a usable PEM private key: {e}"))?;
        Ok(CardSigner {
            key,
            algorithm,
            key_id: key_id.into(),
        })
    }

    /// The JWS signature of `card` (its `signatures` left out).
    pub fn sign(&self, card: &AgentCard) -> Result<AgentCardSignature, String> {
        let header = json!({"alg": algorithm_name(self.algorithm), "typ": "JOSE", "kid": self.key_id});
        let protected = URL_SAFE_NO_PAD.encode(header.to_string());
        let payload = URL_SAFE_NO_PAD.encode(canonical_payload(card)?);
        let input = format!("{protected}.{payload}");
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &self.key, self.algorithm)
            .map_err(|e| format!("signing failed: {e}"))?;
        Ok(AgentCardSignature {
            protected,
            signature,
            header: None,
        })
    }
}

fn algorithm_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::ES256 => "ES256",
        Algorithm::RS256 => "RS256",
        _ => "EdDSA",
    }
}

/// The card as signed: without `signatures`, keys sorted (serde_json's map
/// is ordered), no whitespace: RFC 8785 for the ASCII keys and the strings,
/// booleans and integers a card holds.
pub fn canonical_payload(card: &AgentCard) -> Result<String, String> {
    let mut value = serde_json::to_value(card).map_err(|e| e.to_string())?;
    if let Value::Object(map) = &mut value {
        map.remove("signatures");
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_lists_both_bindings_and_the_skills() {
        let skill = AgentSkill {
            id: "echo".into(),
            name: "echo".into(),
            description: "says it back".into(),
            tags: vec![],
            examples: vec![],
            input_modes: vec![],
            output_modes: vec![],
        };
        let card = CardConfig::new("demo", "a demo").card("http://127.0.0.1:8080", vec![skill.clone()], true);
        let bindings: Vec<_> = card
            .supported_interfaces
            .iter()
            .map(|i| (i.protocol_binding.as_str(), i.url.as_str()))
            .collect();
        assert_eq!(
            bindings,
            [
                ("JSONRPC", "http://127.0.0.1:8080/a2a/jsonrpc"),
                ("HTTP+JSON", "http://127.0.0.1:8080/a2a/rest")
            ]
        );
        assert_eq!(card.skills[0].id, "echo");
        let fixed = CardConfig::new("demo", "a demo").base_url("https://agents.example.com/");
        let card = fixed.card("http://127.0.0.1:8080", vec![skill], true);
        assert_eq!(
            card.supported_interfaces[0].url,
            "https://agents.example.com/a2a/jsonrpc"
        );
        assert_eq!(card.capabilities.push_notifications, Some(true));
        let payload = canonical_payload(&card).unwrap();
        assert!(payload.starts_with("{\"capabilities\":"), "{payload}");
        assert!(!payload.contains("signatures"));
    }

    #[test]
    fn a_bad_key_or_algorithm_is_refused_with_the_reason() {
        let err = CardSigner::from_pem(b"not a key", "ES256", "k1").unwrap_err();
        assert!(err.contains("PEM"), "{err}");
        let err = CardSigner::from_pem(b"", "HS256", "k1").unwrap_err();
        assert!(err.contains("ES256, RS256 or EdDSA"), "{err}");
    }
}
