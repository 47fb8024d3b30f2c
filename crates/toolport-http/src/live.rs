//! The part of a handshake-era session that lives on this machine: its open
//! SSE streams, the requests it has in flight, and our requests to its client.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{Message, encode};
use toolport_rpc::exchange::Exchange;
use toolport_server::state::{Relay, new_stream_id};
use toolport_server::{Server, ServerEvent, Session};

use crate::store::EventLog;
use crate::{sse, topics};

/// The stream id of the standalone GET stream; POST streams have random ids
/// (so that no two replicas sharing an event log open the same stream).
pub(crate) const GET_STREAM: u64 = 0;

/// Finished POST streams a session keeps for resumption at most, however
/// recent: a session that makes thousands of calls a second must not keep
/// every answer it ever streamed.
const MAX_FINISHED_STREAMS: usize = 4096;

/// One SSE stream of a session: its events are recorded for resumption and
/// sent to whoever is reading it now, if anyone.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    /// Held from recording an event until it is sent, and by a reader
    /// attaching from its replay until it is attached. The event log numbers
    /// events as they are appended, so holding it across the append (an
    /// await, hence a tokio mutex) is what makes events reach the reader in
    /// the order of their numbers, and an attaching reader get each event
    /// once: in its replay, or live after it. Appending first and locking
    /// after would let two emitters swap their sends, and an attach in
    /// between replay an event that then arrives live a second time.
    order: tokio::sync::Mutex<()>,
    /// The reader, if any. Only ever held for a moment, never across an
    /// await, so ending a stream (`finish`, `leave`) never waits for a store.
    live: Mutex<Option<mpsc::Sender<Bytes>>>,
    finished: AtomicBool,
}

impl StreamState {
    fn reader(&self) -> std::sync::MutexGuard<'_, Option<mpsc::Sender<Bytes>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A handshake-era session on this machine.
#[derive(Debug)]
pub(crate) struct LiveSession {
    pub(crate) id: String,
    pub(crate) session: Arc<Session>,
    /// The client's requests running here and ours waiting for its answers.
    pub(crate) exchange: Exchange,
    streams: Mutex<HashMap<u64, Arc<StreamState>>>,
    /// Finished POST streams, oldest first, with when they finished: kept
    /// for `Last-Event-ID` resumption during `retention`, then forgotten.
    finished: Mutex<VecDeque<(Instant, u64)>>,
    retention: Duration,
    /// When a request last used the session on this machine: a replica
    /// lets go of a session it no longer serves (see [`LiveSession::leave`]).
    last_used: Mutex<tokio::time::Instant>,
    /// Fires when the session ends (DELETE, expiry, shutdown).
    pub(crate) closed: CancellationToken,
    pub(crate) events: Arc<dyn EventLog>,
    /// The other replicas, when several serve the session (see [`crate::replicas`]).
    pub(crate) relay: Option<Arc<dyn Relay>>,
    /// True once the session hears what other replicas relay to it.
    pub(crate) subscribed: watch::Sender<bool>,
}

/// Where a replica's own request ids start: at random below 2^52, so that
/// two replicas' ids for one session are far apart (and stay exact in a
/// JavaScript client's numbers).
fn random_id_base() -> i64 {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    i64::from(u32::from_le_bytes(bytes)) << 20
}

impl LiveSession {
    /// A session whose finished streams stay resumable for `retention`;
    /// with a relay, other replicas may serve it too.
    pub(crate) fn new(
        id: String,
        session: Arc<Session>,
        events: Arc<dyn EventLog>,
        retention: Duration,
        relay: Option<Arc<dyn Relay>>,
    ) -> Arc<Self> {
        let exchange = match relay {
            Some(_) => Exchange::counting_after(random_id_base()),
            None => Exchange::new(),
        };
        Arc::new(LiveSession {
            id,
            session,
            exchange,
            streams: Mutex::default(),
            finished: Mutex::default(),
            retention,
            closed: CancellationToken::new(),
            last_used: Mutex::new(tokio::time::Instant::now()),
            events,
            subscribed: watch::channel(relay.is_none()).0,
            relay,
        })
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<StreamState>>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a new POST stream read by `reader`.
    pub(crate) fn open_stream(&self, reader: mpsc::Sender<Bytes>) -> (u64, Arc<StreamState>) {
        let id = new_stream_id();
        let state = Arc::new(StreamState {
            live: Mutex::new(Some(reader)),
            ..StreamState::default()
        });
        self.streams().insert(id, state.clone());
        (id, state)
    }

    /// Whether this replica runs (or ran) the stream; another one may.
    pub(crate) fn has_stream(&self, id: u64) -> bool {
        id == GET_STREAM || self.streams().contains_key(&id)
    }

    fn stream(&self, id: u64) -> Option<Arc<StreamState>> {
        self.streams().get(&id).cloned()
    }

    fn get_stream(&self) -> Arc<StreamState> {
        self.streams().entry(GET_STREAM).or_default().clone()
    }

    /// Records an event of a stream and sends it to its reader, if any. A
    /// reader that cannot keep up is dropped; it may resume from its last id.
    /// An event the log could not record goes out without an id: the reader
    /// gets it, a resumption would not.
    pub(crate) async fn emit(&self, stream_id: u64, stream: &StreamState, message: &Message) {
        let data = Bytes::from(encode(message));
        let _order = stream.order.lock().await;
        let id = match self.events.append(&self.id, stream_id, data.clone()).await {
            Ok(seq) => Some(event_id(stream_id, seq)),
            Err(e) => {
                tracing::warn!(session = %self.id, stream = stream_id, error = %e, "event not recorded for resumption");
                None
            }
        };
        let read_here = {
            let mut live = stream.reader();
            if let Some(tx) = live.as_ref() {
                match tx.try_send(sse::event(id.as_deref(), None, &data)) {
                    Ok(()) => {}
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        disconnected("slow_consumer");
                        tracing::warn!(
                            session = %self.id,
                            stream = stream_id,
                            "disconnected an SSE reader that does not keep up; it may resume from its last event id"
                        );
                        *live = None;
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => {
                        tracing::debug!(session = %self.id, stream = stream_id, "stream reader gone");
                        *live = None;
                    }
                }
            }
            live.is_some()
        };
        // Nobody reads here: perhaps a replica the client resumed on does.
        if !read_here
            && id.is_some()
            && stream_id != GET_STREAM
            && let Some(relay) = &self.relay
        {
            topics::announce_event(relay.as_ref(), &self.id, stream_id).await;
        }
    }

    /// Whether a replica other than this one follows the stream (its
    /// client resumed there).
    pub(crate) async fn read_elsewhere(&self, stream_id: u64) -> bool {
        match &self.relay {
            Some(relay) => topics::followed_elsewhere(relay.as_ref(), &self.id, stream_id).await,
            None => false,
        }
    }

    /// Whether someone reads this stream now.
    pub(crate) fn has_reader(&self, stream: &StreamState) -> bool {
        stream.reader().as_ref().is_some_and(|tx| !tx.is_closed())
    }

    /// Ends a POST stream: its reader's body ends once drained. The stream
    /// stays resumable for the retention period (bounded in number); older
    /// finished streams and their events are forgotten here, so a long-lived
    /// session's memory does not grow with every call.
    pub(crate) async fn finish(&self, stream_id: u64, stream: &StreamState) {
        stream.finished.store(true, Ordering::SeqCst);
        *stream.reader() = None;
        for id in self.expire_finished(stream_id) {
            if let Err(e) = self.events.forget_stream(&self.id, id).await {
                tracing::warn!(session = %self.id, stream = id, error = %e, "finished stream not forgotten");
            }
        }
    }

    /// Notes a stream as finished and lets go of those past their retention
    /// (or beyond the cap); returns their ids, for the log to forget.
    fn expire_finished(&self, stream_id: u64) -> Vec<u64> {
        let now = Instant::now();
        let mut finished = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        finished.push_back((now, stream_id));
        let mut expired = Vec::new();
        while let Some(&(at, oldest)) = finished.front() {
            let too_many = finished.len() > MAX_FINISHED_STREAMS;
            if oldest == stream_id || !(too_many || now.duration_since(at) >= self.retention) {
                break;
            }
            finished.pop_front();
            expired.push(oldest);
        }
        drop(finished);
        let mut streams = self.streams();
        for id in &expired {
            streams.remove(id);
        }
        expired
    }

    /// Attaches a reader to a stream: the events after `after` first, then
    /// live ones. `Err` when resumption would lose events (or the stream is
    /// unknown), and 409 when a standalone stream already has a reader.
    pub(crate) async fn attach(&self, stream_id: u64, after: u64, tx: mpsc::Sender<Bytes>) -> Result<(), AttachError> {
        let stream = if stream_id == GET_STREAM {
            self.get_stream()
        } else {
            self.stream(stream_id).ok_or(AttachError::Unknown)?
        };
        // No event is recorded while the replay is read and sent (see `order`).
        let _order = stream.order.lock().await;
        if stream_id == GET_STREAM && after == 0 && stream.reader().as_ref().is_some_and(|tx| !tx.is_closed()) {
            return Err(AttachError::Busy);
        }
        let replay = if after == 0 && stream_id == GET_STREAM {
            Vec::new()
        } else {
            self.events
                .after(&self.id, stream_id, after)
                .await
                .unwrap_or_else(|e| {
                    tracing::warn!(session = %self.id, stream = stream_id, error = %e, "events not replayed");
                    None
                })
                .ok_or(AttachError::Unknown)?
        };
        for (seq, data) in replay {
            if tx
                .try_send(sse::event(Some(&event_id(stream_id, seq)), None, &data))
                .is_err()
            {
                return Err(AttachError::Unknown);
            }
        }
        // Checked under the reader's lock, which `finish` and `leave` take
        // after marking the stream finished or the session closed: either the
        // reader is not attached, or they take it away again.
        let mut live = stream.reader();
        if !stream.finished.load(Ordering::SeqCst) && !self.closed.is_cancelled() {
            *live = Some(tx);
        }
        Ok(())
    }

    /// A request uses the session on this machine.
    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = tokio::time::Instant::now();
    }

    /// How long no request used the session on this machine.
    pub(crate) fn idle_for(&self) -> Duration {
        self.last_used.lock().unwrap_or_else(|p| p.into_inner()).elapsed()
    }

    /// Ends the session: its streams close, its requests are cancelled and
    /// its events are forgotten.
    pub(crate) async fn close(&self) {
        self.leave();
        if let Err(e) = self.events.forget(&self.id).await {
            tracing::warn!(session = %self.id, error = %e, "session events not forgotten");
        }
    }

    /// Lets go of the session on this machine only: its streams here close
    /// and its requests here are cancelled, while its record and events stay
    /// for the replicas that serve it (or ended it) elsewhere. Our requests
    /// to its client fail (their waiters see the channel closed).
    pub(crate) fn leave(&self) {
        self.closed.cancel();
        self.exchange.in_flight.cancel_all();
        self.exchange.pending.close_all();
        for stream in self.streams().values() {
            *stream.reader() = None;
        }
    }

    /// Ends the standalone GET stream's response, if one is open: its client
    /// reopens it (on a replica that still serves) and resumes from its last
    /// event id. The session and its requests stay.
    pub(crate) fn end_get_stream(&self) {
        if let Some(stream) = self.streams().get(&GET_STREAM) {
            *stream.reader() = None;
        }
    }

    /// Ends every stream's response here, the answer streams of running
    /// requests too (the drain, when other replicas share the session): the
    /// clients resume with `Last-Event-ID` on a replica that stays, which
    /// follows what the requests still running here record.
    pub(crate) fn end_streams(&self) {
        for stream in self.streams().values() {
            *stream.reader() = None;
        }
    }

    /// Whether the standalone GET stream has a reader here.
    pub(crate) fn get_stream_read_here(&self) -> bool {
        self.streams()
            .get(&GET_STREAM)
            .is_some_and(|stream| self.has_reader(stream))
    }

    /// Server-initiated messages go on the standalone GET stream.
    pub(crate) async fn emit_on_get_stream(&self, message: &Message) {
        let stream = self.get_stream();
        self.emit(GET_STREAM, &stream, message).await;
    }
}

/// Why a reader could not attach to a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttachError {
    /// No such stream, or events after the given id are gone.
    Unknown,
    /// The standalone stream already has a reader.
    Busy,
}

/// Counts a stream cut off on our side, by reason.
pub(crate) fn disconnected(reason: &'static str) {
    metrics::counter!("toolport_stream_disconnects_total", "reason" => reason).increment(1);
}

/// Event ids encode the stream, so a resumption finds its stream
/// (`<stream>-<sequence>`). Stream ids are random and sequences come from
/// the (possibly shared) event log, so ids are unique across replicas.
pub(crate) fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// Handshake-era notifications for a session: list changes, and updates of
/// the resources it subscribed to, on its GET stream.
pub(crate) async fn forward_changes(server: Server, live: Arc<LiveSession>) {
    let mut events = server.events();
    loop {
        let batch = tokio::select! {
            batch = events.next() => batch,
            _ = live.closed.cancelled() => return,
        };
        let Some(batch) = batch else { return };
        for event in batch {
            if let ServerEvent::ResourceUpdated(uri) = &event
                && !live.session.is_subscribed(uri)
            {
                continue;
            }
            // Every replica serving the session hears each event: only the
            // one its client reads the GET stream from records it, or the
            // stream would hold it once per replica.
            if live.relay.is_some() && !live.get_stream_read_here() {
                continue;
            }
            live.emit_on_get_stream(&Message::Notification(event.notification()))
                .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use toolport_protocol::jsonrpc::Notification;

    use super::*;
    use crate::store::{MemoryEventLog, StateError};

    async fn run_streams(live: &LiveSession, count: usize) -> Vec<u64> {
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            let (tx, _rx) = mpsc::channel(4);
            let (id, stream) = live.open_stream(tx);
            live.emit(id, &stream, &Message::Notification(Notification::new("n", None)))
                .await;
            live.finish(id, &stream).await;
            ids.push(id);
        }
        ids
    }

    #[tokio::test]
    async fn finished_streams_are_forgotten_after_their_retention_and_beyond_the_cap() {
        let events = Arc::new(MemoryEventLog::new(16));
        let session = Arc::new(Session::new());
        // No retention: each finished stream replaces the one before.
        let live = LiveSession::new("s".into(), session.clone(), events.clone(), Duration::ZERO, None);
        let ids = run_streams(&live, 10).await;
        assert_eq!(live.streams().len(), 1);
        let (last, earlier) = ids.split_last().unwrap();
        assert!(
            events.after("s", *last, 0).await.unwrap().is_some(),
            "the newest stays resumable"
        );
        for id in earlier {
            assert!(
                events.after("s", *id, 0).await.unwrap().is_none(),
                "stream {id} is forgotten"
            );
            let (tx, _rx) = mpsc::channel(4);
            assert_eq!(live.attach(*id, 1, tx).await, Err(AttachError::Unknown));
        }
        // A long retention still keeps no more than the cap.
        let live = LiveSession::new("t".into(), session, events.clone(), Duration::from_secs(3600), None);
        let ids = run_streams(&live, MAX_FINISHED_STREAMS + 10).await;
        assert_eq!(live.streams().len(), MAX_FINISHED_STREAMS);
        assert!(events.after("t", ids[9], 0).await.unwrap().is_none());
        assert!(events.after("t", ids[10], 0).await.unwrap().is_some());
        let (tx, _rx) = mpsc::channel(4);
        assert_eq!(live.attach(ids[10], 1, tx).await, Ok(()), "a kept stream resumes");
    }

    fn event_ids(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        let mut ids = Vec::new();
        while let Ok(event) = rx.try_recv() {
            let text = String::from_utf8(event.to_vec()).unwrap();
            ids.push(
                text.lines()
                    .find_map(|l| l.strip_prefix("id: "))
                    .expect("an id")
                    .to_owned(),
            );
        }
        ids
    }

    #[tokio::test]
    async fn two_replicas_of_a_session_sharing_a_log_never_mint_one_event_id() {
        let events: Arc<dyn EventLog> = Arc::new(MemoryEventLog::new(64));
        let replicas = [0, 1].map(|_| {
            LiveSession::new(
                "s".into(),
                Arc::new(Session::new()),
                events.clone(),
                Duration::ZERO,
                None,
            )
        });
        let note = Message::Notification(Notification::new("n", None));
        let mut ids = std::collections::BTreeSet::new();
        for replica in &replicas {
            // Each replica has a reader on its GET stream and opens POST streams.
            let (get_tx, mut get_rx) = mpsc::channel(8);
            replica.attach(GET_STREAM, 0, get_tx).await.unwrap();
            for _ in 0..5 {
                let (tx, mut rx) = mpsc::channel(4);
                let (id, stream) = replica.open_stream(tx);
                assert_ne!(id, GET_STREAM, "a POST stream never takes the GET stream's id");
                replica.emit(id, &stream, &note).await;
                replica.emit(id, &stream, &note).await;
                replica.emit_on_get_stream(&note).await;
                for id in event_ids(&mut rx).into_iter().chain(event_ids(&mut get_rx)) {
                    assert!(ids.insert(id.clone()), "event id {id} minted twice");
                }
            }
        }
        assert_eq!(ids.len(), 2 * (5 * 2 + 5));
    }

    /// An event log whose answers to appends arrive late: the first append
    /// waits the most turns, so an unordered emitter would be overtaken.
    #[derive(Debug)]
    struct LateReplies {
        inner: MemoryEventLog,
        turns: std::sync::atomic::AtomicUsize,
    }

    #[async_trait::async_trait]
    impl EventLog for LateReplies {
        async fn append(&self, session: &str, stream: u64, data: Bytes) -> Result<u64, StateError> {
            let seq = self.inner.append(session, stream, data).await;
            let turns = self.turns.fetch_sub(1, Ordering::SeqCst);
            for _ in 0..turns {
                tokio::task::yield_now().await;
            }
            seq
        }
        async fn after(&self, session: &str, stream: u64, seq: u64) -> Result<Option<Vec<(u64, Bytes)>>, StateError> {
            self.inner.after(session, stream, seq).await
        }
        async fn forget(&self, session: &str) -> Result<(), StateError> {
            self.inner.forget(session).await
        }
        async fn forget_stream(&self, session: &str, stream: u64) -> Result<(), StateError> {
            self.inner.forget_stream(session, stream).await
        }
    }

    #[tokio::test]
    async fn events_reach_readers_in_sequence_order_once_however_late_the_log_answers() {
        let events = Arc::new(LateReplies {
            inner: MemoryEventLog::new(64),
            turns: std::sync::atomic::AtomicUsize::new(8),
        });
        let live = LiveSession::new("s".into(), Arc::new(Session::new()), events, Duration::ZERO, None);
        let note = Message::Notification(Notification::new("n", None));
        let (tx, mut rx) = mpsc::channel(16);
        live.attach(GET_STREAM, 0, tx).await.unwrap();
        live.emit_on_get_stream(&note).await;
        // Two emitters at once, and a reader resuming after the first event
        // while they record theirs.
        let (resumed_tx, mut resumed_rx) = mpsc::channel(16);
        let (_, _, resumed) = tokio::join!(
            live.emit_on_get_stream(&note),
            live.emit_on_get_stream(&note),
            live.attach(GET_STREAM, 1, resumed_tx),
        );
        resumed.unwrap();
        live.emit_on_get_stream(&note).await;
        assert_eq!(
            event_ids(&mut resumed_rx),
            ["0-2", "0-3", "0-4"],
            "in order, each once, replayed or live"
        );
        // The lock is fair: the emitters record in turn, then the reader
        // resumes; the first reader has what was sent before that.
        assert_eq!(event_ids(&mut rx), ["0-1", "0-2", "0-3"], "in order");
    }
}
