//! The MCP endpoint: POST, GET and DELETE on one path, for both eras.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::sync::mpsc;
use toolport_protocol::jsonrpc::{
    self, ErrorResponse, Frame, Message, Notification, RequestId, Response as RpcResponse,
};
use toolport_protocol::{Era, ErrorObject, ProtocolVersion, lifecycle};
use toolport_server::{
    Admitted, Authorizer, Negotiated, Principal, Refusal, RequestEra, Session, TransportFacts, request_era,
};

use crate::answer::{Answering, answer};
use crate::auth::{self, Denial};
use crate::guard::{self, Accepts, Rejection};
use crate::headers::{self, RequestHeaders};
use crate::live::{AttachError, GET_STREAM, LiveSession, parse_event_id};
use crate::reply::{self, HttpResponse};
use crate::sse::SseBody;
use crate::state::AppState;

/// Routes one HTTP request.
pub(crate) async fn route(
    state: Arc<AppState>,
    mount: Option<Arc<dyn crate::mount::Mount>>,
    request: Request<Incoming>,
) -> HttpResponse {
    if let Some(auth) = &state.auth
        && request.method() == Method::GET
        && let Some(document) = auth.document(request.uri().path())
    {
        return reply::document(document);
    }
    if request.uri().path() != state.config.path {
        if let Some(mount) = mount
            && let Some(access) = mount.route(request.uri().path())
        {
            // Boxed: the console's requests are rare next to MCP ones.
            return Box::pin(crate::mount::serve(state.clone(), mount, access, request)).await;
        }
        return crate::operations::serve(&state, &request).await;
    }
    let (parts, body) = request.into_parts();
    let headers = RequestHeaders::read(&parts.headers);
    if let Err(error) = headers.check_single_valued() {
        tracing::debug!(%error, "request refused");
        return reply::error(StatusCode::BAD_REQUEST, None, error);
    }
    if let Err(rejection) = guard::check_origin_and_host(&headers, &state.config) {
        return rejected(&rejection);
    }
    // Authentication comes before anything else is done with the request.
    let caller = match &state.auth {
        None => Caller::default(),
        Some(auth) => match auth.authenticate(&parts.headers).await {
            Ok(principal) => Caller::new(principal, auth.clone()),
            Err(denial) => return reply::denied(&denial, None),
        },
    };
    match parts.method {
        Method::POST => post(&state, &headers, body, &caller).await,
        Method::GET => get(&state, &headers, &caller).await,
        Method::DELETE => delete(&state, &headers, &caller).await,
        _ => reply::method_not_allowed("GET, POST, DELETE"),
    }
}

/// Who sent a request: the authenticated principal and the session owner
/// key derived from it; both `None` when the endpoint is not protected.
#[derive(Debug, Default)]
pub(crate) struct Caller {
    pub(crate) principal: Option<Principal>,
    owner: Option<String>,
    /// What the caller may do is the server's question, answered by this.
    authorizer: Option<Arc<dyn Authorizer>>,
}

impl Caller {
    fn new(principal: Principal, authorizer: Arc<dyn Authorizer>) -> Self {
        Caller {
            owner: Some(auth::session_owner(&principal)),
            principal: Some(principal),
            authorizer: Some(authorizer),
        }
    }

    /// What the transport tells the server about a request besides its body.
    fn facts<'a>(&'a self, headers: &'a RequestHeaders<'_>) -> TransportFacts<'a> {
        TransportFacts {
            headers: Some(headers),
            principal: self.principal.as_ref(),
            authorizer: self.authorizer.as_ref(),
        }
    }

    fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }
}

fn rejected(rejection: &Rejection) -> HttpResponse {
    tracing::debug!(%rejection, "request rejected");
    let error = ErrorObject::new(toolport_protocol::ErrorCode::INVALID_REQUEST, rejection.to_string());
    reply::error(rejection.status(), None, error)
}

/// What the `MCP-Protocol-Version` header says about the era of a request
/// that has no body to tell (GET, DELETE).
fn header_is_stateless(headers: &RequestHeaders<'_>) -> bool {
    headers::protocol_version(headers)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<ProtocolVersion>().ok())
        .is_some_and(|v| v.era() == Era::Stateless)
}

async fn post(state: &Arc<AppState>, headers: &RequestHeaders<'_>, body: Incoming, caller: &Caller) -> HttpResponse {
    if let Err(rejection) = guard::check_content_type(headers) {
        return rejected(&rejection);
    }
    let accepts = guard::accepts(headers);
    if !accepts.json && !accepts.sse {
        return rejected(&Rejection::NotAcceptable(
            "Accept must list application/json and text/event-stream",
        ));
    }
    let body = match crate::request_body::read_limited(body, state.config.max_body_bytes).await {
        Ok(body) => body,
        Err(response) => return *response,
    };
    match jsonrpc::decode(&body) {
        Err(error) => reply::message(StatusCode::BAD_REQUEST, &Message::Error(error)),
        // The rare paths are boxed: their futures would otherwise make every
        // request's future (built and moved per request) kilobytes larger.
        Ok(Frame::Batch(items)) => Box::pin(batch(state, headers, items, caller)).await,
        Ok(Frame::Single(message)) => single(state, headers, accepts, message, caller).await,
    }
}

async fn single(
    state: &Arc<AppState>,
    headers: &RequestHeaders<'_>,
    accepts: Accepts,
    message: Message,
    caller: &Caller,
) -> HttpResponse {
    match message {
        Message::Request(request) => {
            let id = request.id.clone();
            let admitted = state.server.admit(request, &caller.facts(headers));
            let admitted = match admitted {
                Ok(admitted) => admitted,
                Err(refusal) => return refused(id, refusal),
            };
            if admitted.is_stateless() {
                if admitted.method() == toolport_protocol::subscriptions::LISTEN && !accepts.sse {
                    let why = "subscriptions/listen answers with a stream: Accept must list text/event-stream";
                    return rejected(&Rejection::NotAcceptable(why));
                }
                return answer(
                    state,
                    admitted,
                    Answering::Stateless,
                    state.no_session.clone(),
                    accepts,
                    Vec::new(),
                    caller.principal.clone(),
                )
                .await;
            }
            if admitted.method() == lifecycle::INITIALIZE {
                return Box::pin(initialize(state, admitted, caller)).await;
            }
            match handshake_session(state, headers, caller).await {
                Err(response) => *response,
                Ok((session, live)) => {
                    answer(
                        state,
                        admitted,
                        Answering::Handshake(live),
                        session,
                        accepts,
                        Vec::new(),
                        caller.principal.clone(),
                    )
                    .await
                }
            }
        }
        Message::Notification(notification) => {
            if is_stateless_notification(&notification) {
                // None are defined over HTTP in 2026-07-28 (closing a stream cancels).
                return reply::status(StatusCode::ACCEPTED);
            }
            match handshake_session(state, headers, caller).await {
                Err(response) => *response,
                Ok((_, Some(live))) => deliver(&live, Message::Notification(notification)).await,
                Ok((_, None)) => {
                    state.sessionless.cancel(caller.owner(), &notification);
                    reply::status(StatusCode::ACCEPTED)
                }
            }
        }
        Message::Response(_) | Message::Error(_) if header_is_stateless(headers) => {
            reply::bad_request(None, "clients do not send responses in protocol version 2026-07-28")
        }
        answer @ (Message::Response(_) | Message::Error(_)) => match handshake_session(state, headers, caller).await {
            Err(response) => *response,
            Ok((_, Some(live))) => deliver(&live, answer).await,
            Ok((_, None)) => reply::status(StatusCode::ACCEPTED),
        },
    }
}

/// A request the server did not admit: 403 with the challenge when the
/// caller may not make it; otherwise its error, with the status its era
/// gives errors.
fn refused(id: RequestId, refusal: Refusal) -> HttpResponse {
    match refusal {
        Refusal::Forbidden(forbidden) => {
            let denial = Denial {
                status: StatusCode::FORBIDDEN,
                challenge: forbidden.challenge,
                message: forbidden.message,
            };
            reply::denied(&denial, Some(id))
        }
        Refusal::Invalid { error, era } => {
            let status = match era {
                Era::Stateless => reply::stateless_status(error.code),
                Era::Handshake => StatusCode::OK,
            };
            reply::error(status, Some(id), error)
        }
    }
}

fn is_stateless_notification(notification: &Notification) -> bool {
    matches!(
        request_era(&notification.method, notification.params.as_ref()),
        RequestEra::Stateless(v) if !v.is_empty()
    )
}

/// A handshake-era message that is not a new request: an answer to one of
/// our requests reaches its waiter, `notifications/cancelled` the client's
/// running request (here, or relayed to the replica that runs it); other
/// notifications are ignored. 202 once it is on its way; 503 when it could
/// not be relayed, so the client sends it again.
async fn deliver(live: &LiveSession, message: Message) -> HttpResponse {
    match crate::replicas::deliver(live, message).await {
        Ok(()) => reply::status(StatusCode::ACCEPTED),
        Err(e) => {
            tracing::error!(session = %live.id, error = %e, "answer or cancellation not relayed");
            store_unavailable(
                None,
                "the message could not be passed to the replica running its request",
            )
        }
    }
}

/// `initialize`: the session exists only once the handshake succeeded.
async fn initialize(state: &Arc<AppState>, admitted: Admitted, caller: &Caller) -> HttpResponse {
    if state.config.sessions && state.sessions.len() >= state.config.max_sessions {
        let error = ErrorObject::new(
            toolport_protocol::ErrorCode::OVERLOADED,
            "too many sessions; retry later",
        );
        return reply::error(StatusCode::SERVICE_UNAVAILABLE, Some(admitted.id().clone()), error);
    }
    let session = Arc::new(Session::new());
    let id = admitted.id().clone();
    let call = toolport_server::CallContext {
        session: session.clone(),
        channel: Arc::new(NoChannel),
        cancel: Default::default(),
        principal: caller.principal.clone(),
        session_id: None,
    };
    let result = match state.server.answer(admitted, call).await {
        Err(error) => return reply::error(StatusCode::OK, Some(id), error),
        Ok(result) => result,
    };
    let session_id = if state.config.sessions {
        match state.open_session(session, caller.owner.clone()).await {
            Ok(session_id) => session_id,
            // The handshake succeeded but nothing remembers it: an answer
            // would name a session no later request could use. The client
            // is told to initialize again instead.
            Err(e) => {
                tracing::error!(error = %e, "session not created");
                return store_unavailable(Some(id), "the session could not be created");
            }
        }
    } else {
        None
    };
    let mut response = reply::message(StatusCode::OK, &Message::Response(RpcResponse { id, result }));
    if let Some(session_id) = session_id {
        let value = HeaderValue::from_str(&session_id).expect("session ids are visible ASCII");
        response.headers_mut().insert(headers::SESSION_ID, value);
    }
    response
}

/// 503 for a request the session store could not serve. The JSON-RPC code
/// is the internal error, not the overload one: nothing the client sent was
/// too much, and its retry does not wait for its own requests to finish but
/// for the store to come back. The store's own words stay in the log (they
/// may name its address).
pub(crate) fn store_unavailable(id: Option<RequestId>, what: &str) -> HttpResponse {
    let error = ErrorObject::new(
        toolport_protocol::ErrorCode::INTERNAL_ERROR,
        format!("Service Unavailable: {what}, because the shared state store is unavailable; retry shortly"),
    );
    let mut response = reply::error(StatusCode::SERVICE_UNAVAILABLE, id, error);
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Nothing to talk back to during `initialize`.
#[derive(Debug)]
struct NoChannel;

impl toolport_rpc::PeerChannel for NoChannel {
    fn notify(&self, _: Notification) -> toolport_rpc::peer::BoxFuture<'_, Result<(), toolport_rpc::RpcError>> {
        Box::pin(async { Ok(()) })
    }
    fn request(
        &self,
        _: String,
        _: Option<serde_json::Value>,
        _: std::time::Duration,
    ) -> toolport_rpc::peer::BoxFuture<'_, Result<Box<serde_json::value::RawValue>, toolport_rpc::RpcError>> {
        Box::pin(async { Err(toolport_rpc::RpcError::Closed) })
    }
    fn can_request(&self) -> bool {
        false
    }
}

type SessionOrResponse = Result<(Arc<Session>, Option<Arc<LiveSession>>), Box<HttpResponse>>;

/// The session a handshake-era message belongs to (or a stand-alone one when
/// sessions are off), after checking `MCP-Protocol-Version`.
async fn handshake_session(state: &Arc<AppState>, headers: &RequestHeaders<'_>, caller: &Caller) -> SessionOrResponse {
    let version = match headers::protocol_version(headers) {
        Err(error) => return Err(Box::new(reply::error(StatusCode::BAD_REQUEST, None, error))),
        // Without the header, a request is 2025-03-26 (the header arrived in 2025-06-18).
        Ok(None) => ProtocolVersion::V2025_03_26,
        Ok(Some(v)) => match v.parse::<ProtocolVersion>() {
            Ok(version) if version.era() == Era::Handshake && state.server.supports(version) => version,
            _ => {
                return Err(Box::new(reply::bad_request(
                    None,
                    format!("unsupported MCP-Protocol-Version {v:?}"),
                )));
            }
        },
    };
    if !state.config.sessions {
        let negotiated = Negotiated {
            version,
            client_capabilities: Default::default(),
            client_info: toolport_protocol::capabilities::Implementation::new("unknown", "unknown"),
        };
        return Ok((Arc::new(Session::restored(negotiated)), None));
    }
    let Some(id) = headers.all.get(&headers::SESSION_ID).and_then(|v| v.to_str().ok()) else {
        return Err(Box::new(reply::bad_request(
            None,
            "Mcp-Session-Id is required: send `initialize` first and echo the session id it returns",
        )));
    };
    // A session id presented by another principal than its creator is
    // answered exactly like an unknown one.
    match state.find_session(id, caller.owner()).await {
        Ok(Some(live)) => Ok((live.session.clone(), Some(live))),
        Ok(None) => Err(Box::new(reply::error(
            StatusCode::NOT_FOUND,
            None,
            ErrorObject::new(
                toolport_protocol::ErrorCode::INVALID_REQUEST,
                "Session not found: it ended or expired; send `initialize` again",
            ),
        ))),
        // The session may well exist: saying 404 would make the client
        // start over and lose it.
        Err(e) => {
            tracing::error!(error = %e, "session not looked up");
            Err(Box::new(store_unavailable(None, "the session could not be looked up")))
        }
    }
}

/// A JSON-RPC batch: 2025-03-26 only, answered as one JSON array.
async fn batch(
    state: &Arc<AppState>,
    headers: &RequestHeaders<'_>,
    items: Vec<Result<Message, ErrorResponse>>,
    caller: &Caller,
) -> HttpResponse {
    let version = headers::protocol_version(headers)
        .ok()
        .flatten()
        .unwrap_or("2025-03-26");
    if version != ProtocolVersion::V2025_03_26.as_str() {
        return reply::bad_request(
            None,
            format!("JSON-RPC batches are only allowed in protocol version 2025-03-26, not {version}"),
        );
    }
    let (session, live) = match handshake_session(state, headers, caller).await {
        Err(response) => return *response,
        Ok(found) => found,
    };
    let json_only = Accepts { json: true, sse: false };
    let mut answers = Vec::new();
    let mut undelivered = None;
    for item in items {
        match item {
            Err(error) => answers.push(Message::Error(error)),
            Ok(Message::Request(request)) if request.method == lifecycle::INITIALIZE => {
                let error = ErrorObject::invalid_request("initialize must not be part of a batch");
                answers.push(Message::Error(ErrorResponse::new(Some(request.id), error)));
            }
            Ok(Message::Request(request)) => {
                let id = request.id.clone();
                let admitted = state.server.admit(request, &caller.facts(headers));
                let admitted = match admitted {
                    Ok(admitted) => admitted,
                    Err(Refusal::Invalid { error, .. }) => {
                        answers.push(Message::Error(ErrorResponse::new(Some(id), error)));
                        continue;
                    }
                    Err(forbidden) => return refused(id, forbidden),
                };
                let response = answer(
                    state,
                    admitted,
                    Answering::Handshake(live.clone()),
                    session.clone(),
                    json_only,
                    Vec::new(),
                    caller.principal.clone(),
                )
                .await;
                if let Ok(collected) = response.into_body().collect().await
                    && let Ok(Frame::Single(message)) = jsonrpc::decode(&collected.to_bytes())
                {
                    answers.push(message);
                }
            }
            Ok(message) => {
                if let Some(live) = &live {
                    let delivered = deliver(live, message).await;
                    if delivered.status() != StatusCode::ACCEPTED {
                        undelivered = Some(delivered);
                    }
                }
            }
        }
    }
    if answers.is_empty() {
        // Nothing else to say: say that what could not be relayed must be sent again.
        return undelivered.unwrap_or_else(|| reply::status(StatusCode::ACCEPTED));
    }
    let body = serde_json::to_vec(&answers).expect("messages serialize");
    reply::json(StatusCode::OK, Bytes::from(body))
}

/// GET opens the handshake era's server-to-client stream, or resumes a
/// stream after `Last-Event-ID`. 2026-07-28 has no GET.
async fn get(state: &Arc<AppState>, headers: &RequestHeaders<'_>, caller: &Caller) -> HttpResponse {
    if header_is_stateless(headers) || !state.config.sessions {
        return reply::method_not_allowed("POST");
    }
    if !guard::accepts(headers).sse {
        return rejected(&Rejection::NotAcceptable(
            "GET opens an event stream: Accept must list text/event-stream",
        ));
    }
    let live = match handshake_session(state, headers, caller).await {
        Err(response) => return *response,
        Ok((_, Some(live))) => live,
        Ok((_, None)) => return reply::method_not_allowed("POST"),
    };
    let (stream, after) = match headers.all.get(&headers::LAST_EVENT_ID).and_then(|v| v.to_str().ok()) {
        None => (GET_STREAM, 0),
        Some(last) => match parse_event_id(last) {
            Some(position) => position,
            None => {
                return reply::bad_request(
                    None,
                    format!("Last-Event-ID {last:?} is not an event id of this server"),
                );
            }
        },
    };
    let (tx, rx) = mpsc::channel(state.config.stream_buffer.max(state.config.events_per_stream));
    let attached = match &live.relay {
        // Another replica runs (or ran) it: follow the shared log.
        Some(relay) if !live.has_stream(stream) => crate::replicas::follow(&live, relay, stream, after, tx).await,
        _ => live.attach(stream, after, tx).await,
    };
    match attached {
        Ok(()) => {
            let mut response = http::Response::new(crate::body::McpBody::Sse(Box::new(SseBody::new(
                rx,
                state.config.keep_alive,
            ))));
            let h = response.headers_mut();
            h.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            h.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            h.insert(
                HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            );
            response
        }
        Err(AttachError::Busy) => reply::error(
            StatusCode::CONFLICT,
            None,
            ErrorObject::invalid_request("this session already has an open GET stream"),
        ),
        Err(AttachError::Unknown) => reply::bad_request(
            None,
            "cannot resume: the stream is unknown or the events after Last-Event-ID are no longer kept",
        ),
    }
}

/// DELETE ends a handshake-era session.
async fn delete(state: &Arc<AppState>, headers: &RequestHeaders<'_>, caller: &Caller) -> HttpResponse {
    if header_is_stateless(headers) || !state.config.sessions {
        return reply::method_not_allowed("POST");
    }
    let Some(id) = headers.all.get(&headers::SESSION_ID).and_then(|v| v.to_str().ok()) else {
        return reply::bad_request(None, "Mcp-Session-Id is required to end a session");
    };
    match state.close_session(id, caller.owner()).await {
        Ok(true) => reply::status(StatusCode::OK),
        Ok(false) => reply::error(
            StatusCode::NOT_FOUND,
            None,
            ErrorObject::invalid_request("Session not found"),
        ),
        Err(e) => {
            tracing::error!(error = %e, "session not ended");
            store_unavailable(None, "the session could not be ended")
        }
    }
}
