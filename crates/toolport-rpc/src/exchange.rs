//! The in-flight engine: both directions of one conversation's requests.
//!
//! - Theirs ([`InFlightRequests`]): the requests the other side sent that are
//!   still running, each id unique among the outstanding ones, each with the
//!   token that cancels it.
//! - Ours ([`PendingRequests`]): the requests we sent, waiting for answers.
//!
//! [`Exchange::deliver`] routes whatever comes back that is not a new
//! request: a response or error to the waiter of our request, a
//! `notifications/cancelled` to the token of theirs. The stdio Peer engine
//! and Streamable HTTP's sessions both keep one `Exchange` per conversation.
//!
//! When several replicas serve one session, a response or a cancellation can
//! arrive at a replica that is not running the request: `deliver` then says
//! [`Delivery::NotHere`] instead of dropping it, and the caller forwards it to
//! the replica that is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{ErrorResponse, Message, Notification, RequestId, Response};
use toolport_protocol::progress::{CANCELLED, CancelledNotificationParams};
use toolport_protocol::{ErrorCode, ErrorObject};

use crate::pending::PendingRequests;

/// What became of a message handed to [`Exchange::deliver`].
#[derive(Debug, PartialEq)]
pub enum Delivery {
    /// It reached its waiter or its request.
    Delivered,
    /// No request of that id is waiting or running here: it finished, it was
    /// never ours, or it lives on another replica.
    NotHere(RequestId),
    /// A notification other than cancellation, for the caller to handle.
    Notification(Notification),
    /// Nothing to route: a malformed cancellation or an error without an id.
    Ignored,
}

/// The requests of the other side that are running here.
#[derive(Debug, Default)]
pub struct InFlightRequests {
    running: Mutex<HashMap<RequestId, CancellationToken>>,
}

impl InFlightRequests {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        // Every operation is a single insert, remove or lookup: a panic
        // cannot leave the map half-changed, so poison is ignored.
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a request as running, refusing an id already running
    /// (-32600) and more than `max` at once (-32010 with `retryAfterMs`).
    /// The request stays registered until the guard is dropped.
    pub fn begin(self: &Arc<Self>, id: &RequestId, max: usize) -> Result<InFlightGuard, ErrorObject> {
        let mut running = self.lock();
        if running.contains_key(id) {
            return Err(ErrorObject::invalid_request(format!(
                "request id {id} is already in flight; ids must be unique among outstanding requests"
            )));
        }
        if running.len() >= max {
            return Err(ErrorObject::new(
                ErrorCode::OVERLOADED,
                format!("too many requests in flight on this connection (limit {max}); retry when some have finished"),
            )
            .with_data(serde_json::json!({ "retryAfterMs": 100 })));
        }
        let token = CancellationToken::new();
        running.insert(id.clone(), token.clone());
        Ok(InFlightGuard {
            table: self.clone(),
            id: id.clone(),
            token,
        })
    }

    /// Cancels a running request.
    pub fn cancel(&self, id: &RequestId) -> Delivery {
        match self.lock().get(id) {
            Some(token) => {
                token.cancel();
                Delivery::Delivered
            }
            None => Delivery::NotHere(id.clone()),
        }
    }

    /// Cancels every running request (the conversation is over).
    pub fn cancel_all(&self) {
        for token in self.lock().values() {
            token.cancel();
        }
    }

    /// How many requests are running.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One running request: its cancellation token, and its place in the table
/// until it is dropped, however the request ends.
#[derive(Debug)]
pub struct InFlightGuard {
    table: Arc<InFlightRequests>,
    id: RequestId,
    token: CancellationToken,
}

impl InFlightGuard {
    /// Fires when the other side cancels the request.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.table.lock().remove(&self.id);
    }
}

/// Both directions of one conversation's requests.
#[derive(Debug, Default)]
pub struct Exchange {
    /// Ours, waiting for answers.
    pub pending: PendingRequests,
    /// Theirs, running.
    pub in_flight: Arc<InFlightRequests>,
}

impl Exchange {
    /// An exchange with nothing in flight either way.
    pub fn new() -> Self {
        Self::default()
    }

    /// An exchange whose own requests are numbered from `after + 1` (see
    /// [`PendingRequests::counting_after`]).
    pub fn counting_after(after: i64) -> Self {
        Exchange {
            pending: PendingRequests::counting_after(after),
            in_flight: Arc::default(),
        }
    }

    /// Routes a message that is not a new request: a response or an error
    /// to the waiter of our request, a cancellation to their running request;
    /// any other notification is handed back.
    pub fn deliver(&self, message: Message) -> Delivery {
        match message {
            Message::Response(Response { id, result }) => self.resolve(id, Ok(result)),
            Message::Error(ErrorResponse { id: Some(id), error }) => self.resolve(id, Err(error)),
            Message::Error(ErrorResponse { id: None, error }) => {
                tracing::warn!(%error, "the peer reported an error about a message it could not read");
                Delivery::Ignored
            }
            Message::Notification(notification) if notification.method == CANCELLED => self.cancel(&notification),
            Message::Notification(notification) => Delivery::Notification(notification),
            Message::Request(request) => {
                // Requests are begun, not delivered; a caller that hands one
                // over has a bug, and the request must not vanish silently.
                tracing::error!(id = %request.id, "a request was handed to Exchange::deliver");
                Delivery::Ignored
            }
        }
    }

    fn resolve(&self, id: RequestId, outcome: crate::pending::Outcome) -> Delivery {
        if self.pending.resolve(&id, outcome) {
            Delivery::Delivered
        } else {
            tracing::debug!(%id, "no request of ours waits for this answer here");
            Delivery::NotHere(id)
        }
    }

    fn cancel(&self, notification: &Notification) -> Delivery {
        let params = notification
            .params
            .clone()
            .and_then(|p| serde_json::from_value::<CancelledNotificationParams>(p).ok());
        let Some(CancelledNotificationParams {
            request_id: Some(id),
            reason,
            ..
        }) = params
        else {
            tracing::debug!("ignored a malformed notifications/cancelled");
            return Delivery::Ignored;
        };
        // Unknown or finished ids are not an error: the request may have
        // completed while the notice was on its way.
        let delivery = self.in_flight.cancel(&id);
        if delivery == Delivery::Delivered {
            tracing::debug!(%id, reason = reason.as_deref().unwrap_or(""), "request cancelled by the peer");
        }
        delivery
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cancelled(id: i64) -> Message {
        Message::Notification(Notification::new(CANCELLED, Some(json!({"requestId": id}))))
    }

    #[test]
    fn running_requests_are_unique_bounded_and_leave_when_done() {
        let exchange = Exchange::new();
        let one = exchange.in_flight.begin(&RequestId::Number(1), 2).unwrap();
        let again = exchange.in_flight.begin(&RequestId::Number(1), 2).unwrap_err();
        assert_eq!(again.code, ErrorCode::INVALID_REQUEST);
        let _two = exchange.in_flight.begin(&RequestId::Number(2), 2).unwrap();
        let over = exchange.in_flight.begin(&RequestId::Number(3), 2).unwrap_err();
        assert_eq!(over.code, ErrorCode::OVERLOADED);
        assert_eq!(exchange.in_flight.len(), 2);
        drop(one);
        assert_eq!(exchange.in_flight.len(), 1);
        assert!(
            exchange.in_flight.begin(&RequestId::Number(1), 2).is_ok(),
            "a finished id is free again"
        );
    }

    #[test]
    fn cancellations_reach_the_running_request_or_say_where_they_did_not() {
        let exchange = Exchange::new();
        let running = exchange.in_flight.begin(&RequestId::Number(7), 10).unwrap();
        assert_eq!(exchange.deliver(cancelled(8)), Delivery::NotHere(RequestId::Number(8)));
        assert!(!running.token().is_cancelled());
        assert_eq!(exchange.deliver(cancelled(7)), Delivery::Delivered);
        assert!(running.token().is_cancelled());
        let malformed = Message::Notification(Notification::new(CANCELLED, Some(json!({"requestId": [1]}))));
        assert_eq!(exchange.deliver(malformed), Delivery::Ignored);
    }

    #[tokio::test]
    async fn answers_reach_their_waiter_once() {
        let exchange = Exchange::new();
        let (id, waiter) = exchange.pending.register();
        let answer = || {
            Message::Response(Response {
                id: id.clone(),
                result: serde_json::value::to_raw_value(&json!({"ok": true})).unwrap(),
            })
        };
        assert_eq!(exchange.deliver(answer()), Delivery::Delivered);
        assert_eq!(waiter.await.unwrap().unwrap().get(), r#"{"ok":true}"#);
        assert_eq!(
            exchange.deliver(answer()),
            Delivery::NotHere(id),
            "a second answer has nobody to reach"
        );
        let other = Notification::new("notifications/progress", None);
        assert_eq!(
            exchange.deliver(Message::Notification(other.clone())),
            Delivery::Notification(other)
        );
    }
}
