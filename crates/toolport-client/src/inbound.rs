//! What the server sends on its own: notifications (surfaced as
//! [`ClientEvent`]s, progress routed to its call) and, in the handshake era,
//! requests for input answered by the [`ClientHandler`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot};
use toolport_protocol::logging::LoggingMessageNotificationParams;
use toolport_protocol::mrtr::InputRequest;
use toolport_protocol::progress::{ProgressNotificationParams, ProgressToken};
use toolport_protocol::{ErrorObject, Notification, Request, lifecycle, logging, progress, prompts, resources, tools};

use crate::handler::{self, ClientHandler};
use crate::options::Progress;

/// Something the server told the client without being asked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for a subscribed resource.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/message`: a log line from the server.
    Log(LoggingMessageNotificationParams),
    /// Any other notification, as it came.
    Other(Notification),
    /// Events were dropped because the receiver fell behind; re-read the
    /// lists to catch up.
    Lagged(u64),
}

/// Capacity of the event channel: a receiver that falls further behind gets
/// [`ClientEvent::Lagged`] instead of unbounded memory use.
const EVENT_CAPACITY: usize = 256;

/// Routes what the server sends.
#[derive(Debug)]
pub(crate) struct Inbound {
    pub(crate) handler: Arc<dyn ClientHandler>,
    events: broadcast::Sender<ClientEvent>,
    progress: Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>>,
    /// Who waits for the next `subscriptions/listen` acknowledgement.
    acknowledged: Mutex<Vec<oneshot::Sender<()>>>,
    /// Results that change notifications make stale.
    pub(crate) cache: Arc<crate::cache::ResultCache>,
}

impl Inbound {
    pub(crate) fn new(handler: Arc<dyn ClientHandler>, cache: Arc<crate::cache::ResultCache>) -> Self {
        Inbound {
            handler,
            events: broadcast::channel(EVENT_CAPACITY).0,
            progress: Mutex::default(),
            acknowledged: Mutex::default(),
            cache,
        }
    }

    /// Fires when the next listen stream is acknowledged.
    pub(crate) fn on_acknowledged(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.acknowledged.lock().unwrap_or_else(|p| p.into_inner()).push(tx);
        rx
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ClientEvent> {
        self.events.subscribe()
    }

    /// Routes progress with `token` to `sink` until the guard is dropped.
    pub(crate) fn route_progress(
        self: &Arc<Self>,
        token: ProgressToken,
        sink: mpsc::UnboundedSender<Progress>,
    ) -> ProgressRoute {
        self.lock().insert(token.clone(), sink);
        ProgressRoute {
            inbound: self.clone(),
            token,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes one notification from the server.
    pub(crate) fn notification(&self, n: Notification) {
        let uri = n.params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str);
        self.cache.invalidate(&n.method, uri);
        let event = match n.method.as_str() {
            progress::PROGRESS => {
                let Some(params) = n
                    .params
                    .and_then(|p| serde_json::from_value::<ProgressNotificationParams>(p).ok())
                else {
                    tracing::debug!("ignored a malformed progress notification");
                    return;
                };
                if let Some(sink) = self.lock().get(&params.progress_token) {
                    let _ = sink.send(params);
                }
                return;
            }
            tools::LIST_CHANGED => ClientEvent::ToolsListChanged,
            prompts::LIST_CHANGED => ClientEvent::PromptsListChanged,
            resources::LIST_CHANGED => ClientEvent::ResourcesListChanged,
            resources::UPDATED => match n.params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str) {
                Some(uri) => ClientEvent::ResourceUpdated { uri: uri.to_owned() },
                None => ClientEvent::Other(n),
            },
            logging::MESSAGE => match n.params.clone().map(serde_json::from_value) {
                Some(Ok(params)) => ClientEvent::Log(params),
                _ => ClientEvent::Other(n),
            },
            // The first message of a listen stream says what it carries.
            toolport_protocol::subscriptions::ACKNOWLEDGED => {
                for waiter in self.acknowledged.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
                    let _ = waiter.send(());
                }
                return;
            }
            _ => ClientEvent::Other(n),
        };
        // No receiver is fine: nobody asked for events.
        let _ = self.events.send(event);
    }

    /// Answers a request from the server (handshake era).
    pub(crate) async fn request(&self, request: Request) -> Result<Value, ErrorObject> {
        if request.method == lifecycle::PING {
            return Ok(Value::Object(Default::default()));
        }
        let input = InputRequest::from_parts(&request.method, request.params).map_err(|why| {
            if why.contains("is not an input request") {
                ErrorObject::method_not_found(&request.method)
            } else {
                ErrorObject::invalid_params(why)
            }
        })?;
        handler::answer(self.handler.as_ref(), input).await
    }
}

/// Removes a progress route when its call ends.
#[derive(Debug)]
pub(crate) struct ProgressRoute {
    inbound: Arc<Inbound>,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.inbound.lock().remove(&self.token);
    }
}
