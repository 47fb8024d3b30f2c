//! The pub/sub connection: one RESP3 connection per replica that
//! subscribes once to each channel someone here listens on, and hands each
//! message to the local subscribers of its channel. The connection manager
//! reconnects and resubscribes on its own; a keeper pings it every second,
//! so that a lost connection is noticed and re-made even while nobody
//! subscribes, and counts each time it came back ([`Hub::reconnected`]):
//! messages sent meanwhile are lost, which the bus makes up for.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use redis::aio::ConnectionManager;
use redis::{Client, IntoConnectionInfo, ProtocolVersion, PushInfo, PushKind, Value};
use tokio::sync::{mpsc, watch};
use toolport_server::state::{RELAY_BUFFER, StateError, offer};

use crate::conn::{Connection, manager_config, unavailable};

/// How often the keeper pings the pub/sub connection.
const KEEPER_PERIOD: Duration = Duration::from_secs(1);

type Subscribers = HashMap<Vec<u8>, Vec<(u64, mpsc::Sender<Bytes>)>>;

pub(crate) struct Hub {
    manager: ConnectionManager,
    timeout: Duration,
    /// Local subscribers by channel; read by the push handler.
    topics: Arc<Mutex<Subscribers>>,
    /// The channels subscribed at Redis. Held across SUBSCRIBE and
    /// UNSUBSCRIBE, so they reach Redis in the order they were decided.
    subscribed: tokio::sync::Mutex<HashSet<Vec<u8>>>,
    next_id: AtomicU64,
    /// Set when the connection drops; the keeper clears it once it is back.
    lost: Arc<AtomicBool>,
    /// Counts the times the connection came back after it was lost.
    reconnected: watch::Sender<u64>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").finish_non_exhaustive()
    }
}

fn dispatch(topics: &Mutex<Subscribers>, lost: &AtomicBool, push: PushInfo) {
    if push.kind == PushKind::Disconnection {
        lost.store(true, Ordering::SeqCst);
        return;
    }
    if push.kind != PushKind::Message {
        return;
    }
    let mut data = push.data.into_iter();
    let (Some(Value::BulkString(channel)), Some(Value::BulkString(payload))) = (data.next(), data.next()) else {
        return;
    };
    let topics = topics.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(subscribers) = topics.get(&channel) {
        let topic = String::from_utf8_lossy(&channel);
        let payload = Bytes::from(payload);
        for (_, tx) in subscribers {
            offer(&topic, tx, payload.clone());
        }
    }
}

impl Hub {
    pub(crate) fn start(conn: &Connection, url: &str) -> Result<Arc<Self>, StateError> {
        let info = url
            .into_connection_info()
            .map_err(|e| StateError::Unavailable(format!("not a Redis URL: {e}")))?;
        let settings = info.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
        let client = Client::open(info.set_redis_settings(settings)).map_err(unavailable)?;
        let topics: Arc<Mutex<Subscribers>> = Arc::default();
        let lost = Arc::new(AtomicBool::new(false));
        let handler = {
            let (topics, lost) = (topics.clone(), lost.clone());
            move |push: PushInfo| {
                dispatch(&topics, &lost, push);
                Ok::<(), std::convert::Infallible>(())
            }
        };
        let config = manager_config(&conn.options)
            .set_push_sender(handler)
            .set_automatic_resubscription();
        let manager = ConnectionManager::new_lazy_with_config(client, config).map_err(unavailable)?;
        let hub = Arc::new(Hub {
            manager,
            timeout: conn.options.timeout,
            topics,
            subscribed: tokio::sync::Mutex::default(),
            next_id: AtomicU64::new(0),
            lost,
            reconnected: watch::channel(0).0,
        });
        tokio::spawn(keep(Arc::downgrade(&hub)));
        Ok(hub)
    }

    /// Fires each time the connection came back after it was lost.
    pub(crate) fn reconnected(&self) -> watch::Receiver<u64> {
        self.reconnected.subscribe()
    }

    async fn bounded<T>(
        &self,
        call: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StateError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(result) => result.map_err(unavailable),
            Err(_) => Err(StateError::Unavailable(format!(
                "redis pub/sub: no answer within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }

    pub(crate) async fn ping(&self) -> Result<(), StateError> {
        let mut manager = self.manager.clone();
        let _: Value = self
            .bounded(async move { redis::cmd("PING").query_async(&mut manager).await })
            .await?;
        Ok(())
    }

    /// Subscribes to `channel`: in place at Redis when this returns.
    pub(crate) async fn subscribe(self: &Arc<Self>, channel: &str) -> Result<HubSubscription, StateError> {
        self.subscribe_with(channel, RELAY_BUFFER).await
    }

    /// Subscribes with a buffer of `capacity` messages.
    pub(crate) async fn subscribe_with(
        self: &Arc<Self>,
        channel: &str,
        capacity: usize,
    ) -> Result<HubSubscription, StateError> {
        let key = channel.as_bytes().to_vec();
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut subscribed = self.subscribed.lock().await;
        self.lock().entry(key.clone()).or_default().push((id, tx));
        let guard = HubGuard {
            hub: Arc::downgrade(self),
            channel: key.clone(),
            id,
        };
        if !subscribed.contains(&key) {
            let mut manager = self.manager.clone();
            let name = key.clone();
            // On failure the guard drops here and takes the subscriber away.
            self.bounded(async move { manager.subscribe(name).await }).await?;
            subscribed.insert(key);
        }
        Ok(HubSubscription { messages: rx, guard })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.topics.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Unsubscribes at Redis from a channel nobody here listens on any more.
    async fn release(&self, channel: Vec<u8>) {
        let mut subscribed = self.subscribed.lock().await;
        if self.lock().contains_key(&channel) || !subscribed.contains(&channel) {
            return;
        }
        let mut manager = self.manager.clone();
        let name = channel.clone();
        match self.bounded(async move { manager.unsubscribe(name).await }).await {
            Ok(()) => {
                subscribed.remove(&channel);
            }
            // Still subscribed at Redis: the messages find nobody here, and
            // the next subscriber reuses the subscription.
            Err(e) => tracing::debug!(error = %e, "a pub/sub channel was not unsubscribed"),
        }
    }
}

/// Pings the pub/sub connection every second while the hub lives: a lost
/// connection is re-made (and resubscribed) even when nothing else uses it.
async fn keep(hub: Weak<Hub>) {
    let mut ticker = tokio::time::interval(KEEPER_PERIOD);
    let mut up = true;
    loop {
        ticker.tick().await;
        let Some(hub) = hub.upgrade() else { return };
        // A drop noticed since the last round counts even if the manager
        // has already reconnected: messages may have been lost meanwhile.
        let dropped = hub.lost.swap(false, Ordering::SeqCst);
        match hub.ping().await {
            Ok(()) if !up || dropped => {
                up = true;
                tracing::info!("the pub/sub connection to the state store is back");
                hub.reconnected.send_modify(|n| *n += 1);
            }
            Ok(()) => {}
            Err(e) => {
                if up {
                    tracing::warn!(error = %e, "the pub/sub connection to the state store is down");
                }
                up = false;
            }
        }
    }
}

/// One local subscription to a channel.
#[derive(Debug)]
pub(crate) struct HubSubscription {
    pub(crate) messages: mpsc::Receiver<Bytes>,
    pub(crate) guard: HubGuard,
}

/// Takes the subscriber away when dropped, and the Redis subscription with
/// the last one.
#[derive(Debug)]
pub(crate) struct HubGuard {
    hub: Weak<Hub>,
    channel: Vec<u8>,
    id: u64,
}

impl Drop for HubGuard {
    fn drop(&mut self) {
        let Some(hub) = self.hub.upgrade() else { return };
        let last = {
            let mut topics = hub.lock();
            let Some(subscribers) = topics.get_mut(&self.channel) else {
                return;
            };
            subscribers.retain(|(id, _)| *id != self.id);
            let last = subscribers.is_empty();
            if last {
                topics.remove(&self.channel);
            }
            last
        };
        if last && let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let channel = std::mem::take(&mut self.channel);
            runtime.spawn(async move { hub.release(channel).await });
        }
    }
}
