//! The Peer engine: one side of a JSON-RPC conversation.
//!
//! JSON-RPC is symmetric, so one engine serves the MCP server, the MCP client
//! and, later, the gateway. A [`Peer`] is the handle for sending (requests with
//! ids, timeouts and cancellation; notifications); [`Connection::serve`] is the
//! loop that reads, routes answers to their waiters, dispatches requests to a
//! [`Service`] and carries `notifications/cancelled` to the handler's token.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use toolport_protocol::ErrorObject;
use toolport_protocol::jsonrpc::{ErrorResponse, Frame, Message, Notification, Request, RequestId, Response};
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};

use crate::exchange::{Delivery, Exchange, InFlightGuard};
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

    /// Whether [`request`](Self::request) can reach the other side at all.
    /// A channel with no way back (a handshake-era request served without a
    /// session) says no, so a handler can say why instead of failing later.
    fn can_request(&self) -> bool {
        true
    }
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
    /// Our requests waiting for answers, theirs running.
    exchange: Exchange,
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
            exchange: Exchange::new(),
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
        let (id, rx) = self.shared.exchange.pending.register();
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
        self.shared.exchange.pending.len()
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
        if self.peer.shared.exchange.pending.forget(&id) {
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
        let in_flight = peer.shared.exchange.in_flight.clone();
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
                        match in_flight.begin(&request.id, options.max_in_flight) {
                            Ok(running) => {
                                if let Some(answer) = run_request(request, running, &service, &peer).await {
                                    let _ = peer.send(Outgoing::Message(answer)).await;
                                }
                            }
                            Err(error) => {
                                let _ = peer.send(Outgoing::Message(ErrorResponse::new(Some(request.id), error).into())).await;
                            }
                        }
                    }
                    Some(Incoming::Frame(Frame::Single(message))) => match dispatch(message, &service, &peer, &options) {
                        Dispatched::Nothing => {}
                        Dispatched::Refused(answer) => {
                            let _ = peer.send(Outgoing::Message(answer.into())).await;
                        }
                        Dispatched::Run(mut work) => {
                            // Most requests finish on their first poll: those
                            // are answered here, without a task of their own;
                            // the rest go on in one, concurrently.
                            if std::future::poll_fn(|cx| std::task::Poll::Ready(work.as_mut().poll(cx))).await.is_pending() {
                                tasks.spawn(work);
                            }
                        }
                    },
                    Some(Incoming::Frame(Frame::Batch(items))) => {
                        if service.batch_allowed() {
                            tasks.spawn(serve_batch(items, service.clone(), peer.clone()));
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
        peer.shared.exchange.pending.close_all();
        let drained = tokio::time::timeout(options.drain_timeout, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                abandoned = tasks.len(),
                "requests still running after the drain timeout were cancelled"
            );
            in_flight.cancel_all();
            tasks.shutdown().await;
        }
        let _ = transport.outgoing.send(Outgoing::Close).await;
        let _ = transport.writer_done.await;
    }
}

/// Handles one message: delivers it, refuses it, or readies it to run.
fn dispatch<S: Service>(message: Message, service: &Arc<S>, peer: &Peer, options: &PeerOptions) -> Dispatched {
    let request = match message {
        Message::Request(request) => request,
        other => {
            if let Delivery::Notification(notification) = peer.shared.exchange.deliver(other) {
                service.notification(notification, peer);
            }
            return Dispatched::Nothing;
        }
    };
    let running = match peer.shared.exchange.in_flight.begin(&request.id, options.max_in_flight) {
        Ok(running) => running,
        Err(error) => return Dispatched::Refused(ErrorResponse::new(Some(request.id), error)),
    };
    let (service, peer) = (service.clone(), peer.clone());
    Dispatched::Run(Box::pin(async move {
        if let Some(answer) = run_request(request, running, &service, &peer).await {
            let _ = peer.send(Outgoing::Message(answer)).await;
        }
    }))
}

/// What became of one message from the other side.
enum Dispatched {
    /// A notification or an answer, delivered; nothing to send.
    Nothing,
    /// A request refused before it ran (a duplicate id, too many in flight).
    Refused(ErrorResponse),
    /// A request to run; it sends its own answer.
    Run(BoxFuture<'static, ()>),
}

/// Runs one admitted request; `None` when it was cancelled (no answer is sent
/// for a cancelled request, as `basic/utilities/cancellation` asks).
async fn run_request<S: Service>(
    request: Request,
    running: InFlightGuard,
    service: &Arc<S>,
    peer: &Peer,
) -> Option<Message> {
    let id = request.id.clone();
    let cx = RequestContext {
        id: id.clone(),
        cancel: running.token().clone(),
        peer: peer.clone(),
    };
    // A handler that panics answers an internal error; the connection goes on.
    let outcome = crate::panic::contain("request", service.call(request, cx))
        .await
        .unwrap_or_else(|panicked| Err(panicked.error()));
    let cancelled = running.token().is_cancelled();
    drop(running);
    if cancelled {
        return None;
    }
    Some(match outcome {
        Ok(result) => Response { id, result }.into(),
        Err(error) => ErrorResponse::new(Some(id), error).into(),
    })
}

/// Answers a batch: every request runs, the answers go back as one array.
async fn serve_batch<S: Service>(items: Vec<Result<Message, ErrorResponse>>, service: Arc<S>, peer: Peer) {
    let mut answers = Vec::new();
    let mut requests = JoinSet::new();
    for item in items {
        match item {
            Err(error) => answers.push(Message::Error(error)),
            Ok(Message::Request(request)) => match peer.shared.exchange.in_flight.begin(&request.id, usize::MAX) {
                Ok(running) => {
                    let (service, peer) = (service.clone(), peer.clone());
                    requests.spawn(async move { run_request(request, running, &service, &peer).await });
                }
                Err(error) => answers.push(ErrorResponse::new(Some(request.id), error).into()),
            },
            Ok(other) => {
                if let Delivery::Notification(notification) = peer.shared.exchange.deliver(other) {
                    service.notification(notification, &peer);
                }
            }
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
