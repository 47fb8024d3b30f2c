//! The Streamable HTTP transport (`basic/transports/streamable-http`), both eras.
//!
//! Every message is its own POST; the answer is JSON or an event stream.
//! - 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//!   tool's `Mcp-Param-*` headers mirror the body; no sessions; dropping a
//!   call closes its stream, which is the cancellation.
//! - handshake era: `Mcp-Session-Id` from `initialize` on every request (404
//!   means the session is gone), `notifications/cancelled` when a call is
//!   dropped, requests from the server answered with a POST of the response,
//!   a stream that ends before its answer resumed with GET + `Last-Event-ID`
//!   after the server's `retry` delay, and an optional GET stream for what
//!   the server sends on its own.
//!
//! Connections are pooled (hyper-util) and bounded: every request in flight
//! and every open stream holds one of `max_connections` permits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{self, ErrorResponse, Frame, Message, Notification, Request, RequestId, Response};
use toolport_protocol::param_headers::encode_value;
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};
use toolport_protocol::{Era, ErrorObject, ProtocolVersion, lifecycle};

use crate::auth::{AuthChallenge, AuthDecision, MAX_AUTH_ATTEMPTS, TokenProvider};
use crate::error::ClientError;
use crate::inbound::Inbound;
use crate::sse::{SseDecoder, SseEvent};

type Outcome = Result<Box<RawValue>, ErrorObject>;

/// The reconnect delay when the server sent no `retry:`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many times one answer stream is resumed with `Last-Event-ID`.
const MAX_RESUMES: u32 = 5;
/// How much of an error body is kept for the message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// What every HTTP link to one server shares: the connection pool, the
/// connection bound, the token provider and the request ids.
pub(crate) struct HttpCore {
    client: HyperClient<HttpConnector, Full<Bytes>>,
    uri: http::Uri,
    auth: Option<Arc<dyn TokenProvider>>,
    connections: Arc<Semaphore>,
    max_message: usize,
    next_id: AtomicI64,
}

impl std::fmt::Debug for HttpCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCore")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl HttpCore {
    /// A pool for the MCP endpoint at `url` (`http://` only: this build has no TLS).
    pub(crate) fn new(
        url: &str,
        max_connections: usize,
        max_message: usize,
        auth: Option<Arc<dyn TokenProvider>>,
    ) -> Result<HttpCore, ClientError> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| ClientError::InvalidInput(format!("{url:?} is not a URL: {e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(ClientError::InvalidInput(format!(
                    "{url}: https is not supported by this build (no TLS yet); use http:// on a trusted network or put a TLS-terminating proxy in front"
                )));
            }
            _ => {
                return Err(ClientError::InvalidInput(format!(
                    "{url:?} is not an http:// URL of an MCP endpoint (for example http://127.0.0.1:8080/mcp)"
                )));
            }
        }
        if uri.host().is_none() {
            return Err(ClientError::InvalidInput(format!("{url:?} has no host")));
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(10)));
        let max_connections = max_connections.max(1);
        let client = HyperClient::builder(TokioExecutor::new())
            .pool_max_idle_per_host(max_connections)
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Ok(HttpCore {
            client,
            uri,
            auth,
            connections: Arc::new(Semaphore::new(max_connections)),
            max_message,
            next_id: AtomicI64::new(1),
        })
    }

    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends one HTTP request, holding a connection permit while it and its
    /// body last, with the bearer token and the 401/403 retries.
    /// `bounded` requests wait for a connection permit; answers to the
    /// server's own requests do not (the requests holding the permits may be
    /// the ones waiting for those answers).
    async fn send(
        &self,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        bounded: bool,
    ) -> Result<Exchange, ClientError> {
        let permit = match bounded {
            true => Some(
                self.connections
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| ClientError::Closed)?,
            ),
            false => None,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = http::Request::builder().method(method.clone()).uri(self.uri.clone());
            for (name, value) in headers {
                request = request.header(name, value);
            }
            if let Some(auth) = &self.auth
                && let Some(token) = auth.token().await
            {
                let value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                    ClientError::InvalidInput("the bearer token has characters a header cannot carry".into())
                })?;
                request = request.header(header::AUTHORIZATION, value);
            }
            let request = request
                .body(Full::new(body.clone()))
                .map_err(|e| ClientError::InvalidInput(format!("could not build the HTTP request: {e}")))?;
            let response = self.client.request(request).await.map_err(|e| {
                if e.is_connect() {
                    ClientError::Unreachable(format!("{}: {}", self.uri, source_chain(&e)))
                } else {
                    ClientError::Disconnected(format!("{}: {}", self.uri, source_chain(&e)))
                }
            })?;
            let status = response.status();
            let challenge = || {
                let www = response
                    .headers()
                    .get(header::WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                AuthChallenge::new(&self.uri.to_string(), status.as_u16(), www, attempt)
            };
            if status == StatusCode::UNAUTHORIZED {
                let challenge = challenge();
                if let Some(auth) = &self.auth
                    && attempt < MAX_AUTH_ATTEMPTS
                    && auth.on_unauthorized(&challenge).await == AuthDecision::Retry
                {
                    continue;
                }
                return Err(ClientError::Unauthorized {
                    www_authenticate: challenge.www_authenticate,
                });
            }
            if status == StatusCode::FORBIDDEN {
                let challenge = challenge();
                if let Some(auth) = &self.auth
                    && challenge.error() == Some("insufficient_scope")
                    && attempt < MAX_AUTH_ATTEMPTS
                    && auth.on_insufficient_scope(&challenge).await == AuthDecision::Retry
                {
                    continue;
                }
                if challenge.www_authenticate.is_some() {
                    return Err(ClientError::Forbidden {
                        www_authenticate: challenge.www_authenticate,
                    });
                }
            }
            let (parts, body) = response.into_parts();
            return Ok(Exchange {
                status: parts.status,
                headers: parts.headers,
                body,
                _permit: permit,
            });
        }
    }
}

/// The whole chain of an error's causes, which is where hyper keeps the reason.
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A response whose body is still to be read, with its connection permit.
struct Exchange {
    status: StatusCode,
    headers: HeaderMap,
    body: Incoming,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Exchange {
    fn is_event_stream(&self) -> bool {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
    }

    async fn bytes(self, limit: usize) -> Result<Bytes, ClientError> {
        Limited::new(self.body, limit)
            .collect()
            .await
            .map(|c| c.to_bytes())
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                    ClientError::Protocol(format!("the answer is larger than {limit} bytes"))
                } else {
                    ClientError::Disconnected(format!("reading the answer: {e}"))
                }
            })
    }
}

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
struct SessionState {
    /// The handshake-era version once negotiated (sent in `MCP-Protocol-Version`).
    version: Option<ProtocolVersion>,
    session: Option<String>,
}

/// One conversation with an HTTP server: a handshake-era session, or the
/// stateless 2026-07-28 exchange.
#[derive(Debug)]
pub(crate) struct HttpWire {
    core: Arc<HttpCore>,
    inbound: Arc<Inbound>,
    state: Mutex<SessionState>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Outcome>>>,
    /// Fires when the wire is closed or its session is gone.
    closed: CancellationToken,
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

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<Outcome>>> {
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
    fn session_headers(&self, h: &mut HeaderMap) {
        let state = self.state();
        if let Some(version) = state.version {
            h.insert(PROTOCOL_VERSION, HeaderValue::from_static(version.as_str()));
        }
        if let Some(session) = state.session.as_deref().and_then(|s| HeaderValue::from_str(s).ok()) {
            h.insert(SESSION_ID, session);
        }
    }

    fn post_headers(&self, request: &HttpRequest<'_>) -> Result<HeaderMap, ClientError> {
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
                _ => None,
            };
            if let Some(name) = key.and_then(|k| request.params.as_ref()?.get(k)?.as_str()) {
                h.insert(MCP_NAME, header_value(&encode_value(name))?);
            }
            for (name, value) in &request.extra_headers {
                let name = HeaderName::try_from(name.as_str())
                    .map_err(|_| ClientError::InvalidInput(format!("{name:?} is not a header name")))?;
                h.insert(name, header_value(value)?);
            }
        } else if request.method != lifecycle::INITIALIZE {
            self.session_headers(&mut h);
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
    async fn answer(
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
            let text = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(error_from_body(status, &text));
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
    async fn read_stream(
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
    async fn pump(self: &Arc<Self>, body: &mut Incoming, cursor: &mut StreamCursor) -> StreamEnd {
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

    fn event(self: &Arc<Self>, event: SseEvent, cursor: &mut StreamCursor) {
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
    fn dispatch(self: &Arc<Self>, message: Message, on_stream: bool) {
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

    fn resolve(&self, id: &RequestId, outcome: Outcome) {
        if let Some(tx) = self.pending().remove(id) {
            let _ = tx.send(outcome);
        } else {
            tracing::debug!(%id, "dropped an answer nobody waits for");
        }
    }

    /// Answers a request from the server (handshake era) with a POST.
    async fn answer_server(self: Arc<Self>, request: Request) {
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
    async fn post_message(&self, message: &Message) -> Result<(), ClientError> {
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
            let body = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(error_from_body(status, &body));
        }
        Ok(())
    }

    /// Sends a notification (handshake era).
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.post_message(&Message::Notification(Notification::new(method, params)))
            .await
    }

    /// GET with `Last-Event-ID`: the rest of a stream.
    async fn resume(&self, last_event_id: &str) -> Result<Exchange, ClientError> {
        let exchange = self.get(Some(last_event_id)).await?;
        if !exchange.status.is_success() {
            let status = exchange.status;
            if status == StatusCode::NOT_FOUND {
                self.closed.cancel();
                return Err(ClientError::SessionExpired);
            }
            let body = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(ClientError::Disconnected(format!(
                "the stream could not be resumed: {}",
                error_from_body(status, &body)
            )));
        }
        Ok(exchange)
    }

    async fn get(&self, last_event_id: Option<&str>) -> Result<Exchange, ClientError> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        self.session_headers(&mut h);
        if let Some(last) = last_event_id {
            h.insert(LAST_EVENT_ID, header_value(last)?);
        }
        self.core.send(Method::GET, &h, Bytes::new(), true).await
    }

    /// Keeps the handshake era's GET stream open (what the server sends on
    /// its own: list changes, resource updates, requests), reconnecting with
    /// `Last-Event-ID` until the wire closes or the server says it has no
    /// such stream (405).
    ///
    /// The returned receiver fires once the first attempt has its answer, so
    /// the caller can wait until the stream is there before sending requests
    /// whose questions the server may send on it.
    pub(crate) fn listen_get(self: &Arc<Self>, backoff: crate::options::Backoff) -> oneshot::Receiver<()> {
        let wire = self.clone();
        let (ready_tx, ready) = oneshot::channel();
        tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            let mut cursor = StreamCursor::default();
            let mut failures = 0;
            while wire.is_alive() {
                let opened = tokio::select! {
                    _ = wire.closed.cancelled() => return,
                    opened = wire.get(cursor.last_id.as_deref()) => opened,
                };
                if let Some(tx) = ready_tx.take() {
                    let _ = tx.send(());
                }
                let delay = match opened {
                    Ok(mut exchange) if exchange.status.is_success() && exchange.is_event_stream() => {
                        failures = 0;
                        tokio::select! {
                            _ = wire.closed.cancelled() => return,
                            _ = wire.pump(&mut exchange.body, &mut cursor) => {}
                        }
                        cursor.retry.unwrap_or(DEFAULT_RETRY)
                    }
                    Ok(exchange) if exchange.status == StatusCode::METHOD_NOT_ALLOWED => return,
                    Ok(exchange) if exchange.status == StatusCode::NOT_FOUND => {
                        wire.closed.cancel();
                        return;
                    }
                    other => {
                        failures += 1;
                        if failures >= backoff.max_attempts {
                            tracing::debug!(outcome = ?other.err(), "gave up on the server's GET stream");
                            return;
                        }
                        backoff.delay(failures)
                    }
                };
                tokio::select! {
                    _ = wire.closed.cancelled() => return,
                    _ = tokio::time::sleep(delay) => {}
                }
            }
        });
        ready
    }

    /// Keeps a 2026-07-28 `subscriptions/listen` stream open until `stop`
    /// fires, opening it again when it drops. The returned receiver fires
    /// once the first stream is open (or failed).
    pub(crate) fn listen_post(
        self: &Arc<Self>,
        params: Value,
        version: ProtocolVersion,
        stop: CancellationToken,
        backoff: crate::options::Backoff,
    ) -> oneshot::Receiver<()> {
        let wire = self.clone();
        let (ready_tx, ready) = oneshot::channel();
        tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            let mut failures = 0;
            loop {
                let request = HttpRequest {
                    method: toolport_protocol::subscriptions::LISTEN,
                    params: Some(params.clone()),
                    version,
                    extra_headers: Vec::new(),
                };
                let run = async {
                    let headers = wire.post_headers(&request)?;
                    let message = Message::Request(Request::new(
                        wire.core.next_id(),
                        request.method,
                        request.params.clone(),
                    ));
                    let exchange = wire
                        .core
                        .send(Method::POST, &headers, Bytes::from(jsonrpc::encode(&message)), true)
                        .await;
                    // The answer's head comes with the acknowledgement: from
                    // here on, nothing the server publishes is missed.
                    if let Some(tx) = ready_tx.take() {
                        let _ = tx.send(());
                    }
                    let mut exchange = exchange?;
                    if !exchange.status.is_success() || !exchange.is_event_stream() {
                        let status = exchange.status;
                        let body = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
                        return Err(error_from_body(status, &body));
                    }
                    let mut cursor = StreamCursor::default();
                    wire.pump(&mut exchange.body, &mut cursor).await;
                    Ok(())
                };
                let outcome = tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = wire.closed.cancelled() => return,
                    outcome = run => outcome,
                };
                failures = if outcome.is_ok() { 1 } else { failures + 1 };
                if let Err(e) = outcome
                    && (matches!(e, ClientError::Remote(_) | ClientError::Http { .. })
                        || failures >= backoff.max_attempts)
                {
                    tracing::debug!(error = %e, "stopped listening for the server's notifications");
                    return;
                }
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(backoff.delay(failures)) => {}
                }
            }
        });
        ready
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

/// How an event stream ended.
#[derive(Debug)]
enum StreamEnd {
    /// The server closed it.
    Ended,
    /// The connection broke.
    Broken(String),
    /// The server sent something that is not an event stream we accept.
    Invalid(String),
}

/// Where a stream stands, for resuming it.
#[derive(Debug, Default)]
struct StreamCursor {
    last_id: Option<String>,
    retry: Option<Duration>,
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

/// A JSON-RPC error in an error body becomes [`ClientError::Remote`]
/// (2026-07-28 sends its errors with 4xx statuses); anything else keeps the status.
fn error_from_body(status: StatusCode, body: &[u8]) -> ClientError {
    if let Ok(Frame::Single(Message::Error(e))) = jsonrpc::decode(body) {
        return ClientError::Remote(e.error);
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(512)]).trim().to_owned();
    match status {
        StatusCode::UNAUTHORIZED => ClientError::Unauthorized { www_authenticate: None },
        StatusCode::FORBIDDEN => ClientError::Forbidden { www_authenticate: None },
        _ => ClientError::Http {
            status: status.as_u16(),
            body: if text.is_empty() {
                status.canonical_reason().unwrap_or("").to_owned()
            } else {
                text
            },
        },
    }
}

fn header_value(value: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(value).map_err(|_| ClientError::InvalidInput(format!("{value:?} cannot be sent in a header")))
}

const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
