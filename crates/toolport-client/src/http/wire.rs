//! One conversation over HTTP: sending a request and reading its answer
//! (JSON or an event stream, resumed when it ends early), routing what the
//! server sends, and answering its requests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{self, ErrorResponse, Frame, Message, Notification, Request, RequestId, Response};
use toolport_protocol::param_headers::encode_value;
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};
use toolport_protocol::{Era, ErrorObject, ProtocolVersion, lifecycle};

use crate::error::ClientError;
use crate::inbound::Inbound;
use crate::sse::{SseDecoder, SseEvent};

use super::*;

/// One request as the HTTP wire sends it.
#[derive(Debug)]
pub(crate) struct HttpRequest<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<Value>,
    /// The version the request speaks (decides the headers).
    pub(crate) version: ProtocolVersion,
    /// `Mcp-Param-*` headers (2026-07-28 `tools/call`).
    pub(crate) extra_headers: Vec<(String, String)>,
}

#[derive(Debug, Default)]
pub(super) struct SessionState {
    /// The handshake-era version once negotiated (sent in `MCP-Protocol-Version`).
    version: Option<ProtocolVersion>,
    session: Option<String>,
}

/// One conversation with an HTTP server: a handshake-era session, or the
/// stateless 2026-07-28 exchange.
#[derive(Debug)]
pub(crate) struct HttpWire {
    pub(super) core: Arc<HttpCore>,
    inbound: Arc<Inbound>,
    state: Mutex<SessionState>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Outcome>>>,
    /// Fires when the wire is closed or its session is gone.
    pub(super) closed: CancellationToken,
}

impl HttpWire {
    pub(crate) fn new(core: Arc<HttpCore>, inbound: Arc<Inbound>) -> Arc<HttpWire> {
        Arc::new(HttpWire {
            core,
            inbound,
            state: Mutex::default(),
            pending: Mutex::default(),
            closed: CancellationToken::new(),
        })
    }

    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<Outcome>>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the negotiated handshake-era version.
    pub(crate) fn set_version(&self, version: ProtocolVersion) {
        self.state().version = Some(version);
    }

    pub(crate) fn is_alive(&self) -> bool {
        !self.closed.is_cancelled()
    }

    /// Stops the wire's streams without waiting.
    pub(crate) fn stop(&self) {
        self.closed.cancel();
    }

    /// The headers of a message in the handshake era after `initialize`.
    pub(super) fn session_headers(&self, h: &mut HeaderMap) {
        let state = self.state();
        if let Some(version) = state.version {
            h.insert(PROTOCOL_VERSION, HeaderValue::from_static(version.as_str()));
        }
        if let Some(session) = state.session.as_deref().and_then(|s| HeaderValue::from_str(s).ok()) {
            h.insert(SESSION_ID, session);
        }
    }

    pub(super) fn post_headers(&self, request: &HttpRequest<'_>) -> Result<HeaderMap, ClientError> {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if request.version.era() == Era::Stateless {
            h.insert(PROTOCOL_VERSION, HeaderValue::from_static(request.version.as_str()));
            h.insert(MCP_METHOD, header_value(&encode_value(request.method))?);
            let key = match request.method {
                "tools/call" | "prompts/get" => Some("name"),
                "resources/read" => Some("uri"),
                // The tasks extension routes by task.
                "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
                _ => None,
            };
            if let Some(name) = key.and_then(|k| request.params.as_ref()?.get(k)?.as_str()) {
                h.insert(MCP_NAME, header_value(&encode_value(name))?);
            }
        } else if request.method != lifecycle::INITIALIZE {
            self.session_headers(&mut h);
        }
        // `Mcp-Param-*` (2026-07-28) and the trace context (both eras).
        for (name, value) in &request.extra_headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|_| ClientError::InvalidInput(format!("{name:?} is not a header name")))?;
            h.insert(name, header_value(value)?);
        }
        Ok(h)
    }

    /// Sends a request and waits for its answer.
    pub(crate) async fn request(self: &Arc<Self>, request: HttpRequest<'_>) -> Result<Box<RawValue>, ClientError> {
        let headers = self.post_headers(&request)?;
        let legacy = request.version.era() == Era::Handshake;
        let id = self.core.next_id();
        let (tx, mut rx) = oneshot::channel();
        self.pending().insert(id.clone(), tx);
        let mut in_flight = InFlight {
            wire: self.clone(),
            id: id.clone(),
            cancel_on_drop: legacy && request.method != lifecycle::INITIALIZE,
        };
        let message = Message::Request(Request::new(id.clone(), request.method, request.params));
        let body = Bytes::from(jsonrpc::encode(&message));
        let exchange = self.core.send(Method::POST, &headers, body, true).await;
        let outcome = match exchange {
            Ok(exchange) => self.answer(exchange, &id, &mut rx, legacy, request.method).await,
            Err(e) => Err(e),
        };
        if outcome.is_ok() || !matches!(outcome, Err(ClientError::Disconnected(_))) {
            in_flight.cancel_on_drop = false;
        }
        outcome
    }

    /// Reads the answer to request `id` from its HTTP response.
    pub(super) async fn answer(
        self: &Arc<Self>,
        exchange: Exchange,
        id: &RequestId,
        rx: &mut oneshot::Receiver<Outcome>,
        legacy: bool,
        method: &str,
    ) -> Result<Box<RawValue>, ClientError> {
        let status = exchange.status;
        if status.is_success() && method == lifecycle::INITIALIZE {
            let session = exchange.headers.get(SESSION_ID).and_then(|v| v.to_str().ok());
            self.state().session = session.map(str::to_owned);
        }
        if !status.is_success() {
            let had_session = self.state().session.is_some();
            if status == StatusCode::NOT_FOUND && legacy && had_session {
                self.closed.cancel();
                return Err(ClientError::SessionExpired);
            }
            let headers = exchange.headers.clone();
            let text = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(error_from_body(status, &headers, &text));
        }
        if exchange.is_event_stream() {
            return self.read_stream(exchange, id, rx, legacy).await;
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(ClientError::Protocol(format!(
                "the server answered a request with HTTP {status} and no result"
            )));
        }
        let bytes = exchange.bytes(self.core.max_message).await?;
        match jsonrpc::decode(&bytes) {
            Ok(Frame::Single(message)) => self.dispatch(message, false),
            Ok(Frame::Batch(items)) => items.into_iter().flatten().for_each(|m| self.dispatch(m, false)),
            Err(e) => {
                return Err(ClientError::Protocol(format!(
                    "the JSON answer does not decode: {}",
                    e.error.message
                )));
            }
        }
        match rx.try_recv() {
            Ok(outcome) => outcome.map_err(ClientError::Remote),
            Err(_) => Err(ClientError::Protocol(
                "the JSON answer is not the response to the request".into(),
            )),
        }
    }

    /// Reads an event stream until the answer to `id` arrives (on it or on
    /// another stream of the session), resuming it when it ends early.
    pub(super) async fn read_stream(
        self: &Arc<Self>,
        mut exchange: Exchange,
        id: &RequestId,
        rx: &mut oneshot::Receiver<Outcome>,
        legacy: bool,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut cursor = StreamCursor::default();
        let mut resumes = 0;
        loop {
            let ended = tokio::select! {
                outcome = &mut *rx => return outcome.map_err(|_| ClientError::Closed)?.map_err(ClientError::Remote),
                ended = self.pump(&mut exchange.body, &mut cursor) => ended,
            };
            if let Ok(outcome) = rx.try_recv() {
                return outcome.map_err(ClientError::Remote);
            }
            let why = match ended {
                StreamEnd::Invalid(why) => return Err(ClientError::Protocol(why)),
                StreamEnd::Ended => String::new(),
                StreamEnd::Broken(why) => format!(" ({why})"),
            };
            let Some(last) = cursor.last_id.clone().filter(|_| legacy && resumes < MAX_RESUMES) else {
                return Err(ClientError::Disconnected(format!(
                    "the answer stream ended before the response{why}"
                )));
            };
            resumes += 1;
            let delay = cursor.retry.unwrap_or(DEFAULT_RETRY);
            tokio::select! {
                outcome = &mut *rx => return outcome.map_err(|_| ClientError::Closed)?.map_err(ClientError::Remote),
                _ = tokio::time::sleep(delay) => {}
            }
            tracing::debug!(%id, last_event_id = %last, "resuming the answer stream");
            exchange = self.resume(&last).await?;
        }
    }

    /// Reads events from `body` until it ends.
    pub(super) async fn pump(self: &Arc<Self>, body: &mut Incoming, cursor: &mut StreamCursor) -> StreamEnd {
        let mut decoder = SseDecoder::new(self.core.max_message);
        let mut events = Vec::new();
        loop {
            match body.frame().await {
                None => return StreamEnd::Ended,
                Some(Err(e)) => return StreamEnd::Broken(e.to_string()),
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    if let Err(e) = decoder.feed(&data, &mut events) {
                        return StreamEnd::Invalid(e);
                    }
                    for event in events.drain(..) {
                        self.event(event, cursor);
                    }
                }
            }
        }
    }

    pub(super) fn event(self: &Arc<Self>, event: SseEvent, cursor: &mut StreamCursor) {
        if let Some(id) = event.id.clone() {
            cursor.last_id = Some(id);
        }
        if let Some(ms) = event.retry {
            cursor.retry = Some(Duration::from_millis(ms));
        }
        if !event.is_message() {
            return;
        }
        match jsonrpc::decode(event.data.as_bytes()) {
            Ok(Frame::Single(message)) => self.dispatch(message, true),
            Ok(Frame::Batch(items)) => items.into_iter().flatten().for_each(|m| self.dispatch(m, true)),
            Err(e) => tracing::warn!(error = %e.error.message, "ignored an event that is not JSON-RPC"),
        }
    }

    /// Routes one message from the server.
    pub(super) fn dispatch(self: &Arc<Self>, message: Message, on_stream: bool) {
        match message {
            Message::Response(Response { id, result }) => self.resolve(&id, Ok(result)),
            Message::Error(ErrorResponse { id: Some(id), error }) => self.resolve(&id, Err(error)),
            Message::Error(ErrorResponse { id: None, error }) => {
                tracing::warn!(%error, "the server reported an error about no request in particular");
            }
            Message::Notification(n) => self.inbound.notification(n),
            Message::Request(request) if on_stream && self.state().version.is_some() => {
                let wire = self.clone();
                tokio::spawn(async move { wire.answer_server(request).await });
            }
            Message::Request(request) => {
                tracing::warn!(method = %request.method, "ignored a request from the server outside a handshake-era stream");
            }
        }
    }

    pub(super) fn resolve(&self, id: &RequestId, outcome: Outcome) {
        if let Some(tx) = self.pending().remove(id) {
            let _ = tx.send(outcome);
        } else {
            tracing::debug!(%id, "dropped an answer nobody waits for");
        }
    }

    /// Answers a request from the server (handshake era) with a POST.
    pub(super) async fn answer_server(self: Arc<Self>, request: Request) {
        let id = request.id.clone();
        let message = match self.inbound.request(request).await {
            Ok(result) => match Response::new(id.clone(), &result) {
                Ok(r) => Message::Response(r),
                Err(e) => Message::Error(ErrorResponse::new(Some(id), ErrorObject::internal(e))),
            },
            Err(error) => Message::Error(ErrorResponse::new(Some(id), error)),
        };
        if let Err(e) = self.post_message(&message).await {
            tracing::warn!(error = %e, "could not send the answer to the server's request");
        }
    }

    /// POSTs a notification or a response; expects 202.
    pub(super) async fn post_message(&self, message: &Message) -> Result<(), ClientError> {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        self.session_headers(&mut h);
        let exchange = self
            .core
            .send(Method::POST, &h, Bytes::from(jsonrpc::encode(message)), false)
            .await?;
        let status = exchange.status;
        if status == StatusCode::NOT_FOUND && self.state().session.is_some() {
            self.closed.cancel();
            return Err(ClientError::SessionExpired);
        }
        if !status.is_success() {
            let headers = exchange.headers.clone();
            let body = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(error_from_body(status, &headers, &body));
        }
        Ok(())
    }

    /// Sends a notification (handshake era).
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.post_message(&Message::Notification(Notification::new(method, params)))
            .await
    }

    /// GET with `Last-Event-ID`: the rest of a stream.
    pub(super) async fn resume(&self, last_event_id: &str) -> Result<Exchange, ClientError> {
        let exchange = self.get(Some(last_event_id)).await?;
        if !exchange.status.is_success() {
            let status = exchange.status;
            if status == StatusCode::NOT_FOUND {
                self.closed.cancel();
                return Err(ClientError::SessionExpired);
            }
            let headers = exchange.headers.clone();
            let body = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(ClientError::Disconnected(format!(
                "the stream could not be resumed: {}",
                error_from_body(status, &headers, &body)
            )));
        }
        Ok(exchange)
    }

    pub(super) async fn get(&self, last_event_id: Option<&str>) -> Result<Exchange, ClientError> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        self.session_headers(&mut h);
        if let Some(last) = last_event_id {
            h.insert(LAST_EVENT_ID, header_value(last)?);
        }
        self.core.send(Method::GET, &h, Bytes::new(), true).await
    }

    /// Ends the wire: stops its streams and, in the handshake era, ends the
    /// session on the server (DELETE, best effort).
    pub(crate) async fn close(&self) {
        self.closed.cancel();
        let session = self.state().session.clone();
        if session.is_some() {
            let mut h = HeaderMap::new();
            self.session_headers(&mut h);
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                self.core.send(Method::DELETE, &h, Bytes::new(), false),
            )
            .await;
        }
    }
}

/// Forgets a request's waiter when its call ends and, when a handshake-era
/// call is abandoned, tells the server with `notifications/cancelled`.
struct InFlight {
    wire: Arc<HttpWire>,
    id: RequestId,
    cancel_on_drop: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let waiting = self.wire.pending().remove(&self.id).is_some();
        if !(waiting && self.cancel_on_drop && self.wire.is_alive()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let wire = self.wire.clone();
        let params = CancelledNotificationParams {
            request_id: Some(self.id.clone()),
            reason: Some("the caller stopped waiting".into()),
            meta: None,
        };
        runtime.spawn(async move {
            let _ = wire.notify(CANCELLED, serde_json::to_value(params).ok()).await;
        });
    }
}
