//! Handshake-era sessions by id.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use toolport_protocol::logging::LoggingLevel;

use super::StateError;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation};

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

/// What a session's requests change after the handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionSettings {
    /// The level set by `logging/setLevel`.
    pub log_level: Option<LoggingLevel>,
    /// The resources the session subscribed to.
    pub subscriptions: BTreeSet<String>,
}

/// One change of a session's settings, as a store applies it: a shared
/// store applies each atomically (set a field, add to or remove from a set),
/// so changes made through two replicas at once are both kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SettingsChange {
    /// `logging/setLevel`.
    LogLevel(LoggingLevel),
    /// `resources/subscribe`.
    Subscribed(String),
    /// `resources/unsubscribe`.
    Unsubscribed(String),
}

impl SessionSettings {
    /// Applies a change.
    pub fn apply(&mut self, change: &SettingsChange) {
        match change {
            SettingsChange::LogLevel(level) => self.log_level = Some(*level),
            SettingsChange::Subscribed(uri) => {
                self.subscriptions.insert(uri.clone());
            }
            SettingsChange::Unsubscribed(uri) => {
                self.subscriptions.remove(uri);
            }
        }
    }
}

/// What a session is, apart from the live connections it has on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// What `initialize` settled.
    pub negotiated: Negotiated,
    /// The principal that created the session, if authenticated.
    pub principal: Option<String>,
    /// Log level and subscriptions.
    #[serde(default)]
    pub settings: SessionSettings,
}

impl SessionRecord {
    /// A new session's record: no log level, no subscriptions.
    pub fn new(negotiated: Negotiated, principal: Option<String>) -> Self {
        SessionRecord {
            negotiated,
            principal,
            settings: SessionSettings::default(),
        }
    }
}

/// Sessions by id, each with when it was last used.
#[async_trait]
pub trait SessionStore: Send + Sync + std::fmt::Debug + 'static {
    /// Stores a new session (replacing one with the same id).
    async fn create(&self, id: &str, record: SessionRecord) -> Result<(), StateError>;
    /// The session, if it exists; marks it used.
    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StateError>;
    /// Applies a change to a session's settings, atomically; `false` if
    /// there is no such session.
    async fn apply(&self, id: &str, change: &SettingsChange) -> Result<bool, StateError>;
    /// Ends a session; `false` if there was none.
    async fn remove(&self, id: &str) -> Result<bool, StateError>;
    /// Removes and returns the sessions unused for longer than `idle`.
    async fn reap(&self, idle: Duration) -> Result<Vec<String>, StateError>;
    /// How many sessions exist.
    async fn count(&self) -> Result<usize, StateError>;
}

/// Sessions in this process's memory. Idle time is measured on tokio's
/// clock, so tests with paused time control it.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    sessions: Mutex<HashMap<String, (SessionRecord, Instant)>>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (SessionRecord, Instant)>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl SessionStore for MemorySessionStore {
    async fn create(&self, id: &str, record: SessionRecord) -> Result<(), StateError> {
        self.lock().insert(id.to_owned(), (record, Instant::now()));
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StateError> {
        let mut sessions = self.lock();
        Ok(sessions.get_mut(id).map(|(record, seen)| {
            *seen = Instant::now();
            record.clone()
        }))
    }

    async fn apply(&self, id: &str, change: &SettingsChange) -> Result<bool, StateError> {
        Ok(self
            .lock()
            .get_mut(id)
            .map(|(record, _)| record.settings.apply(change))
            .is_some())
    }

    async fn remove(&self, id: &str) -> Result<bool, StateError> {
        Ok(self.lock().remove(id).is_some())
    }

    async fn reap(&self, idle: Duration) -> Result<Vec<String>, StateError> {
        let mut sessions = self.lock();
        let now = Instant::now();
        let expired: Vec<String> = sessions
            .iter()
            .filter(|(_, (_, seen))| now.duration_since(*seen) > idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            sessions.remove(id);
        }
        Ok(expired)
    }

    async fn count(&self) -> Result<usize, StateError> {
        Ok(self.lock().len())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_record_stored_without_settings_still_reads() {
        let stored = json!({
            "negotiated": {
                "version": "2025-06-18",
                "client_capabilities": {},
                "client_info": {"name": "c", "version": "1"}
            },
            "principal": "alice"
        });
        let record: SessionRecord = serde_json::from_value(stored).unwrap();
        assert_eq!(record.principal.as_deref(), Some("alice"));
        assert_eq!(record.settings, SessionSettings::default());
        let mut record = record;
        record.settings.log_level = Some(LoggingLevel::Info);
        record.settings.subscriptions.insert("mem://a".into());
        let round = serde_json::to_value(&record).unwrap();
        assert_eq!(
            round["settings"],
            json!({"log_level": "info", "subscriptions": ["mem://a"]})
        );
        assert_eq!(serde_json::from_value::<SessionRecord>(round).unwrap(), record);
    }
}
