//! What every request handler shares: the server, the settings, the stores,
//! and the sessions live on this machine.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolport_server::state::{Relay, SettingsChange};
use toolport_server::{Server, Session};

use crate::auth::Authenticator;
use crate::config::HttpConfig;
use crate::live::{LiveSession, forward_changes};
use crate::ready::Readiness;
use crate::store::{EventLog, SessionRecord, SessionStore, StateError};

/// Shared state of one HTTP endpoint.
pub(crate) struct AppState {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Sessions,
    pub(crate) events: Arc<dyn EventLog>,
    live: Mutex<HashMap<String, Arc<LiveSession>>>,
    /// The (unused) session of 2026-07-28 requests, shared so that no
    /// request allocates one.
    pub(crate) no_session: Arc<Session>,
    /// Fires when the server is told to stop, before it stops accepting
    /// (the drain): `/ready` fails from then on.
    pub(crate) shutdown: CancellationToken,
    /// What `/ready` checks besides the shutdown.
    pub(crate) readiness: Readiness,
    /// Renders the Prometheus metrics, when a recorder is installed.
    pub(crate) metrics: OnceLock<MetricsRender>,
    /// Authentication and authorization, when the endpoint is protected.
    pub(crate) auth: Option<Arc<dyn Authenticator>>,
    /// The other replicas sharing the stores, if any (see [`crate::replicas`]).
    pub(crate) relay: Option<Arc<dyn Relay>>,
    /// Handshake-era calls running without a session, for their cancellations.
    pub(crate) sessionless: Arc<crate::sessionless::SessionlessCalls>,
}

/// The session store, with how many sessions it held when last asked: the
/// session limit is checked against that count, without a store round trip
/// per `initialize`.
pub(crate) struct Sessions {
    pub(crate) store: Arc<dyn SessionStore>,
    count: AtomicUsize,
}

impl Sessions {
    /// How many sessions the store held when last counted (on every session
    /// created, ended or reaped here).
    pub(crate) fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    async fn recount(&self) {
        match self.store.count().await {
            Ok(count) => {
                self.count.store(count, Ordering::Relaxed);
                metrics::gauge!("toolport_sessions").set(count as f64);
            }
            Err(e) => tracing::warn!(error = %e, "sessions not counted"),
        }
    }
}

/// Renders metrics as Prometheus text.
pub type MetricsRender = Arc<dyn Fn() -> String + Send + Sync>;

impl AppState {
    pub(crate) fn new(
        server: Server,
        config: HttpConfig,
        sessions: Arc<dyn SessionStore>,
        events: Arc<dyn EventLog>,
    ) -> Arc<Self> {
        Arc::new(AppState {
            readiness: Readiness::new(config.readiness_timeout),
            server,
            config,
            sessions: Sessions {
                store: sessions,
                count: AtomicUsize::new(0),
            },
            events,
            live: Mutex::default(),
            no_session: Arc::default(),
            metrics: OnceLock::new(),
            shutdown: CancellationToken::new(),
            auth: None,
            relay: None,
            sessionless: Arc::default(),
        })
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveSession>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The sessions live on this machine now.
    pub(crate) fn live_sessions(&self) -> Vec<Arc<LiveSession>> {
        self.live().values().cloned().collect()
    }

    /// Registers a session whose `initialize` succeeded; returns its id.
    pub(crate) async fn open_session(
        &self,
        session: Arc<Session>,
        principal: Option<String>,
    ) -> Result<Option<String>, StateError> {
        let Some(negotiated) = session.negotiated().cloned() else {
            return Ok(None);
        };
        let id = new_session_id();
        let mut record = SessionRecord::new(negotiated, principal);
        record.settings = session.settings();
        self.sessions.store.create(&id, record).await?;
        self.go_live(&id, session);
        self.sessions.recount().await;
        Ok(Some(id))
    }

    /// The session with this id, if it exists and belongs to `owner` (the
    /// principal that created it, when authenticated): from this machine, or
    /// rebuilt from the store when another replica created it.
    pub(crate) async fn find_session(
        &self,
        id: &str,
        owner: Option<&str>,
    ) -> Result<Option<Arc<LiveSession>>, StateError> {
        let Some(record) = self.sessions.store.get(id).await? else {
            return Ok(None);
        };
        if record.principal.as_deref() != owner {
            return Ok(None);
        }
        let live = self.live().get(id).cloned();
        if let Some(live) = live {
            live.touch();
            // Another replica may have changed the settings meanwhile.
            live.session.refresh_settings(&record.settings);
            return Ok(Some(live));
        }
        let session = Arc::new(Session::restored_with(record.negotiated, record.settings));
        let live = self.go_live(id, session);
        // Answers to what the request asks may come back through another replica.
        crate::replicas::subscribed(live.subscribed.subscribe()).await;
        Ok(Some(live))
    }

    /// Ends a session; `false` if it did not exist or belongs to another
    /// principal than `owner`.
    pub(crate) async fn close_session(&self, id: &str, owner: Option<&str>) -> Result<bool, StateError> {
        let record = self.sessions.store.get(id).await?;
        if record.is_none_or(|record| record.principal.as_deref() != owner) {
            return Ok(false);
        }
        let existed = self.sessions.store.remove(id).await?;
        let live = self.live().remove(id);
        if let Some(live) = live {
            live.close().await;
        }
        self.sessions.recount().await;
        Ok(existed)
    }

    /// The session on this machine (made live once, however many requests
    /// race to do it), with its notifications forwarded and its settings
    /// written to the store as they change.
    fn go_live(&self, id: &str, session: Arc<Session>) -> Arc<LiveSession> {
        let mut live = self.live();
        if let Some(existing) = live.get(id) {
            return existing.clone();
        }
        let changes = session.settings_changes();
        let session = LiveSession::new(
            id.to_owned(),
            session,
            self.events.clone(),
            self.config.resume_grace,
            self.relay.clone(),
        );
        tokio::spawn(forward_changes(self.server.clone(), session.clone()));
        if let Some(relay) = &self.relay {
            tokio::spawn(crate::replicas::receive_relayed(relay.clone(), session.clone()));
        }
        if let Some(changes) = changes {
            tokio::spawn(persist_settings(self.sessions.store.clone(), session.clone(), changes));
        }
        live.insert(id.to_owned(), session.clone());
        session
    }

    /// Ends the sessions idle for longer than the configured timeout, and
    /// counts the sessions anew (other replicas of a shared store create and
    /// end sessions too). A session no request used here for as long is let
    /// go of here: another replica serves it, or ended it, or reaped it.
    pub(crate) async fn reap(&self) -> Result<usize, StateError> {
        let idle = self.config.session_idle_timeout;
        let expired = self.sessions.store.reap(idle).await?;
        for id in &expired {
            let live = self.live().remove(id);
            if let Some(live) = live {
                live.close().await;
            }
        }
        self.live().retain(|_, live| {
            let keep = live.idle_for() <= idle;
            if !keep {
                live.leave();
            }
            keep
        });
        self.sessions.recount().await;
        Ok(expired.len())
    }

    /// Ends the standalone GET streams of the sessions on this machine, so
    /// their clients reopen them elsewhere while the requests still running
    /// here finish (the drain). With other replicas sharing the sessions,
    /// the answer streams of those requests end too: their clients resume
    /// on a replica that stays, which follows what is recorded here.
    pub(crate) fn end_standalone_streams(&self) {
        for live in self.live().values() {
            if self.relay.is_some() {
                live.end_streams();
            } else {
                live.end_get_stream();
            }
        }
    }

    /// Resolves once no session has a request running on this machine
    /// (looked at every 20 ms; the caller bounds the wait).
    pub(crate) async fn requests_finished(&self) {
        loop {
            let running = self.live().values().any(|live| !live.exchange.in_flight.is_empty());
            if !running {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Ends every session's streams and requests on this machine (shutdown).
    /// Their records and events stay: the sessions are not over, and a
    /// replica sharing the stores (or this one, restarted) serves them on.
    pub(crate) fn close_all(&self) {
        for (_, live) in self.live().drain() {
            live.leave();
        }
    }
}

/// Writes a session's settings changes (log level, subscriptions) to the
/// store as they happen, in order, so another replica serving the session
/// sees them. Each change is applied atomically by the store, so changes made
/// through other replicas meanwhile are kept.
async fn persist_settings(
    store: Arc<dyn SessionStore>,
    live: Arc<LiveSession>,
    mut changes: mpsc::UnboundedReceiver<SettingsChange>,
) {
    loop {
        let change = tokio::select! {
            change = changes.recv() => match change {
                Some(change) => change,
                None => return,
            },
            _ = live.closed.cancelled() => return,
        };
        // The client was told the change is made: it is stored, however
        // long the store is away, unless the session ends meanwhile.
        let mut retry = tokio::time::interval(SETTINGS_RETRY);
        loop {
            match store.apply(&live.id, &change).await {
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(session = %live.id, error = %e, ?change, "session settings change not stored yet; retrying")
                }
            }
            tokio::select! {
                _ = retry.tick() => {}
                _ = live.closed.cancelled() => return,
            }
        }
        live.session.settings_change_stored();
    }
}

/// How often a settings change the store refused is offered again.
const SETTINGS_RETRY: std::time::Duration = std::time::Duration::from_millis(500);

/// 128 random bits, base64url: unguessable, and visible ASCII as the spec
/// requires of a session id.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use toolport_protocol::ProtocolVersion;
    use toolport_protocol::capabilities::{ClientCapabilities, Implementation};
    use toolport_protocol::logging::LoggingLevel;
    use toolport_server::Negotiated;

    use super::*;
    use crate::store::{MemoryEventLog, MemorySessionStore};

    fn replica(sessions: &Arc<MemorySessionStore>, events: &Arc<MemoryEventLog>) -> Arc<AppState> {
        let server = Server::builder("s", "1").build().unwrap();
        AppState::new(server, HttpConfig::default(), sessions.clone(), events.clone())
    }

    fn initialized() -> Arc<Session> {
        Arc::new(Session::restored(Negotiated {
            version: ProtocolVersion::ALL[0],
            client_capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("c", "1"),
        }))
    }

    #[tokio::test]
    async fn settings_reach_the_store_and_another_replica_restores_them() {
        let sessions = Arc::new(MemorySessionStore::new());
        let events = Arc::new(MemoryEventLog::new(16));
        let (a, b) = (replica(&sessions, &events), replica(&sessions, &events));
        let id = a
            .open_session(initialized(), Some("alice".into()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(a.sessions.len(), 1, "the count follows the store");

        let live = a.find_session(&id, Some("alice")).await.unwrap().unwrap();
        live.session.set_log_level(LoggingLevel::Error);
        live.session.subscribe("mem://a");
        // The writer runs on this runtime: give it a bounded number of turns.
        let mut stored = None;
        for _ in 0..100 {
            tokio::task::yield_now().await;
            let record = sessions.get(&id).await.unwrap().unwrap();
            if record.settings.subscriptions.contains("mem://a") {
                stored = Some(record.settings);
                break;
            }
        }
        let stored = stored.expect("the settings reached the store");
        assert_eq!(stored.log_level, Some(LoggingLevel::Error));

        assert!(
            b.find_session(&id, Some("bob")).await.unwrap().is_none(),
            "only its creator"
        );
        let restored = b
            .find_session(&id, Some("alice"))
            .await
            .unwrap()
            .expect("in the shared store");
        assert_eq!(restored.session.log_level(), Some(LoggingLevel::Error));
        assert!(restored.session.is_subscribed("mem://a"));

        // A change through b reaches a's session on its next request.
        restored.session.unsubscribe("mem://a");
        for _ in 0..100 {
            tokio::task::yield_now().await;
            if sessions
                .get(&id)
                .await
                .unwrap()
                .unwrap()
                .settings
                .subscriptions
                .is_empty()
            {
                break;
            }
        }
        assert!(live.session.is_subscribed("mem://a"), "a has not heard of it yet");
        let again = a.find_session(&id, Some("alice")).await.unwrap().unwrap();
        assert!(Arc::ptr_eq(&again, &live), "a keeps its live session");
        assert!(!live.session.is_subscribed("mem://a"), "a takes the stored settings");

        assert_eq!(b.sessions.len(), 0, "b has not counted yet");
        assert_eq!(b.reap().await.unwrap(), 0);
        assert_eq!(b.sessions.len(), 1, "each reap counts the shared store's sessions");
        assert!(b.close_session(&id, Some("alice")).await.unwrap());
        assert!(
            a.find_session(&id, Some("alice")).await.unwrap().is_none(),
            "ended for every replica"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_replica_lets_go_of_a_session_another_one_ended() {
        let sessions = Arc::new(MemorySessionStore::new());
        let events = Arc::new(MemoryEventLog::new(16));
        let (a, b) = (replica(&sessions, &events), replica(&sessions, &events));
        let id = a.open_session(initialized(), None).await.unwrap().unwrap();
        let on_b = b.find_session(&id, None).await.unwrap().unwrap();
        assert!(a.close_session(&id, None).await.unwrap());
        assert!(!on_b.closed.is_cancelled(), "b has not noticed yet");

        let idle = b.config.session_idle_timeout;
        tokio::time::advance(idle / 2).await;
        assert_eq!(b.reap().await.unwrap(), 0);
        assert!(!on_b.closed.is_cancelled(), "recently used on b");
        tokio::time::advance(idle).await;
        assert_eq!(b.reap().await.unwrap(), 0, "nothing left to reap in the store");
        assert!(on_b.closed.is_cancelled(), "b let go of it");
        assert!(b.live().is_empty());
    }
}
