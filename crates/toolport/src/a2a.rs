//! The `[a2a]` configuration: A2A 1.0 served beside MCP, with every tool a
//! skill (docs/a2a.md).
//!
//! ```toml
//! [a2a]
//! enabled = true                      # or `toolport serve --a2a`
//! name = "Toolport"
//! # public_url = "https://agents.example.com"   # default: the Host a request came to
//! push = true
//! # push_allow_private = true         # webhooks on loopback/private addresses (off: SSRF)
//! # push_allow_hosts = ["hooks.internal"]
//! # signing_key_file = "/etc/toolport/card-key.pem"   # signs the Agent Card (JWS)
//! # signing_algorithm = "ES256"
//! # signing_key_id = "card-1"
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use toolport_a2a::{A2aMount, A2aService, CardConfig, CardSigner, PushPolicy, TaskBook, ToolSkills};
use toolport_server::Server;
use toolport_tasks::TaskEngine;

/// A2A beside MCP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct A2aSection {
    /// Serve the Agent Card and both A2A bindings (`--a2a`).
    pub enabled: bool,
    /// The agent's name on the card (default: the server's title).
    pub name: Option<String>,
    /// What the agent does, on the card.
    pub description: Option<String>,
    /// The URL clients reach the server at; the card's interfaces are under
    /// it. Default: `http://` + the `Host` of each card request.
    pub public_url: Option<String>,
    /// Offer push notifications.
    pub push: bool,
    /// Let webhooks target loopback, private and link-local addresses.
    pub push_allow_private: bool,
    /// Host names webhooks may target whatever they resolve to.
    pub push_allow_hosts: Vec<String>,
    /// How long one webhook delivery may take.
    pub push_timeout_seconds: u64,
    /// How many times a delivery is tried.
    pub push_attempts: u32,
    /// A PEM private key that signs the Agent Card.
    pub signing_key_file: Option<PathBuf>,
    /// `ES256`, `RS256` or `EdDSA`.
    pub signing_algorithm: String,
    /// The `kid` of the card's signature.
    pub signing_key_id: String,
}

impl Default for A2aSection {
    fn default() -> Self {
        A2aSection {
            enabled: false,
            name: None,
            description: None,
            public_url: None,
            push: true,
            push_allow_private: false,
            push_allow_hosts: Vec::new(),
            push_timeout_seconds: 10,
            push_attempts: 4,
            signing_key_file: None,
            signing_algorithm: "ES256".into(),
            signing_key_id: "card".into(),
        }
    }
}

impl A2aSection {
    /// Checks what the types cannot: `(key, value, expected)` of the first
    /// bad setting.
    pub fn validate(&self) -> Result<(), (String, String, String)> {
        let bad = |key: &str, value: String, expected: &str| Err((format!("a2a.{key}"), value, expected.to_owned()));
        if let Some(url) = &self.public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return bad("public_url", url.clone(), "an http:// or https:// URL");
        }
        if self.push_timeout_seconds == 0 {
            return bad("push_timeout_seconds", "0".into(), "at least 1 second");
        }
        if self.push_attempts == 0 {
            return bad("push_attempts", "0".into(), "at least 1");
        }
        if !matches!(self.signing_algorithm.as_str(), "ES256" | "RS256" | "EdDSA") {
            return bad(
                "signing_algorithm",
                self.signing_algorithm.clone(),
                "ES256, RS256 or EdDSA",
            );
        }
        Ok(())
    }

    /// The A2A paths for `server`'s tools, with tasks in `engine`;
    /// `authenticated` when the endpoint checks tokens (an extended card).
    pub fn mount(&self, server: &Server, engine: TaskEngine, authenticated: bool) -> Result<A2aMount> {
        let info = server.info();
        let name = self
            .name
            .clone()
            .or_else(|| info.title.clone())
            .unwrap_or_else(|| info.name.clone());
        let description = self
            .description
            .clone()
            .unwrap_or_else(|| format!("{name}: every MCP tool of this server as an A2A skill."));
        let mut card = CardConfig::new(name, description);
        if let Some(url) = &self.public_url {
            card = card.base_url(url);
        }
        if authenticated {
            card = card.bearer();
        }
        if let Some(path) = &self.signing_key_file {
            let pem =
                std::fs::read(path).with_context(|| format!("a2a.signing_key_file: cannot read {}", path.display()))?;
            let signer = CardSigner::from_pem(&pem, &self.signing_algorithm, &self.signing_key_id)
                .map_err(anyhow::Error::msg)
                .context("a2a.signing_key_file")?;
            card.signer = Some(signer);
        }
        let push = self.push.then(|| PushPolicy {
            allow_private: self.push_allow_private,
            allow_hosts: self.push_allow_hosts.clone(),
            timeout: Duration::from_secs(self.push_timeout_seconds),
            attempts: self.push_attempts,
            ..PushPolicy::default()
        });
        let agent = Arc::new(ToolSkills::new(server.clone()));
        let service = A2aService::new(agent, TaskBook::new(engine), card, push);
        Ok(A2aMount::new(service))
    }
}
