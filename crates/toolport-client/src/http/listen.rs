//! The streams that carry what the server sends on its own: the handshake
//! era's GET stream and 2026-07-28's `subscriptions/listen`.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::jsonrpc::{self, Message, Request};

use crate::error::ClientError;

use super::*;

impl HttpWire {
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
                        let headers = exchange.headers.clone();
                        let body = exchange.bytes(ERROR_BODY_LIMIT).await.unwrap_or_default();
                        return Err(error_from_body(status, &headers, &body));
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
}
