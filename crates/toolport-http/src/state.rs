//! What every request handler shares: the server, the settings, the stores,
//! and the sessions live on this machine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio_util::sync::CancellationToken;
use toolport_server::{Server, Session};

use crate::auth::Authenticator;
use crate::config::HttpConfig;
use crate::live::{LiveSession, forward_changes};
use crate::store::{EventStore, SessionRecord, SessionStore};

/// Shared state of one HTTP endpoint.
pub(crate) struct AppState {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) events: Arc<dyn EventStore>,
    live: Mutex<HashMap<String, Arc<LiveSession>>>,
    /// The (unused) session of 2026-07-28 requests, shared so that no
    /// request allocates one.
    pub(crate) no_session: Arc<Session>,
    /// Fires on shutdown.
    pub(crate) shutdown: CancellationToken,
    /// Renders the Prometheus metrics, when a recorder is installed.
    pub(crate) metrics: OnceLock<MetricsRender>,
    /// Authentication and authorization, when the endpoint is protected.
    pub(crate) auth: Option<Arc<dyn Authenticator>>,
}

/// Renders metrics as Prometheus text.
pub type MetricsRender = Arc<dyn Fn() -> String + Send + Sync>;

impl AppState {
    pub(crate) fn new(
        server: Server,
        config: HttpConfig,
        sessions: Arc<dyn SessionStore>,
        events: Arc<dyn EventStore>,
    ) -> Arc<Self> {
        Arc::new(AppState {
            server,
            config,
            sessions,
            events,
            live: Mutex::default(),
            no_session: Arc::default(),
            metrics: OnceLock::new(),
            shutdown: CancellationToken::new(),
            auth: None,
        })
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveSession>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a session whose `initialize` succeeded; returns its id.
    pub(crate) fn create_session(&self, session: Arc<Session>, principal: Option<String>) -> Option<String> {
        let negotiated = session.negotiated()?.clone();
        let id = new_session_id();
        self.sessions.insert(&id, SessionRecord { negotiated, principal });
        let live = LiveSession::new(id.clone(), session, self.events.clone(), self.config.resume_grace);
        tokio::spawn(forward_changes(self.server.clone(), live.clone()));
        self.live().insert(id.clone(), live);
        self.count_sessions();
        Some(id)
    }

    /// The session with this id, if it exists and belongs to `owner` (the
    /// principal that created it, when authenticated): from this machine, or
    /// rebuilt from the store when another replica created it.
    pub(crate) fn session(&self, id: &str, owner: Option<&str>) -> Option<Arc<LiveSession>> {
        let record = self.sessions.touch(id)?;
        if record.principal.as_deref() != owner {
            return None;
        }
        let mut live = self.live();
        let session = live.entry(id.to_owned()).or_insert_with(|| {
            let session = LiveSession::new(
                id.to_owned(),
                Arc::new(Session::restored(record.negotiated)),
                self.events.clone(),
                self.config.resume_grace,
            );
            tokio::spawn(forward_changes(self.server.clone(), session.clone()));
            session
        });
        Some(session.clone())
    }

    /// Ends a session; `false` if it did not exist or belongs to another
    /// principal than `owner`.
    pub(crate) fn end_session(&self, id: &str, owner: Option<&str>) -> bool {
        if self
            .sessions
            .touch(id)
            .is_none_or(|record| record.principal.as_deref() != owner)
        {
            return false;
        }
        let existed = self.sessions.remove(id);
        if let Some(live) = self.live().remove(id) {
            live.close();
        }
        self.count_sessions();
        existed
    }

    fn count_sessions(&self) {
        metrics::gauge!("toolport_sessions").set(self.sessions.len() as f64);
    }

    /// Ends the sessions idle for longer than the configured timeout.
    pub(crate) fn reap(&self) -> usize {
        let expired = self.sessions.reap(self.config.session_idle_timeout);
        for id in &expired {
            if let Some(live) = self.live().remove(id) {
                live.close();
            }
        }
        if !expired.is_empty() {
            self.count_sessions();
        }
        expired.len()
    }

    /// Ends every session's streams (shutdown).
    pub(crate) fn close_all(&self) {
        for (_, live) in self.live().drain() {
            live.close();
        }
    }
}

/// 128 random bits, base64url: unguessable, and visible ASCII as the spec
/// requires of a session id.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    URL_SAFE_NO_PAD.encode(bytes)
}
