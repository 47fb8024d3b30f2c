//! Answering one request: JSON when the answer is all there is, an SSE
//! stream when the handler sends notifications (progress, logs) or, in the
//! handshake era, requests to the client before its answer.
//!
//! The handler runs inside the HTTP request's own future until it either
//! finishes (JSON, no task spawned) or sends its first message (the answer
//! becomes a stream, and a task pumps the rest). On a 2026-07-28 stream,
//! closing it cancels the request; on a handshake-era stream it does not:
//! events are recorded and the client may resume with `Last-Event-ID`.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{
    ErrorResponse, Message, Notification, Request, RequestId, Response as RpcResponse, encode,
};
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};
use toolport_protocol::{ErrorCode, ErrorObject};
use toolport_rpc::exchange::InFlightGuard;
use toolport_rpc::peer::BoxFuture;
use toolport_rpc::{PeerChannel, RpcError};
use toolport_server::{Admitted, CallContext, Principal, Session};

use crate::body::McpBody;
use crate::config::ResponseMode;
use crate::guard::Accepts;
use crate::live::{LiveSession, event_id};
use crate::outbox::Outbox;
use crate::reply::{self, HttpResponse};
use crate::sse::{self, SseBody};
use crate::state::AppState;

/// Where a request's messages to the client go until its answer is sent.
#[derive(Debug)]
struct RequestChannel {
    tx: Arc<Outbox>,
    /// Handshake era: the session whose client answers our requests.
    live: Option<Arc<LiveSession>>,
}

impl PeerChannel for RequestChannel {
    fn notify(&self, notification: Notification) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(async move {
            self.tx
                .send(Message::Notification(notification))
                .await
                .map_err(|_| RpcError::Closed)
        })
    }

    fn request(
        &self,
        method: String,
        params: Option<Value>,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>> {
        Box::pin(async move {
            // 2026-07-28 has no server-to-client requests (MRTR instead).
            let Some(live) = &self.live else {
                return Err(RpcError::Closed);
            };
            let (id, rx) = live.exchange.pending.register();
            let request = Request {
                id: id.clone(),
                method,
                params,
            };
            if self.tx.send(Message::Request(request)).await.is_err() {
                live.exchange.pending.forget(&id);
                return Err(RpcError::Closed);
            }
            let outcome = tokio::select! {
                outcome = rx => outcome,
                _ = tokio::time::sleep(timeout) => {
                    live.exchange.pending.forget(&id);
                    let params = CancelledNotificationParams { request_id: Some(id), reason: Some("timed out".into()), meta: None };
                    let _ = self.tx.try_send(Message::Notification(Notification::new(CANCELLED, serde_json::to_value(params).ok())));
                    return Err(RpcError::Timeout(timeout));
                }
                _ = live.closed.cancelled() => return Err(RpcError::Closed),
            };
            match outcome {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(error)) => Err(RpcError::Remote(error)),
                Err(_) => Err(RpcError::Closed),
            }
        })
    }

    fn can_request(&self) -> bool {
        self.live.is_some()
    }
}

/// The era-specific parts of answering.
pub(crate) enum Answering {
    /// 2026-07-28: errors carry HTTP statuses; closing the stream cancels.
    Stateless,
    /// Handshake era, with the session when there is one.
    Handshake(Option<Arc<LiveSession>>),
}

/// Closes the outbox when the answer is done, so a handler still sending
/// (from a task of its own) learns that nobody reads.
struct CloseOnDrop(Arc<Outbox>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

type Work = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Box<RawValue>, ErrorObject>> + Send>>;

/// Answers one request.
pub(crate) async fn answer(
    state: &Arc<AppState>,
    admitted: Admitted,
    answering: Answering,
    session: Arc<Session>,
    accepts: Accepts,
    extra_headers: Vec<(HeaderName, HeaderValue)>,
    principal: Option<Principal>,
) -> HttpResponse {
    let id = admitted.id().clone();
    let live = match &answering {
        Answering::Handshake(live) => live.clone(),
        Answering::Stateless => None,
    };
    // A handshake-era request runs in its session's exchange until its answer
    // is done, however that happens (the guard leaves with the answer, or
    // with the stream that carries it): its id is taken meanwhile, and
    // `notifications/cancelled` or the session's end reaches its token.
    // The server's admission bounds how many run at once; a session adds no
    // bound of its own.
    let (guard, cancel) = match &live {
        Some(live) => match live.exchange.in_flight.begin(&id, usize::MAX) {
            Ok(guard) => {
                let cancel = guard.token().clone();
                (Some(guard), cancel)
            }
            Err(refused) => {
                // Said as a session's duplicate: the session is the scope of ids here.
                let error = if refused.code == ErrorCode::INVALID_REQUEST {
                    ErrorObject::invalid_request(format!("request id {id} is already in flight in this session"))
                } else {
                    refused
                };
                return reply::error(StatusCode::OK, Some(id), error);
            }
        },
        None => (None, CancellationToken::new()),
    };
    // Without a session, the call is found by its principal and id when
    // the client cancels it (`sessionless.rs`).
    let running = matches!(answering, Answering::Handshake(None)).then(|| {
        let owner = principal.as_ref().map(crate::auth::session_owner);
        state.sessionless.begin(owner, id.clone(), cancel.clone())
    });
    let outbox = Arc::new(Outbox::new(state.config.stream_buffer));
    let closer = CloseOnDrop(outbox.clone());
    let call = CallContext {
        session,
        channel: Arc::new(RequestChannel {
            tx: outbox.clone(),
            live: live.clone(),
        }),
        cancel: cancel.clone(),
        principal,
        session_id: live.as_ref().map(|l| l.id.clone()),
    };
    let server = state.server.clone();
    let mut work: Work = Box::pin(async move {
        let _running = running;
        server.answer(admitted, call).await
    });

    // Wait for the handler's first message or its answer, whichever comes
    // first; only then is it known whether the answer is JSON (with the status
    // an error needs) or a stream.
    let stream_wanted = accepts.sse && (state.config.response_mode == ResponseMode::Sse || !accepts.json);
    // Most handlers finish on their first poll: poll the work alone first,
    // so the usual request never registers a wait on its empty outbox.
    let mut finished = match std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
        Poll::Ready(outcome) => Some(outcome),
        Poll::Pending => None,
    };
    let first = loop {
        if let Some(outcome) = finished.take() {
            if stream_wanted && outcome.is_ok() {
                // A finished answer, streamed because the client asked for streams.
                work = Box::pin(std::future::ready(outcome));
                break None;
            }
            drop(guard);
            return json_answer(id, outcome, &answering, extra_headers);
        }
        tokio::select! {
            biased;
            message = outbox.recv() => {
                if accepts.sse {
                    break Some(message);
                }
                // A client that takes only JSON cannot see notifications.
            }
            outcome = &mut work => finished = Some(outcome),
        }
    };
    match answering {
        Answering::Stateless => stream_stateless(state, id, work, closer, first, cancel).await,
        Answering::Handshake(Some(live)) => {
            stream_handshake(state, live, id, work, closer, first, guard, extra_headers).await
        }
        Answering::Handshake(None) => {
            // Without a session there is nothing to resume: stream like 2026-07-28,
            // but a dropped stream does not cancel.
            let mut response = stream_stateless(state, id, work, closer, first, CancellationToken::new()).await;
            response.headers_mut().extend(extra_headers);
            response
        }
    }
}

fn json_answer(
    id: RequestId,
    outcome: Result<Box<RawValue>, ErrorObject>,
    answering: &Answering,
    extra_headers: Vec<(HeaderName, HeaderValue)>,
) -> HttpResponse {
    let mut response = match outcome {
        Ok(result) => reply::message(StatusCode::OK, &Message::Response(RpcResponse { id, result })),
        Err(error) if error.code == ErrorCode::OVERLOADED => reply::overloaded(Some(id), error),
        Err(error) if toolport_server::state::is_state_unavailable(&error) => reply::state_unavailable(Some(id), error),
        Err(error) => {
            let status = match answering {
                Answering::Stateless => reply::stateless_status(error.code),
                Answering::Handshake(_) => StatusCode::OK,
            };
            reply::error(status, Some(id), error)
        }
    };
    if !extra_headers.is_empty() {
        response.headers_mut().extend(extra_headers);
    }
    response
}

fn final_message(id: RequestId, outcome: Result<Box<RawValue>, ErrorObject>) -> Message {
    match outcome {
        Ok(result) => Message::Response(RpcResponse { id, result }),
        Err(error) => Message::Error(ErrorResponse::new(Some(id), error)),
    }
}

fn sse_response(body: SseBody) -> HttpResponse {
    let mut response = Response::new(McpBody::Sse(Box::new(body)));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Tell nginx and friends not to buffer the stream.
    headers.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

/// A 2026-07-28 stream: no ids, no resumption; the client closing it
/// cancels the request.
async fn stream_stateless(
    state: &Arc<AppState>,
    id: RequestId,
    mut work: Work,
    outbox: CloseOnDrop,
    first: Option<Message>,
    cancel: CancellationToken,
) -> HttpResponse {
    let (body_tx, body_rx) = mpsc::channel(state.config.stream_buffer);
    let frame = |m: &Message| sse::event(None, None, &encode(m));
    if let Some(first) = &first {
        let _ = body_tx.try_send(frame(first));
    }
    // An answer that is already there is framed here, without a task
    // unless its messages do not fit the stream's buffer at once.
    if let Poll::Ready(outcome) = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
        let mut rest: Vec<_> = std::iter::from_fn(|| outbox.0.try_recv()).map(|m| frame(&m)).collect();
        rest.push(frame(&final_message(id, outcome)));
        if body_tx.capacity() >= rest.len() {
            for event in rest {
                let _ = body_tx.try_send(event);
            }
        } else {
            tokio::spawn(async move {
                for event in rest {
                    if body_tx.send(event).await.is_err() {
                        break;
                    }
                }
            });
        }
        return sse_response(SseBody::new(body_rx, state.config.keep_alive));
    }
    tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                message = outbox.0.recv() => match body_tx.try_send(frame(&message)) {
                    Ok(()) => {}
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        // A reader this far behind is cut off, never buffered without bound.
                        crate::live::disconnected("slow_consumer");
                        tracing::warn!("disconnected a 2026-07-28 stream whose reader does not keep up; its request is cancelled");
                        break;
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => break,
                },
                outcome = &mut work => {
                    // Anything sent before the answer goes first.
                    while let Some(message) = outbox.0.try_recv() {
                        let _ = body_tx.send(frame(&message)).await;
                    }
                    let _ = body_tx.send(frame(&final_message(id, outcome))).await;
                    return;
                }
                _ = body_tx.closed() => break,
            }
        }
        // The client closed the stream: that is the cancellation.
        cancel.cancel();
    });
    sse_response(SseBody::new(body_rx, state.config.keep_alive))
}

/// A handshake-era stream: a priming event with an id and a retry hint, then
/// every message recorded for resumption; the work goes on if the client drops.
#[allow(clippy::too_many_arguments)]
async fn stream_handshake(
    state: &Arc<AppState>,
    live: Arc<LiveSession>,
    id: RequestId,
    mut work: Work,
    outbox: CloseOnDrop,
    first: Option<Message>,
    guard: Option<InFlightGuard>,
    extra_headers: Vec<(HeaderName, HeaderValue)>,
) -> HttpResponse {
    let (body_tx, body_rx) = mpsc::channel(state.config.stream_buffer);
    let (stream_id, stream) = live.open_stream(body_tx.clone());
    let priming = sse::event(Some(&event_id(stream_id, 0)), Some(state.config.sse_retry), b"");
    let _ = body_tx.try_send(priming);
    drop(body_tx);
    // Recorded before the response goes out, so a client that drops the
    // stream at once resumes it from the priming event's id without loss.
    if let Some(first) = &first {
        live.emit(stream_id, &stream, first).await;
    }
    let mut response = sse_response(SseBody::new(body_rx, state.config.keep_alive));
    response.headers_mut().extend(extra_headers);
    // An answer that is already there (a handler that finished at once,
    // streamed because the client takes only streams) is recorded here: no
    // task, no orphan timer.
    if let Poll::Ready(outcome) = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
        while let Some(message) = outbox.0.try_recv() {
            live.emit(stream_id, &stream, &message).await;
        }
        live.emit(stream_id, &stream, &final_message(id, outcome)).await;
        live.finish(stream_id, &stream).await;
        drop(guard);
        return response;
    }
    let grace = state.config.resume_grace;
    tokio::spawn(async move {
        let _guard = guard;
        // A client that vanished (no reader, no resumption within the grace
        // period) gets its work cancelled and the session's resources back.
        let mut check = tokio::time::interval(grace.div_f64(4.0).max(std::time::Duration::from_millis(10)));
        let mut orphaned_since: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                biased;
                message = outbox.0.recv() => live.emit(stream_id, &stream, &message).await,
                _ = check.tick() => {
                    if live.has_reader(&stream) || live.read_elsewhere(stream_id).await {
                        orphaned_since = None;
                    } else if orphaned_since.get_or_insert_with(tokio::time::Instant::now).elapsed() >= grace {
                        crate::live::disconnected("client_gone");
                        tracing::info!(session = %live.id, "cancelled a request whose client went away and did not resume");
                        live.finish(stream_id, &stream).await;
                        return;
                    }
                }
                outcome = &mut work => {
                    while let Some(message) = outbox.0.try_recv() {
                        live.emit(stream_id, &stream, &message).await;
                    }
                    live.emit(stream_id, &stream, &final_message(id, outcome)).await;
                    live.finish(stream_id, &stream).await;
                    return;
                }
                _ = live.closed.cancelled() => return,
            }
        }
    });
    response
}
