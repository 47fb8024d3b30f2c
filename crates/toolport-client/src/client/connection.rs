//! The connection behind a [`Client`]: opening the link (with retries),
//! replacing a broken one, closing it, and the stream for what the server
//! sends on its own ([`Events`]).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use toolport_protocol::Era;
use toolport_protocol::subscriptions::{self, SubscriptionFilter};

use super::{Client, finish, lock};
use crate::error::ClientError;
use crate::inbound::ClientEvent;
use crate::link::{Link, Outbound, ServerInfo, Wire};

/// How long the client waits for a new event stream (GET or listen) to open.
const GET_STREAM_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Receives the server's notifications.
#[derive(Debug)]
pub struct Events {
    rx: broadcast::Receiver<ClientEvent>,
}

impl Events {
    /// The next event; `None` once the client is gone.
    pub async fn next(&mut self) -> Option<ClientEvent> {
        match self.rx.recv().await {
            Ok(event) => Some(event),
            Err(broadcast::error::RecvError::Lagged(n)) => Some(ClientEvent::Lagged(n)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl Client {
    /// What the opening of the conversation settled (connects if needed).
    pub async fn server(&self) -> Result<ServerInfo, ClientError> {
        let limit = self.inner.options.request_timeout;
        let last = Mutex::new(None);
        let outcome = tokio::time::timeout(limit, self.link_retrying(&last)).await;
        finish(outcome, limit, &last).map(|link| link.server.clone())
    }

    /// The live link, opened with retries but no deadline of its own.
    pub(super) async fn link_with_retries(&self) -> Result<Arc<Link>, ClientError> {
        self.link_retrying(&Mutex::new(None)).await
    }

    /// Opens a link, retrying transport failures with backoff; each failure
    /// is noted in `last` so a deadline can report it.
    async fn link_retrying(&self, last: &Mutex<Option<ClientError>>) -> Result<Arc<Link>, ClientError> {
        let mut failures = 0;
        loop {
            match self.link().await {
                Err(e) if e.was_not_sent() && failures + 1 < self.inner.options.backoff.max_attempts => {
                    failures += 1;
                    *lock(last) = Some(e);
                    tokio::time::sleep(self.inner.options.backoff.delay(failures)).await;
                }
                other => return other,
            }
        }
    }

    /// The live link, opening one if there is none.
    pub(super) async fn link(&self) -> Result<Arc<Link>, ClientError> {
        let mut slot = self.inner.link.lock().await;
        if let Some(link) = slot.as_ref()
            && link.is_alive()
        {
            return Ok(link.clone());
        }
        if let Some(old) = slot.take() {
            tokio::spawn(async move { old.close().await });
        }
        if self.inner.closed.is_cancelled() {
            return Err(ClientError::Closed);
        }
        let link = Arc::new(
            Link::open(
                &self.inner.target,
                &self.inner.inbound,
                &self.inner.options,
                &self.inner.capabilities,
            )
            .await?,
        );
        tracing::debug!(version = %link.server.protocol_version, server = %link.server.implementation.name, "connected");
        if self.listens(&link) {
            // Requests the server sends on the GET stream are lost if it is
            // not open yet: wait for it (briefly) before the first call.
            self.listen_and_wait(&link).await;
        }
        *slot = Some(link.clone());
        Ok(link)
    }

    /// Drops `link` if it is still the current one; the next call reconnects.
    pub(super) async fn invalidate(&self, link: &Arc<Link>) {
        let mut slot = self.inner.link.lock().await;
        if slot.as_ref().is_some_and(|current| Arc::ptr_eq(current, link)) {
            let old = slot.take().expect("checked above");
            tokio::spawn(async move { old.close().await });
        }
    }

    /// Ends the conversation: closes a stdio server's input (and kills it if
    /// it does not exit), ends an HTTP session. Calls after this fail with
    /// [`ClientError::Closed`].
    pub async fn close(&self) {
        self.inner.closed.cancel();
        let link = self.inner.link.lock().await.take();
        if let Some(link) = link {
            link.close().await;
        }
    }

    /// The server's notifications from now on: list changes, resource
    /// updates, log messages. Starts listening for them (a GET stream or
    /// `subscriptions/listen` over HTTP) if the client was not yet.
    pub async fn events(&self) -> Result<Events, ClientError> {
        let rx = self.inner.inbound.subscribe();
        if !self.inner.want_events.swap(true, Ordering::SeqCst) {
            let link = self.link_with_retries().await?;
            self.listen_and_wait(&link).await;
        }
        Ok(Events { rx })
    }

    /// Whether `link` needs a stream for what the server sends on its own:
    /// when events were asked for, and in the handshake era over HTTP when
    /// the handler answers requests (servers may send them on the GET stream).
    fn listens(&self, link: &Link) -> bool {
        let caps = &self.inner.capabilities;
        let answers = caps.elicitation.is_some() || caps.sampling.is_some() || caps.roots.is_some();
        self.inner.want_events.load(Ordering::SeqCst) || (answers && link.server.era() == Era::Handshake)
    }

    /// Starts (or restarts) the stream for what the server sends on its own
    /// and waits, up to [`GET_STREAM_WAIT`], until it is open.
    pub(super) async fn listen_and_wait(&self, link: &Arc<Link>) {
        if let Some(ready) = self.start_listening(link) {
            let _ = tokio::time::timeout(GET_STREAM_WAIT, ready).await;
        }
    }

    /// Starts the stream for what the server sends on its own; returns a
    /// receiver that fires once it is open, when there is a stream to open.
    fn start_listening(&self, link: &Arc<Link>) -> Option<tokio::sync::oneshot::Receiver<()>> {
        let stop = CancellationToken::new();
        {
            let mut listening = lock(&link.listening);
            // A handshake-era stream carries everything already; a 2026-07-28
            // listen stream is opened anew when its filter changes.
            if listening.is_some() && link.server.era() == Era::Handshake {
                return None;
            }
            if let Some(old) = listening.replace(stop.clone()) {
                old.cancel();
            }
        }
        let version = link.server.protocol_version;
        let backoff = self.inner.options.backoff;
        match (&link.wire, version.era()) {
            (Wire::Http(wire), Era::Handshake) => return Some(wire.listen_get(backoff)),
            (Wire::Stdio(_), Era::Handshake) => {} // notifications arrive on the connection
            (wire, Era::Stateless) => {
                let filter = SubscriptionFilter {
                    tools_list_changed: Some(true),
                    prompts_list_changed: Some(true),
                    resources_list_changed: Some(true),
                    resource_subscriptions: Some(lock(&self.inner.subscriptions).iter().cloned().collect()),
                    task_ids: None,
                };
                let mut params = Map::from_iter([("notifications".to_owned(), json!(filter))]);
                params.insert("_meta".into(), Value::Object(self.meta(link)));
                match wire {
                    Wire::Http(wire) => return Some(wire.listen_post(Value::Object(params), version, stop, backoff)),
                    Wire::Stdio(_) => {
                        let acknowledged = self.inner.inbound.on_acknowledged();
                        let link = link.clone();
                        tokio::spawn(async move {
                            let request = Outbound {
                                method: subscriptions::LISTEN,
                                params,
                                extra_headers: Vec::new(),
                            };
                            tokio::select! {
                                _ = stop.cancelled() => {}
                                outcome = link.request(request) => {
                                    tracing::debug!(?outcome, "the listen request ended");
                                }
                            }
                        });
                        return Some(acknowledged);
                    }
                }
            }
        }
        None
    }
}

impl Link {
    /// Stops background streams without waiting (used on drop).
    pub(crate) fn stop(&self) {
        if let Some(stop) = lock(&self.listening).take() {
            stop.cancel();
        }
        if let Wire::Http(w) = &self.wire {
            w.stop();
        }
    }
}
