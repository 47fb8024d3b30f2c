//! The state of one handshake-era conversation: a stdio connection or an HTTP
//! session. The stateless era has none.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation};
use toolport_protocol::logging::LoggingLevel;

type ClientView = (ProtocolVersion, Arc<ClientCapabilities>, Arc<Implementation>);

/// What `initialize` settled.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Negotiated {
    /// The version both sides speak.
    pub version: ProtocolVersion,
    /// The client's capabilities.
    pub client_capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
}

/// One handshake-era conversation. Small and plain, so it can be stored
/// elsewhere (for example in a shared store) by whoever owns it.
#[derive(Debug, Default)]
pub struct Session {
    negotiated: OnceLock<Negotiated>,
    /// The client's side of `negotiated`, shared by every request's context.
    client: OnceLock<ClientView>,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<BTreeSet<String>>,
}

impl Session {
    /// A session before `initialize`.
    pub fn new() -> Self {
        Self::default()
    }

    /// A session whose handshake already happened (restored from a store, or
    /// an HTTP request served without sessions).
    pub fn restored(negotiated: Negotiated) -> Self {
        let session = Self::default();
        let _ = session.negotiated.set(negotiated);
        session
    }

    /// What `initialize` settled, once it has happened.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.get()
    }

    /// Records the handshake; `false` if one already happened.
    pub fn set_negotiated(&self, negotiated: Negotiated) -> bool {
        self.negotiated.set(negotiated).is_ok()
    }

    /// The negotiated version and the client's capabilities and identity,
    /// shared rather than copied into every request.
    pub(crate) fn client(&self) -> Option<ClientView> {
        let negotiated = self.negotiated.get()?;
        Some(
            self.client
                .get_or_init(|| {
                    let n = negotiated;
                    (
                        n.version,
                        Arc::new(n.client_capabilities.clone()),
                        Arc::new(n.client_info.clone()),
                    )
                })
                .clone(),
        )
    }

    /// The level set by `logging/setLevel`.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the level.
    pub fn set_log_level(&self, level: LoggingLevel) {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level);
    }

    /// Subscribes to a resource's updates.
    pub fn subscribe(&self, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(uri.to_owned());
    }

    /// Unsubscribes.
    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(uri);
    }

    /// Whether the session follows this resource.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(uri)
    }
}
