//! The contract every state store implementation passes: one async function
//! per trait, generic over the implementation through a factory.
//!
//! Run them from a test of the implementation, on a tokio runtime with
//! paused time (`#[tokio::test(start_paused = true)]`): the functions wait
//! with `tokio::time::sleep` where time to live or idleness matters, which
//! paused time skips at once. A shared store measuring time itself (Redis)
//! needs real time instead; the waits are short.
//!
//! Each function panics (with what broke) when the contract does not hold.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation};
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::tools::CallToolResult;

use super::{
    ArgumentsDigest, Claim, EventBus, EventLog, IdempotencyStore, KeyRing, KeyRingError, RateDecision, RateLimiter,
    Relay, SessionRecord, SessionStore, SettingsChange,
};
use crate::events::ServerEvent;
use crate::policy::RateConfig;
use crate::session::Negotiated;

fn record(principal: Option<&str>) -> SessionRecord {
    SessionRecord::new(
        Negotiated {
            version: ProtocolVersion::ALL[0],
            client_capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("suite", "1.0.0"),
        },
        principal.map(str::to_owned),
    )
}

/// Sessions: create, get (which touches), changes of settings (none lost
/// when two handles change one session), remove, reap of idle ones, count.
/// `make` gives two handles on one empty store (two clients of one shared
/// backend; an in-memory store gives the same instance twice).
pub async fn session_store<F, Fut>(make: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = (Arc<dyn SessionStore>, Arc<dyn SessionStore>)>,
{
    let (store, other) = make().await;
    assert_eq!(store.count().await.unwrap(), 0);
    assert_eq!(store.get("a").await.unwrap(), None, "no session before create");
    store.create("a", record(Some("alice"))).await.unwrap();
    store.create("b", record(None)).await.unwrap();
    assert_eq!(store.count().await.unwrap(), 2);
    assert_eq!(store.get("a").await.unwrap(), Some(record(Some("alice"))));

    // Changes through either handle, interleaved: every one is kept.
    for (handle, change) in [
        (&store, SettingsChange::LogLevel(LoggingLevel::Warning)),
        (&other, SettingsChange::Subscribed("file:///a".into())),
        (&store, SettingsChange::Subscribed("file:///b".into())),
        (&other, SettingsChange::Subscribed("file:///c".into())),
        (&store, SettingsChange::Unsubscribed("file:///c".into())),
        (&other, SettingsChange::LogLevel(LoggingLevel::Error)),
    ] {
        assert!(handle.apply("a", &change).await.unwrap(), "{change:?} applies");
    }
    let updated = other.get("a").await.unwrap().expect("a exists");
    assert_eq!(
        updated.settings.log_level,
        Some(LoggingLevel::Error),
        "the newest level"
    );
    assert_eq!(
        updated.settings.subscriptions,
        BTreeSet::from(["file:///a".to_owned(), "file:///b".to_owned()]),
        "no change is lost"
    );
    assert_eq!(updated.principal.as_deref(), Some("alice"), "a change keeps the rest");
    assert!(
        !store
            .apply("nobody", &SettingsChange::Subscribed("file:///a".into()))
            .await
            .unwrap()
    );

    // Idleness: `a` is used halfway, `b` is not; only `b` is reaped.
    let idle = Duration::from_millis(400);
    tokio::time::sleep(idle / 2 + Duration::from_millis(50)).await;
    assert!(store.get("a").await.unwrap().is_some(), "get touches");
    tokio::time::sleep(idle / 2 + Duration::from_millis(50)).await;
    assert_eq!(store.reap(idle).await.unwrap(), ["b".to_owned()]);
    assert_eq!(store.get("b").await.unwrap(), None, "a reaped session is gone");
    assert_eq!(store.count().await.unwrap(), 1);

    assert!(store.remove("a").await.unwrap());
    assert!(!store.remove("a").await.unwrap(), "removing twice finds nothing");
    assert_eq!(store.get("a").await.unwrap(), None);
    assert_eq!(store.count().await.unwrap(), 0);
}

fn seqs(events: &[(u64, Bytes)]) -> Vec<u64> {
    events.iter().map(|(seq, _)| *seq).collect()
}

/// Event logs: events in order from 1, replay after an id, refusal when
/// events after the id are gone, forgetting, and sequence numbers unique
/// across two handles. `make(per_stream)` gives two handles on one empty
/// log keeping `per_stream` events per stream (two clients of one shared
/// backend; an in-memory log gives the same instance twice).
pub async fn event_log<F, Fut>(make: F)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = (Arc<dyn EventLog>, Arc<dyn EventLog>)>,
{
    let (log, _) = make(3).await;
    for i in 1..=5u8 {
        assert_eq!(log.append("s", 7, Bytes::from(vec![i])).await.unwrap(), u64::from(i));
    }
    let kept = log.after("s", 7, 3).await.unwrap().expect("events 4 and 5 are kept");
    assert_eq!(seqs(&kept), [4, 5]);
    assert_eq!(kept[0].1, Bytes::from(vec![4u8]), "each event keeps its data");
    assert_eq!(seqs(&log.after("s", 7, 2).await.unwrap().unwrap()), [3, 4, 5]);
    assert_eq!(
        log.after("s", 7, 5).await.unwrap(),
        Some(Vec::new()),
        "nothing after the newest"
    );
    assert_eq!(
        log.after("s", 7, 1).await.unwrap(),
        None,
        "event 2 is gone: resuming would lose it"
    );
    assert_eq!(log.after("s", 7, 9).await.unwrap(), None, "an id from the future");
    assert_eq!(log.after("s", 8, 0).await.unwrap(), None, "an unknown stream");
    assert_eq!(
        log.after("other", 7, 3).await.unwrap(),
        None,
        "another session's stream"
    );

    log.append("s", 8, Bytes::from_static(b"x")).await.unwrap();
    log.forget_stream("s", 7).await.unwrap();
    assert_eq!(log.after("s", 7, 4).await.unwrap(), None, "a forgotten stream");
    assert!(
        log.after("s", 8, 0).await.unwrap().is_some(),
        "forgetting one stream keeps the others"
    );
    log.forget("s").await.unwrap();
    assert_eq!(log.after("s", 8, 0).await.unwrap(), None, "a forgotten session");

    // Two writers on one stream never get the same sequence number.
    let (a, b) = make(64).await;
    let mut seen = BTreeSet::new();
    for i in 0..10u8 {
        let writer = if i % 2 == 0 { &a } else { &b };
        let seq = writer.append("shared", 1, Bytes::from(vec![i])).await.unwrap();
        assert!(seen.insert(seq), "sequence {seq} handed out twice");
    }
    let all = b.after("shared", 1, 0).await.unwrap().expect("both writers' events");
    assert_eq!(seqs(&all), (1..=10).collect::<Vec<_>>(), "one order for both writers");
}

/// Idempotency records: the first claim runs, a repeat gets the result (and
/// waits for it while the first runs), other arguments conflict, an
/// abandoned claim frees the key, results expire after the time to live,
/// an ended lease frees the key. `make(ttl)` gives an empty store keeping
/// results for `ttl`.
pub async fn idempotency_store<F, Fut>(make: F)
where
    F: Fn(Duration) -> Fut,
    Fut: Future<Output = Arc<dyn IdempotencyStore>>,
{
    let ttl = Duration::from_secs(60);
    let lease = Duration::from_secs(30);
    let store = make(ttl).await;
    let args = ArgumentsDigest::of(&json!({"a": 1}));
    let other = ArgumentsDigest::of(&json!({"a": 2}));
    let Claim::First(ticket) = store.claim("k", args, lease).await.unwrap() else {
        panic!("the first claim runs")
    };
    assert_eq!(ticket.key, "k");
    let waiter = tokio::spawn({
        let store = store.clone();
        async move { store.claim("k", args, lease).await.unwrap() }
    });
    assert!(
        matches!(store.claim("k", other, lease).await.unwrap(), Claim::Conflict),
        "other arguments conflict with a running claim"
    );
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished(), "a repeat waits while the first runs");
    store.complete(&ticket, &CallToolResult::text("once")).await.unwrap();
    match waiter.await.unwrap() {
        Claim::Done(result) => assert_eq!(result, CallToolResult::text("once")),
        other => panic!("the waiter gets the result, not {other:?}"),
    }
    assert!(matches!(store.claim("k", args, lease).await.unwrap(), Claim::Done(_)));
    assert!(
        matches!(store.claim("k", other, lease).await.unwrap(), Claim::Conflict),
        "other arguments conflict with a done key"
    );

    // Abandoning frees the key; a waiter takes it over.
    let Claim::First(ticket) = store.claim("free", args, lease).await.unwrap() else {
        panic!("a new key runs")
    };
    let waiter = tokio::spawn({
        let store = store.clone();
        async move { store.claim("free", args, lease).await.unwrap() }
    });
    tokio::task::yield_now().await;
    store.abandon(&ticket).await.unwrap();
    let Claim::First(taken) = waiter.await.unwrap() else {
        panic!("the waiter takes over an abandoned key")
    };
    assert_ne!(taken.owner, ticket.owner, "each claim has its own owner");
    store.abandon(&ticket).await.unwrap();
    assert!(
        matches!(store.claim("free", other, lease).await.unwrap(), Claim::Conflict),
        "a stale ticket does not free another owner's claim"
    );

    // An ended lease frees the key (its holder died).
    let short = Duration::from_millis(200);
    let Claim::First(_lost) = store.claim("lease", args, short).await.unwrap() else {
        panic!("a new key runs")
    };
    match tokio::time::timeout(Duration::from_secs(5), store.claim("lease", args, short)).await {
        Ok(Ok(Claim::First(_))) => {}
        other => panic!("a claim after the lease ended runs, not {other:?}"),
    }

    // Results expire.
    let ttl = Duration::from_millis(200);
    let store = make(ttl).await;
    let Claim::First(ticket) = store.claim("k", args, lease).await.unwrap() else {
        panic!("the first claim runs")
    };
    store.complete(&ticket, &CallToolResult::text("x")).await.unwrap();
    assert!(matches!(store.claim("k", args, lease).await.unwrap(), Claim::Done(_)));
    tokio::time::sleep(ttl * 2).await;
    assert!(
        matches!(store.claim("k", args, lease).await.unwrap(), Claim::First(_)),
        "an expired result frees the key"
    );
}

/// Rate buckets: a burst passes, the next check is refused with a
/// retry-after, keys and bucket shapes are independent. `make` gives a
/// limiter with no buckets.
pub async fn rate_limiter<F, Fut>(make: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Arc<dyn RateLimiter>>,
{
    let limiter = make().await;
    // One token a minute: the refill cannot happen during the test.
    let rate = RateConfig {
        per_second: 1.0 / 60.0,
        burst: 3,
    };
    for i in 0..3 {
        assert_eq!(
            limiter.check("alice", &rate).await.unwrap(),
            RateDecision::Allowed,
            "call {i} is within the burst"
        );
    }
    match limiter.check("alice", &rate).await.unwrap() {
        RateDecision::RetryAfter(wait) => assert!(
            wait > Duration::from_secs(1) && wait <= Duration::from_secs(60),
            "the retry-after is the refill time, not {wait:?}"
        ),
        RateDecision::Allowed => panic!("the burst is spent"),
    }
    assert_eq!(
        limiter.check("bob", &rate).await.unwrap(),
        RateDecision::Allowed,
        "keys are independent"
    );
    let wider = RateConfig {
        per_second: 1.0 / 60.0,
        burst: 5,
    };
    let mut allowed = 0;
    for _ in 0..6 {
        if limiter.check("carol", &wider).await.unwrap() == RateDecision::Allowed {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 5, "a bucket has the burst of its own rate");
}

/// The event bus: every subscriber gets every event in order; one that
/// falls behind is told that every list changed, then gets new events.
/// `make(capacity)` gives a bus on which a subscriber may fall `capacity`
/// events behind.
pub async fn event_bus<F, Fut>(make: F)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Arc<dyn EventBus>>,
{
    let bus = make(16).await;
    let mut first = bus.subscribe();
    let mut second = bus.subscribe();
    let sent = [
        ServerEvent::ToolsChanged,
        ServerEvent::ResourceUpdated("file:///a".into()),
        ServerEvent::PromptsChanged,
        ServerEvent::ResourcesChanged,
    ];
    for event in &sent {
        bus.publish(event.clone());
    }
    for subscriber in [&mut first, &mut second] {
        for event in &sent {
            assert_eq!(
                subscriber.next().await,
                Some(vec![event.clone()]),
                "in order, to everyone"
            );
        }
    }

    let bus = make(4).await;
    let mut slow = bus.subscribe();
    for i in 0..20 {
        bus.publish(ServerEvent::ResourceUpdated(format!("file:///{i}")));
    }
    assert_eq!(
        slow.next().await,
        Some(ServerEvent::all_lists()),
        "a subscriber that fell behind must assume every list changed"
    );
    // It may still see some buffered events, then the new ones.
    bus.publish(ServerEvent::ToolsChanged);
    let mut last = None;
    for _ in 0..20 {
        let batch = slow.next().await.expect("the bus is alive");
        if batch == [ServerEvent::ToolsChanged] {
            last = Some(batch);
            break;
        }
    }
    assert!(last.is_some(), "a lagging subscriber goes on receiving");
}

/// Announcements of one change by several replicas: each (event, version)
/// reaches a subscriber once, whichever handle announced it and however
/// often; another version is another event. `make` gives two handles on one
/// empty bus (two replicas of one shared bus; in memory, one bus twice).
pub async fn event_bus_once<F, Fut>(make: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = (Arc<dyn EventBus>, Arc<dyn EventBus>)>,
{
    let (a, b) = make().await;
    let mut subscriber = b.subscribe();
    let changed = ServerEvent::ResourceUpdated("file:///shared/a.txt".into());
    for (bus, version) in [(&a, "v1"), (&b, "v1"), (&a, "v1"), (&b, "v2"), (&a, "v2")] {
        bus.publish_once(changed.clone(), version);
    }
    // Each handle's announcements are settled once its own marker arrives.
    a.publish(ServerEvent::ToolsChanged);
    b.publish(ServerEvent::PromptsChanged);
    let (mut updates, mut markers) = (0, 0);
    for _ in 0..20 {
        let batch = tokio::time::timeout(Duration::from_secs(5), subscriber.next())
            .await
            .expect("the bus delivers within 5 s")
            .expect("the bus is alive");
        for event in batch {
            match event {
                ServerEvent::ResourceUpdated(_) => updates += 1,
                _ => markers += 1,
            }
        }
        if markers == 2 {
            break;
        }
    }
    assert_eq!(markers, 2, "both markers arrive");
    assert_eq!(updates, 2, "one update per version, not one per announcement");
}

/// The relay: a message reaches every subscription of its topic, in order,
/// and no other topic's; the count of receivers and subscribers is right;
/// a dropped subscription unsubscribes. `make` gives two handles on one
/// relay (two replicas of one shared relay; in memory, one relay twice).
pub async fn relay<F, Fut>(make: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = (Arc<dyn Relay>, Arc<dyn Relay>)>,
{
    let (a, b) = make().await;
    let text = |s: &'static str| Bytes::from_static(s.as_bytes());
    assert_eq!(a.send("t", text("lost")).await.unwrap(), 0, "nobody listens yet");
    assert_eq!(a.subscribers("t").await.unwrap(), 0);
    let mut on_b = b.subscribe("t").await.unwrap();
    let mut elsewhere = b.subscribe("u").await.unwrap();
    assert_eq!(a.subscribers("t").await.unwrap(), 1);
    for i in 0..5u8 {
        assert_eq!(a.send("t", Bytes::from(vec![i])).await.unwrap(), 1, "one receiver");
    }
    for i in 0..5u8 {
        assert_eq!(on_b.next().await, Some(Bytes::from(vec![i])), "in order");
    }
    let mut on_a = a.subscribe("t").await.unwrap();
    assert_eq!(b.subscribers("t").await.unwrap(), 2);
    assert_eq!(b.send("t", text("both")).await.unwrap(), 2);
    assert_eq!(on_a.next().await, Some(text("both")));
    assert_eq!(on_b.next().await, Some(text("both")));
    a.send("u", text("other topic")).await.unwrap();
    assert_eq!(elsewhere.next().await, Some(text("other topic")));
    a.send("t", text("after")).await.unwrap();
    assert_eq!(
        on_b.next().await,
        Some(text("after")),
        "another topic's message is not here"
    );

    drop(on_a);
    drop(on_b);
    let mut left = usize::MAX;
    for _ in 0..200 {
        left = a.subscribers("t").await.unwrap();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(left, 0, "dropped subscriptions unsubscribe");
    assert_eq!(a.send("t", text("gone")).await.unwrap(), 0);
    assert_eq!(b.subscribers("u").await.unwrap(), 1, "other topics stay");
}

/// The key ring: the first key seals, every key opens, an unknown key id
/// and an altered blob are refused alike.
pub fn key_ring() {
    let old = [1u8; 32];
    let new = [2u8; 32];
    let before = KeyRing::new("old", old).unwrap();
    let during = KeyRing::new("new", new).unwrap().with_key("old", old).unwrap();
    let after = KeyRing::new("new", new).unwrap();

    let sealed_before = before.seal(b"state");
    assert!(sealed_before.starts_with("old."), "the key id travels in the blob");
    assert_eq!(
        during.open(&sealed_before).unwrap(),
        b"state",
        "an older key still opens"
    );
    let sealed_during = during.seal(b"state");
    assert!(sealed_during.starts_with("new."), "the first key seals");
    assert_eq!(
        before.open(&sealed_during),
        Err(KeyRingError::Tampered),
        "an unknown key id is refused"
    );
    assert_eq!(after.open(&sealed_during).unwrap(), b"state");
    assert_eq!(
        after.open(&sealed_before),
        Err(KeyRingError::Tampered),
        "a dropped key no longer opens"
    );

    // A blob relabelled with another key id, or with an altered payload.
    let relabelled = sealed_before.replacen("old.", "new.", 1);
    assert_eq!(during.open(&relabelled), Err(KeyRingError::Tampered));
    let (head, tag) = sealed_during.rsplit_once('.').unwrap();
    let altered = format!("{}A.{tag}", &head[..head.len() - 1]);
    assert_ne!(altered, sealed_during);
    assert_eq!(during.open(&altered), Err(KeyRingError::Tampered));
    assert_eq!(during.open("no dots"), Err(KeyRingError::Malformed));

    assert!(KeyRing::new("", new).is_err(), "an empty key id");
    assert!(KeyRing::new("has.dot", new).is_err(), "a dot would split the blob");
    assert!(during.clone().with_key("new", old).is_err(), "a duplicate key id");
    assert!(!format!("{during:?}").contains("2, 2"), "Debug never shows a key");
}
