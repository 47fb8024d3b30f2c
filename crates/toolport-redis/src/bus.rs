//! The event bus over one pub/sub channel.
//!
//! Each replica's bus delivers its own events to its own subscribers
//! directly (so they arrive in order, and even while Redis is down) and
//! publishes them, tagged with its origin, for the other replicas, which
//! skip their own. `publish_once` asks Redis first (`SET NX` on the
//! (event, version), in the same script as the `PUBLISH`): only the first
//! replica to announce a change delivers it, to everyone. While Redis is
//! down each replica delivers its announcements to its own subscribers: as
//! every replica notices the change itself, each client still hears of it
//! once. After the pub/sub connection was lost, subscribers are told that
//! every list changed, since events may have been missed.

use std::sync::{Arc, LazyLock};

use redis::Script;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, mpsc};
use toolport_server::ServerEvent;
use toolport_server::state::{EventBus, EventSubscription, ONCE_WINDOW, once_key};

use crate::conn::{Connection, hex, millis, random_hex};
use crate::hub::Hub;

/// Events queued for publishing at most; beyond, an event reaches this
/// replica's subscribers but not the others' (and a warning is logged).
const QUEUE: usize = 4096;

/// Publishes queued together at most, in one pipeline.
const BATCH: usize = 128;

/// KEYS: the announcement's key, the channel. ARGV: payload, window ms.
static ONCE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[2]) then
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0",
    )
});

/// An event as it travels: who published it, and what.
#[derive(Serialize, Deserialize)]
struct Envelope {
    #[serde(rename = "o")]
    origin: String,
    #[serde(rename = "e")]
    event: ServerEvent,
}

enum Outgoing {
    Publish(ServerEvent),
    Once(ServerEvent, String),
}

#[derive(Debug)]
pub(crate) struct RedisEventBus {
    local: broadcast::Sender<ServerEvent>,
    queue: mpsc::Sender<Outgoing>,
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Outgoing")
    }
}

impl RedisEventBus {
    /// Starts the bus: its publisher, and its subscription to the channel,
    /// which is in place when this returns unless Redis is unreachable (then
    /// it is made in the background as soon as Redis answers).
    pub(crate) async fn start(conn: Connection, hub: &Arc<Hub>, capacity: usize) -> Self {
        let local = broadcast::channel(capacity.max(1)).0;
        let (queue, outgoing) = mpsc::channel(QUEUE);
        let origin = random_hex(8);
        let channel = conn.key(&["bus"]);
        let subscription = match hub.subscribe_with(&channel, QUEUE).await {
            Ok(subscription) => Some(subscription),
            Err(e) => {
                tracing::warn!(error = %e, "the event bus is not subscribed yet; retrying in the background");
                None
            }
        };
        tokio::spawn(receive(
            hub.clone(),
            channel.clone(),
            subscription,
            origin.clone(),
            local.clone(),
        ));
        tokio::spawn(publish(conn, channel, origin, local.clone(), outgoing));
        RedisEventBus { local, queue }
    }

    fn enqueue(&self, outgoing: Outgoing) {
        if let Err(e) = self.queue.try_send(outgoing) {
            let outgoing = match e {
                mpsc::error::TrySendError::Full(o) | mpsc::error::TrySendError::Closed(o) => o,
            };
            tracing::warn!("the event bus's queue is full; an event reaches only this replica");
            let event = match outgoing {
                Outgoing::Publish(event) | Outgoing::Once(event, _) => event,
            };
            let _ = self.local.send(event);
        }
    }
}

impl EventBus for RedisEventBus {
    fn publish(&self, event: ServerEvent) {
        self.enqueue(Outgoing::Publish(event));
    }

    fn publish_once(&self, event: ServerEvent, version: &str) {
        self.enqueue(Outgoing::Once(event, version.to_owned()));
    }

    fn subscribe(&self) -> EventSubscription {
        EventSubscription::new(self.local.subscribe())
    }
}

fn envelope(origin: &str, event: &ServerEvent) -> Vec<u8> {
    serde_json::to_vec(&Envelope {
        origin: origin.to_owned(),
        event: event.clone(),
    })
    .unwrap_or_default()
}

/// Publishes queued events in order: each batch of plain events is
/// delivered here at once and sent to Redis in one pipeline; an
/// announcement is delivered (here and by Redis) only if it is the first.
async fn publish(
    conn: Connection,
    channel: String,
    origin: String,
    local: broadcast::Sender<ServerEvent>,
    mut outgoing: mpsc::Receiver<Outgoing>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while outgoing.recv_many(&mut batch, BATCH).await > 0 {
        let mut plain = redis::pipe();
        let mut queued = 0;
        for item in batch.drain(..) {
            match item {
                Outgoing::Publish(event) => {
                    let _ = local.send(event.clone());
                    plain
                        .cmd("PUBLISH")
                        .arg(&channel)
                        .arg(envelope(&origin, &event))
                        .ignore();
                    queued += 1;
                }
                Outgoing::Once(event, version) => {
                    if queued > 0 {
                        send_pipeline(&conn, &plain).await;
                        plain = redis::pipe();
                        queued = 0;
                    }
                    announce(&conn, &channel, &origin, &local, event, &version).await;
                }
            }
        }
        if queued > 0 {
            send_pipeline(&conn, &plain).await;
        }
    }
}

async fn send_pipeline(conn: &Connection, pipeline: &redis::Pipeline) {
    let mut manager = conn.manager.clone();
    let sent: Result<(), _> = conn
        .bounded(async move { pipeline.query_async(&mut manager).await })
        .await;
    if let Err(e) = sent {
        tracing::warn!(error = %e, "events reached only this replica's subscribers");
    }
}

async fn announce(
    conn: &Connection,
    channel: &str,
    origin: &str,
    local: &broadcast::Sender<ServerEvent>,
    event: ServerEvent,
    version: &str,
) {
    let digest = Sha256::digest(once_key(&event, version).as_bytes());
    let key = conn.key(&["once", &hex(&digest)]);
    let payload = envelope(origin, &event);
    let window = millis(ONCE_WINDOW);
    let first: Result<i64, _> = conn
        .script(&ONCE, &[&key, channel], &[&payload, window.as_bytes()])
        .await;
    match first {
        Ok(1) => {
            let _ = local.send(event);
        }
        Ok(_) => {}
        Err(e) => {
            // Every replica notices the change itself: telling this one's
            // subscribers still tells each client once.
            tracing::warn!(error = %e, "a change was announced to this replica's subscribers only");
            let _ = local.send(event);
        }
    }
}

/// Hands the other replicas' events to the subscribers here; after a lost
/// connection, tells them every list changed.
async fn receive(
    hub: Arc<Hub>,
    channel: String,
    mut subscription: Option<crate::hub::HubSubscription>,
    origin: String,
    local: broadcast::Sender<ServerEvent>,
) {
    let mut reconnected = hub.reconnected();
    let mut retry = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        let Some(current) = subscription.as_mut() else {
            retry.tick().await;
            if let Ok(made) = hub.subscribe_with(&channel, QUEUE).await {
                subscription = Some(made);
                // Whatever happened before the subscription was missed.
                for event in ServerEvent::all_lists() {
                    let _ = local.send(event);
                }
            }
            continue;
        };
        tokio::select! {
            message = current.messages.recv() => {
                let Some(message) = message else { return };
                match serde_json::from_slice::<Envelope>(&message) {
                    Ok(envelope) if envelope.origin == origin => {}
                    Ok(envelope) => {
                        let _ = local.send(envelope.event);
                    }
                    Err(e) => tracing::warn!(error = %e, "an unreadable event on the bus was skipped"),
                }
            }
            changed = reconnected.changed() => {
                if changed.is_err() {
                    return;
                }
                for event in ServerEvent::all_lists() {
                    let _ = local.send(event);
                }
            }
        }
    }
}
