//! The state of one handshake-era conversation: a stdio connection or an HTTP
//! session. The stateless era has none.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::watch;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation};
use toolport_protocol::logging::LoggingLevel;

use crate::state::SessionSettings;

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
    /// Told of every change of the settings, once someone keeps a copy of
    /// them (an HTTP session's record in its store).
    settings_changed: OnceLock<watch::Sender<SessionSettings>>,
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

    /// A session restored from a store with its settings.
    pub fn restored_with(negotiated: Negotiated, settings: SessionSettings) -> Self {
        let session = Self::restored(negotiated);
        *session.log_level.lock().unwrap_or_else(|p| p.into_inner()) = settings.log_level;
        *session.subscriptions.lock().unwrap_or_else(|p| p.into_inner()) = settings.subscriptions;
        session
    }

    /// The log level and subscriptions, as a store keeps them.
    pub fn settings(&self) -> SessionSettings {
        SessionSettings {
            log_level: self.log_level(),
            subscriptions: self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }

    /// Every change of the settings from now on, each time the whole
    /// settings (the newest only, when several changes come at once): for
    /// whoever writes them to a store.
    pub fn watch_settings(&self) -> watch::Receiver<SessionSettings> {
        self.settings_changed
            .get_or_init(|| watch::channel(self.settings()).0)
            .subscribe()
    }

    fn announce_settings(&self) {
        if let Some(changed) = self.settings_changed.get() {
            // Under both locks, so that concurrent changes are announced in
            // the order they happened.
            let level = self.log_level.lock().unwrap_or_else(|p| p.into_inner());
            let subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            changed.send_replace(SessionSettings {
                log_level: *level,
                subscriptions: subscriptions.clone(),
            });
        }
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
        self.announce_settings();
    }

    /// Subscribes to a resource's updates.
    pub fn subscribe(&self, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(uri.to_owned());
        self.announce_settings();
    }

    /// Unsubscribes.
    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(uri);
        self.announce_settings();
    }

    /// Whether the session follows this resource.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settings_changes_are_announced_whole_and_in_order() {
        let session = Session::new();
        session.subscribe("file:///before");
        let mut changes = session.watch_settings();
        assert_eq!(
            changes.borrow_and_update().subscriptions.len(),
            1,
            "starts from the current settings"
        );
        session.set_log_level(LoggingLevel::Error);
        changes.changed().await.unwrap();
        assert_eq!(changes.borrow_and_update().log_level, Some(LoggingLevel::Error));
        session.subscribe("file:///a");
        session.unsubscribe("file:///before");
        changes.changed().await.unwrap();
        let newest = changes.borrow_and_update().clone();
        assert_eq!(newest, session.settings(), "the newest settings, whole");
        assert_eq!(newest.subscriptions, BTreeSet::from(["file:///a".to_owned()]));
        let restored = Session::restored_with(session.negotiated().cloned().unwrap_or_else(negotiated), newest.clone());
        assert_eq!(restored.settings(), newest);
        assert!(restored.is_subscribed("file:///a"));
    }

    fn negotiated() -> Negotiated {
        Negotiated {
            version: ProtocolVersion::ALL[0],
            client_capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("c", "1"),
        }
    }
}
