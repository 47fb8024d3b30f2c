//! The state of one handshake-era conversation: a stdio connection or an HTTP
//! session. The stateless era has none.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::mpsc;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation};
use toolport_protocol::logging::LoggingLevel;

pub use crate::state::Negotiated;
use crate::state::{SessionSettings, SettingsChange};

type ClientView = (ProtocolVersion, Arc<ClientCapabilities>, Arc<Implementation>);

/// One handshake-era conversation. Small and plain, so it can be stored
/// elsewhere (for example in a shared store) by whoever owns it.
#[derive(Debug, Default)]
pub struct Session {
    /// Tells this conversation from every other one of the process, also
    /// from one that lives later at the same address.
    serial: Serial,
    negotiated: OnceLock<Negotiated>,
    /// The client's side of `negotiated`, shared by every request's context.
    client: OnceLock<ClientView>,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<BTreeSet<String>>,
    /// Told of every change of the settings, once someone keeps a copy of
    /// them (an HTTP session's record in its store). Unbounded: one small
    /// entry per `setLevel`/`subscribe` request, drained as fast as the
    /// store takes them; the setters are synchronous and cannot wait.
    settings_changed: OnceLock<mpsc::UnboundedSender<SettingsChange>>,
    /// Changes passed on and not yet reported stored: while there are any,
    /// the local settings are newer than the store's.
    unstored: AtomicUsize,
    /// This session counted among the followers of what it subscribed to,
    /// until it unsubscribes or ends (the server's subscription demand).
    tickets: Mutex<std::collections::BTreeMap<String, crate::demand::Ticket>>,
}

/// A number no other session of this process has.
#[derive(Debug)]
struct Serial(u64);

impl Default for Serial {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Serial(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl Session {
    /// A number that tells this conversation apart from every other one this
    /// process had or has.
    pub fn serial(&self) -> u64 {
        self.serial.0
    }

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

    /// Every change of the settings from now on, in order: for whoever
    /// writes them to a store. `None` when someone already follows them.
    pub fn settings_changes(&self) -> Option<mpsc::UnboundedReceiver<SettingsChange>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.settings_changed.set(tx).ok()?;
        Some(rx)
    }

    /// Passes a change on; called with the changed field's lock held, so
    /// that changes of one field are passed on in the order they happened.
    fn announce(&self, change: SettingsChange) {
        if let Some(changed) = self.settings_changed.get()
            && changed.send(change).is_ok()
        {
            self.unstored.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The follower stored one change (or gave up on it).
    pub fn settings_change_stored(&self) {
        let _ = self
            .unstored
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    /// Takes the settings a store holds (changed through another replica,
    /// say), unless changes made here are still on their way to the store:
    /// then the local settings are the newer. `true` if they were taken.
    pub fn refresh_settings(&self, stored: &SessionSettings) -> bool {
        // Both locks, as every change holds one of them while it counts
        // itself unstored: no change slips in between check and copy.
        let mut level = self.log_level.lock().unwrap_or_else(|p| p.into_inner());
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        if self.unstored.load(Ordering::SeqCst) > 0 {
            return false;
        }
        if *level != stored.log_level {
            *level = stored.log_level;
        }
        if *subscriptions != stored.subscriptions {
            subscriptions.clone_from(&stored.subscriptions);
        }
        true
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
        let mut current = self.log_level.lock().unwrap_or_else(|p| p.into_inner());
        *current = Some(level);
        self.announce(SettingsChange::LogLevel(level));
    }

    /// Subscribes to a resource's updates.
    pub fn subscribe(&self, uri: &str) {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        subscriptions.insert(uri.to_owned());
        self.announce(SettingsChange::Subscribed(uri.to_owned()));
    }

    /// Unsubscribes.
    pub fn unsubscribe(&self, uri: &str) {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        subscriptions.remove(uri);
        self.announce(SettingsChange::Unsubscribed(uri.to_owned()));
    }

    /// Counts the session among `uri`'s followers until it unsubscribes or
    /// ends (`ticket` none: it no longer follows `uri`).
    pub(crate) fn hold_ticket(&self, uri: &str, ticket: Option<crate::demand::Ticket>) {
        let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        match ticket {
            Some(ticket) => {
                tickets.entry(uri.to_owned()).or_insert(ticket);
            }
            None => {
                tickets.remove(uri);
            }
        }
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

    #[test]
    fn settings_changes_are_passed_on_in_order_to_one_follower() {
        let session = Session::new();
        session.subscribe("file:///before");
        let mut changes = session.settings_changes().expect("the first follower");
        assert!(session.settings_changes().is_none(), "one follower only");
        session.set_log_level(LoggingLevel::Error);
        session.subscribe("file:///a");
        session.unsubscribe("file:///before");
        let mut followed = SessionSettings {
            subscriptions: BTreeSet::from(["file:///before".to_owned()]),
            ..SessionSettings::default()
        };
        let mut seen = Vec::new();
        while let Ok(change) = changes.try_recv() {
            followed.apply(&change);
            seen.push(change);
        }
        assert_eq!(
            seen,
            [
                SettingsChange::LogLevel(LoggingLevel::Error),
                SettingsChange::Subscribed("file:///a".into()),
                SettingsChange::Unsubscribed("file:///before".into()),
            ]
        );
        assert_eq!(followed, session.settings(), "the follower's copy matches");
        let restored = Session::restored_with(negotiated(), followed.clone());
        assert_eq!(restored.settings(), followed);
        assert!(restored.is_subscribed("file:///a"));
    }

    #[test]
    fn stored_settings_are_taken_only_when_no_local_change_is_on_its_way() {
        let session = Session::restored(negotiated());
        let mut changes = session.settings_changes().unwrap();
        let elsewhere = SessionSettings {
            log_level: Some(LoggingLevel::Debug),
            subscriptions: BTreeSet::from(["file:///other".to_owned()]),
        };
        session.subscribe("file:///mine");
        assert!(
            !session.refresh_settings(&elsewhere),
            "the local change is not stored yet"
        );
        assert!(session.is_subscribed("file:///mine"));
        assert!(changes.try_recv().is_ok());
        session.settings_change_stored();
        assert!(session.refresh_settings(&elsewhere));
        assert_eq!(session.settings(), elsewhere, "the store's settings are taken");
        assert!(!session.is_subscribed("file:///mine"));
    }

    fn negotiated() -> Negotiated {
        Negotiated {
            version: ProtocolVersion::ALL[0],
            client_capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("c", "1"),
        }
    }
}
