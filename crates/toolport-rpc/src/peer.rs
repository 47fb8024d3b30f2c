//! The Peer engine: one side of a JSON-RPC conversation.
//!
//! JSON-RPC is symmetric, so one engine serves the MCP server, the MCP client
//! and, later, the gateway. A [`Peer`] is the handle for sending (requests with
//! ids, timeouts and cancellation; notifications); [`Connection::serve`] is the
//! loop that reads, routes answers to their waiters, dispatches requests to a
//! [`Service`] and carries `notifications/cancelled` to the handler's token.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{ErrorResponse, Frame, Message, Notification, Request, RequestId, Response};
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};
use toolport_protocol::{ErrorCode, ErrorObject};

use crate::pending::PendingRequests;
use crate::transport::{Incoming, Outgoing, Transport};

/// Why a request we sent did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RpcError {
    /// The other side answered with an error.
    #[error("the peer answered with an error: {0}")]
    Remote(ErrorObject),
    /// No answer within the timeout; `notifications/cancelled` was sent.
    #[error("no answer within {0:?}; the request was cancelled")]
    Timeout(Duration),
    /// The caller cancelled; `notifications/cancelled` was sent.
    #[error("the request was cancelled")]
    Cancelled,
    /// The connection closed before an answer came.
    #[error("the connection is closed")]
    Closed,
}

/// A boxed future, for the object-safe [`PeerChannel`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a request handler's messages to the other side go: this connection
/// for stdio, the answer stream of one HTTP request, and so on.
pub trait PeerChannel: Send + Sync + std::fmt::Debug {
    /// Sends a notification.
    fn notify(&self, notification: Notification) -> BoxFuture<'_, Result<(), RpcError>>;
    /// Sends a request and waits for its result (handshake era only).
    fn request(
        &self,
        method: String,
        params: Option<Value>,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>>;
}

/// The handler side of a connection.
pub trait Service: Send + Sync + 'static {
    /// Answers one request. Errors become JSON-RPC error responses.
    fn call(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> impl Future<Output = Result<Box<RawValue>, ErrorObject>> + Send;

    /// Takes a notification (cancellation is handled by the engine and does
    /// not arrive here).
    fn notification(&self, notification: Notification, peer: &Peer) {
        let _ = (notification, peer);
    }

    /// Whether a JSON-RPC batch may be answered now (MCP 2025-03-26 only).
    fn batch_allowed(&self) -> bool {
        false
    }

    /// Whether this request must finish before the next message is read.
    /// Requests otherwise run concurrently; a handshake (`initialize`) must
    /// not be overtaken by the requests that depend on it.
    fn in_order(&self, request: &Request) -> bool {
        let _ = request;
        false
    }
}

/// What a [`Service`] gets with each request.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The request's id.
    pub id: RequestId,
    /// Fires when the other side cancels the request or goes away.
    pub cancel: CancellationToken,
    /// The connection, for notifications and requests back.
    pub peer: Peer,
}

/// Limits of one connection.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// Requests from the other side handled at once; more are refused with an
    /// overload error rather than queued without bound.
    pub max_in_flight: usize,
    /// How long requests we send wait for an answer unless told otherwise.
    pub request_timeout: Duration,
    /// How long, after the other side closed, in-flight requests may take to
    /// finish so their answers are still written.
    pub drain_timeout: Duration,
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions {
            max_in_flight: 1024,
            request_timeout: Duration::from_secs(60),
            drain_timeout: Duration::from_secs(30),
        }
    }
}

/// A handle for sending to the other side. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    outgoing: mpsc::Sender<Outgoing>,
    pending: PendingRequests,
    request_timeout: Duration,
    /// Fires when the connection closes.
    closed: CancellationToken,
}

/// The receiving half: run it with [`Connection::serve`].
#[derive(Debug)]
pub struct Connection {
    transport: Transport,
    peer: Peer,
    options: PeerOptions,
}

/// Makes a peer and the loop that drives it.
pub fn connect(transport: Transport, options: PeerOptions) -> (Peer, Connection) {
    let peer = Peer {
        shared: Arc::new(Shared {
            outgoing: transport.outgoing.clone(),
            pending: PendingRequests::new(),
            request_timeout: options.request_timeout,
            closed: CancellationToken::new(),
        }),
    };
    (
        peer.clone(),
        Connection {
            transport,
            peer,
            options,
        },
    )
}

impl Peer {
    /// Sends a request and waits for its result, up to the default timeout.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Box<RawValue>, RpcError> {
        self.request_with(method, params, self.shared.request_timeout, None)
            .await
    }

    /// Sends a request with an explicit timeout and an optional cancellation
    /// token. Whatever ends the wait early (timeout, the token, the caller
    /// dropping the future) sends `notifications/cancelled` for it.
    pub async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Box<RawValue>, RpcError> {
        let (id, rx) = self.shared.pending.register();
        let mut guard = CancelOnDrop {
            peer: self,
            id: Some(id.clone()),
        };
        let request = Request {
            id,
            method: method.to_owned(),
            params,
        };
        if self.send(Outgoing::Message(request.into())).await.is_err() {
            guard.disarm();
            return Err(RpcError::Closed);
        }
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        let outcome = tokio::select! {
            outcome = rx => outcome,
            _ = tokio::time::sleep(timeout) => return Err(RpcError::Timeout(timeout)),
            _ = cancel.cancelled() => return Err(RpcError::Cancelled),
            _ = self.shared.closed.cancelled() => { guard.disarm(); return Err(RpcError::Closed) }
        };
        guard.disarm();
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(RpcError::Remote(error)),
            Err(_) => Err(RpcError::Closed),
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RpcError> {
        self.send(Outgoing::Message(Notification::new(method, params).into()))
            .await
    }

    /// Queues anything for the writer.
    pub async fn send(&self, item: Outgoing) -> Result<(), RpcError> {
        self.shared.outgoing.send(item).await.map_err(|_| RpcError::Closed)
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Fires when the connection closes.
    pub fn closed(&self) -> CancellationToken {
        self.shared.closed.clone()
    }

    /// Number of our requests still waiting for an answer.
    pub fn pending_requests(&self) -> usize {
        self.shared.pending.len()
    }
}

impl PeerChannel for Peer {
    fn notify(&self, notification: Notification) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(self.send(Outgoing::Message(notification.into())))
    }

    fn request(
        &self,
        method: String,
        params: Option<Value>,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>> {
        Box::pin(async move { self.request_with(&method, params, timeout, None).await })
    }
}

/// Removes an abandoned request from the pending table and tells the other
/// side, so neither of us keeps state for an answer nobody will read.
struct CancelOnDrop<'a> {
    peer: &'a Peer,
    id: Option<RequestId>,
}

impl CancelOnDrop<'_> {
    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if self.peer.shared.pending.forget(&id) {
            let params = CancelledNotificationParams {
                request_id: Some(id),
                reason: Some("abandoned".into()),
                meta: None,
            };
            let note = Notification::new(CANCELLED, serde_json::to_value(params).ok());
            // Best effort: if the queue is full the other side will see the
            // connection's backpressure long before it misses this notice.
            let _ = self.peer.shared.outgoing.try_send(Outgoing::Message(note.into()));
        }
    }
}

type InFlight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

impl Connection {
    /// The peer handle of this connection.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Reads until the other side closes, dispatching to `service`. Then
    /// lets in-flight requests finish (up to the drain timeout), writes their
    /// answers, and flushes. Returns once everything is written.
    pub async fn serve<S: Service>(self, service: S) {
        let Connection {
            mut transport,
            peer,
            options,
        } = self;
        let service = Arc::new(service);
        let in_flight: InFlight = Arc::default();
        let mut tasks = JoinSet::new();
        loop {
            tokio::select! {
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                item = transport.incoming.recv() => match item {
                    None => break,
                    Some(Incoming::Invalid(error)) => {
                        let _ = peer.send(Outgoing::Message(error.into())).await;
                    }
                    Some(Incoming::Frame(Frame::Single(Message::Request(request)))) if service.in_order(&request) => {
                        match admit(&request.id, &in_flight, options.max_in_flight) {
                            Ok(token) => {
                                if let Some(answer) = run_request(request, token, &service, &peer, &in_flight).await {
                                    let _ = peer.send(Outgoing::Message(answer)).await;
                                }
                            }
                            Err(error) => {
                                let _ = peer.send(Outgoing::Message(ErrorResponse::new(Some(request.id), error).into())).await;
                            }
                        }
                    }
                    Some(Incoming::Frame(Frame::Single(message))) => {
                        if let Some(answer) = dispatch(message, &service, &peer, &in_flight, &options, &mut tasks) {
                            let _ = peer.send(Outgoing::Message(answer.into())).await;
                        }
                    }
                    Some(Incoming::Frame(Frame::Batch(items))) => {
                        if service.batch_allowed() {
                            tasks.spawn(serve_batch(items, service.clone(), peer.clone(), in_flight.clone()));
                        } else {
                            let error = ErrorObject::invalid_request(
                                "JSON-RPC batches are only allowed in protocol version 2025-03-26; send one message per line",
                            );
                            let _ = peer.send(Outgoing::Message(ErrorResponse::new(None, error).into())).await;
                        }
                    }
                },
            }
        }
        // The other side closed its end: nothing it could still answer will
        // arrive, so our own requests fail now instead of at their timeout.
        peer.shared.closed.cancel();
        peer.shared.pending.close_all();
        let drained = tokio::time::timeout(options.drain_timeout, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                abandoned = tasks.len(),
                "requests still running after the drain timeout were cancelled"
            );
            for token in in_flight.lock().unwrap_or_else(|p| p.into_inner()).values() {
                token.cancel();
            }
            tasks.shutdown().await;
        }
        let _ = transport.outgoing.send(Outgoing::Close).await;
        let _ = transport.writer_done.await;
    }
}

/// Handles one message; returns an immediate answer when there is one.
fn dispatch<S: Service>(
    message: Message,
    service: &Arc<S>,
    peer: &Peer,
    in_flight: &InFlight,
    options: &PeerOptions,
    tasks: &mut JoinSet<()>,
) -> Option<ErrorResponse> {
    match message {
        Message::Request(request) => {
            let token = match admit(&request.id, in_flight, options.max_in_flight) {
                Ok(token) => token,
                Err(error) => return Some(ErrorResponse::new(Some(request.id), error)),
            };
            let (service, peer, in_flight) = (service.clone(), peer.clone(), in_flight.clone());
            tasks.spawn(async move {
                let id = request.id.clone();
                if let Some(answer) = run_request(request, token, &service, &peer, &in_flight).await {
                    let _ = peer.send(Outgoing::Message(answer)).await;
                }
                drop(id);
            });
            None
        }
        Message::Notification(notification) => {
            if notification.method == CANCELLED {
                cancel_in_flight(&notification, in_flight);
            } else {
                service.notification(notification, peer);
            }
            None
        }
        Message::Response(Response { id, result }) => {
            if !peer.shared.pending.resolve(&id, Ok(result)) {
                tracing::debug!(%id, "dropped a response nobody waits for");
            }
            None
        }
        Message::Error(ErrorResponse { id: Some(id), error }) => {
            if !peer.shared.pending.resolve(&id, Err(error)) {
                tracing::debug!(%id, "dropped an error response nobody waits for");
            }
            None
        }
        Message::Error(ErrorResponse { id: None, error }) => {
            tracing::warn!(%error, "the peer reported an error about a message it could not read");
            None
        }
    }
}

/// Registers an incoming request as in flight, refusing duplicates and excess.
fn admit(id: &RequestId, in_flight: &InFlight, max: usize) -> Result<CancellationToken, ErrorObject> {
    let mut map = in_flight.lock().unwrap_or_else(|p| p.into_inner());
    if map.contains_key(id) {
        return Err(ErrorObject::invalid_request(format!(
            "request id {id} is already in flight; ids must be unique among outstanding requests"
        )));
    }
    if map.len() >= max {
        return Err(ErrorObject::new(
            ErrorCode::OVERLOADED,
            format!("too many requests in flight on this connection (limit {max}); retry when some have finished"),
        )
        .with_data(serde_json::json!({ "retryAfterMs": 100 })));
    }
    let token = CancellationToken::new();
    map.insert(id.clone(), token.clone());
    Ok(token)
}

/// Runs one admitted request; `None` when it was cancelled (no answer is sent
/// for a cancelled request, as `basic/utilities/cancellation` asks).
async fn run_request<S: Service>(
    request: Request,
    token: CancellationToken,
    service: &Arc<S>,
    peer: &Peer,
    in_flight: &InFlight,
) -> Option<Message> {
    let id = request.id.clone();
    let cx = RequestContext {
        id: id.clone(),
        cancel: token.clone(),
        peer: peer.clone(),
    };
    let outcome = service.call(request, cx).await;
    in_flight.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    if token.is_cancelled() {
        return None;
    }
    Some(match outcome {
        Ok(result) => Response { id, result }.into(),
        Err(error) => ErrorResponse::new(Some(id), error).into(),
    })
}

fn cancel_in_flight(notification: &Notification, in_flight: &InFlight) {
    let Some(params) = &notification.params else {
        return;
    };
    let Ok(params) = serde_json::from_value::<CancelledNotificationParams>(params.clone()) else {
        tracing::debug!("ignored a malformed notifications/cancelled");
        return;
    };
    let Some(id) = params.request_id else { return };
    // Unknown or finished ids are ignored: the request may have completed
    // while the notice was on its way.
    if let Some(token) = in_flight.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
        tracing::debug!(%id, reason = params.reason.as_deref().unwrap_or(""), "request cancelled by the peer");
        token.cancel();
    }
}

/// Answers a batch: every request runs, the answers go back as one array.
async fn serve_batch<S: Service>(
    items: Vec<Result<Message, ErrorResponse>>,
    service: Arc<S>,
    peer: Peer,
    in_flight: InFlight,
) {
    let mut answers = Vec::new();
    let mut requests = JoinSet::new();
    for item in items {
        match item {
            Err(error) => answers.push(Message::Error(error)),
            Ok(Message::Request(request)) => match admit(&request.id, &in_flight, usize::MAX) {
                Ok(token) => {
                    let (service, peer, in_flight) = (service.clone(), peer.clone(), in_flight.clone());
                    requests.spawn(async move { run_request(request, token, &service, &peer, &in_flight).await });
                }
                Err(error) => answers.push(ErrorResponse::new(Some(request.id), error).into()),
            },
            Ok(Message::Notification(n)) if n.method == CANCELLED => cancel_in_flight(&n, &in_flight),
            Ok(Message::Notification(n)) => service.notification(n, &peer),
            Ok(Message::Response(Response { id, result })) => {
                peer.shared.pending.resolve(&id, Ok(result));
            }
            Ok(Message::Error(ErrorResponse { id: Some(id), error })) => {
                peer.shared.pending.resolve(&id, Err(error));
            }
            Ok(Message::Error(_)) => {}
        }
    }
    while let Some(answer) = requests.join_next().await {
        if let Ok(Some(answer)) = answer {
            answers.push(answer);
        }
    }
    // A batch of only notifications and responses gets no answer at all.
    if !answers.is_empty() {
        let _ = peer.send(Outgoing::Batch(answers)).await;
    }
}
