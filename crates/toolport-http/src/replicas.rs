//! What crosses between replicas that serve one handshake-era session,
//! through the [`Relay`]:
//!
//! - **Answers and cancellations.** The client's response to our request,
//!   or its `notifications/cancelled`, may reach a replica that is not the
//!   one running the request. There the exchange says `NotHere`, and the
//!   message is sent on the session's topic, to which every replica serving
//!   the session subscribes; the one whose exchange knows the id takes it.
//!   Our request ids start at a random point per replica, so an answer never
//!   matches another replica's request.
//! - **Streams resumed elsewhere.** A client whose SSE answer was cut (a
//!   proxy, a draining replica) resumes with `Last-Event-ID` wherever the
//!   load balancer sends it. A replica that does not run the stream replays
//!   it from the shared event log and follows the log: the running replica
//!   says on the stream's topic that it recorded an event while no reader
//!   is attached there, and the follower also looks every
//!   [`FOLLOW_POLL`], so nothing is lost if that word is. Every event is sent
//!   once, in the log's order. The running replica sees the follower
//!   subscribed to the topic and does not cancel the request as abandoned.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use toolport_protocol::jsonrpc::{self, Frame, Message};
use toolport_rpc::exchange::Delivery;
use toolport_server::state::{Relay, StateError};

use crate::live::{AttachError, LiveSession, event_id};
use crate::sse;
use crate::store::EventLog;
use crate::topics::stream_topic;

/// How often a follower of a stream another replica writes reads the log,
/// besides when it is told of new events.
pub(crate) const FOLLOW_POLL: Duration = Duration::from_millis(100);

/// How long a request waits for its session's subscription to the relay
/// when the session has just gone live here.
const SUBSCRIBE_WAIT: Duration = Duration::from_secs(1);

fn session_topic(session: &str) -> String {
    format!("session:{session}")
}

/// Hands an answer or a cancellation to the request it is for: here, or
/// (through the relay) on the replica that runs it. `Err` when the relay
/// could not take it: the client must be told to send it again.
pub(crate) async fn deliver(live: &LiveSession, message: Message) -> Result<(), StateError> {
    let Some(relay) = &live.relay else {
        if let Delivery::NotHere(id) = live.exchange.deliver(message) {
            tracing::debug!(session = %live.id, %id, "nothing here for this answer or cancellation");
        }
        return Ok(());
    };
    // Encoded before delivery consumes it, for the relay if it is not for here.
    let encoded = Bytes::from(jsonrpc::encode(&message));
    match live.exchange.deliver(message) {
        Delivery::NotHere(id) => {
            let receivers = relay.send(&session_topic(&live.id), encoded).await?;
            tracing::debug!(session = %live.id, %id, receivers, "answer or cancellation relayed to the other replicas");
        }
        Delivery::Delivered | Delivery::Notification(_) | Delivery::Ignored => {}
    }
    Ok(())
}

/// Takes the answers and cancellations other replicas relay for this
/// session while it is live here. `subscribed` turns true once the
/// subscription is in place (or could not be made; then it is tried again).
pub(crate) async fn receive_relayed(relay: Arc<dyn Relay>, live: Arc<LiveSession>) {
    let subscribed = &live.subscribed;
    let topic = session_topic(&live.id);
    let mut retry = tokio::time::interval(Duration::from_secs(1));
    loop {
        let subscription = tokio::select! {
            subscription = relay.subscribe(&topic) => subscription,
            _ = live.closed.cancelled() => return,
        };
        let mut subscription = match subscription {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::warn!(session = %live.id, error = %e, "not subscribed to answers relayed by other replicas; retrying");
                subscribed.send_replace(true);
                tokio::select! {
                    _ = retry.tick() => continue,
                    _ = live.closed.cancelled() => return,
                }
            }
        };
        subscribed.send_replace(true);
        loop {
            let message = tokio::select! {
                message = subscription.next() => message,
                _ = live.closed.cancelled() => return,
            };
            let Some(message) = message else { break };
            match jsonrpc::decode(&message) {
                // Not for a request here: another replica's, or finished.
                Ok(Frame::Single(message)) => {
                    let _ = live.exchange.deliver(message);
                }
                _ => tracing::warn!(session = %live.id, "an unreadable relayed message was skipped"),
            }
        }
    }
}

/// Waits (briefly) until a session that just went live here hears what
/// other replicas relay to it.
pub(crate) async fn subscribed(mut ready: watch::Receiver<bool>) {
    let _ = tokio::time::timeout(SUBSCRIBE_WAIT, ready.wait_for(|ready| *ready)).await;
}

fn is_answer(data: &[u8]) -> bool {
    matches!(
        jsonrpc::decode(data),
        Ok(Frame::Single(Message::Response(_) | Message::Error(_)))
    )
}

/// Sends events to a follower's reader; `Some(last)` to go on, `None` when
/// the stream is over (its answer was sent, or the reader left).
async fn forward(tx: &mpsc::Sender<Bytes>, stream: u64, mut last: u64, events: Vec<(u64, Bytes)>) -> Option<u64> {
    for (seq, data) in events {
        if tx
            .send(sse::event(Some(&event_id(stream, seq)), None, &data))
            .await
            .is_err()
        {
            return None;
        }
        last = seq;
        if is_answer(&data) {
            return None;
        }
    }
    Some(last)
}

/// Attaches a reader to a stream that another replica runs: the events
/// after `after` from the log, then whatever the log gets, until the answer.
pub(crate) async fn follow(
    live: &LiveSession,
    relay: &Arc<dyn Relay>,
    stream: u64,
    after: u64,
    tx: mpsc::Sender<Bytes>,
) -> Result<(), AttachError> {
    // Subscribed before the replay, so no announcement falls between.
    let mut announced = match relay.subscribe(&stream_topic(&live.id, stream)).await {
        Ok(subscription) => Some(subscription),
        Err(e) => {
            tracing::warn!(session = %live.id, stream, error = %e, "following a stream by reading the log only");
            None
        }
    };
    let events: Arc<dyn EventLog> = live.events.clone();
    let replay = match events.after(&live.id, stream, after).await {
        Ok(Some(replay)) => replay,
        Ok(None) => return Err(AttachError::Unknown),
        Err(e) => {
            tracing::warn!(session = %live.id, stream, error = %e, "events not replayed");
            return Err(AttachError::Unknown);
        }
    };
    let Some(mut last) = forward(&tx, stream, after, replay).await else {
        return Ok(());
    };
    let (session, closed) = (live.id.clone(), live.closed.clone());
    tokio::spawn(async move {
        let mut poll = tokio::time::interval(FOLLOW_POLL);
        loop {
            tokio::select! {
                _ = poll.tick() => {}
                word = async {
                    match announced.as_mut() {
                        Some(subscription) => subscription.next().await,
                        None => std::future::pending().await,
                    }
                } => if word.is_none() { announced = None },
                _ = tx.closed() => return,
                _ = closed.cancelled() => return,
            }
            match events.after(&session, stream, last).await {
                Ok(Some(new)) => match forward(&tx, stream, last, new).await {
                    Some(now) => last = now,
                    None => return,
                },
                // The events after `last` are gone: ending the reader's
                // stream makes its client resume, and hear that it cannot.
                Ok(None) => return,
                Err(e) => tracing::debug!(session, stream, error = %e, "the followed stream's log did not answer"),
            }
        }
    });
    Ok(())
}
