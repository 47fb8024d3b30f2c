//! The Redis stores pass the shared store suite, against a real
//! redis-server (`TOOLPORT_TEST_REDIS_URL`, default `redis://127.0.0.1:6379`;
//! `.ci/run` starts one). Each store gets a prefix of its own, so runs never
//! see each other's keys; two handles on one store are two connections, as
//! two replicas would have.

use std::sync::Arc;
use std::time::Duration;

use toolport_redis::{RedisOptions, RedisState};
use toolport_server::state::{EventBus, EventLog, IdempotencyStore, RateLimiter, Relay, SessionStore, suite};

fn url() -> String {
    std::env::var("TOOLPORT_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn fresh_prefix() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap();
    format!("test:{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Two replicas' connections to one empty store.
async fn pair() -> (RedisState, RedisState) {
    let prefix = fresh_prefix();
    let open = || {
        let options = RedisOptions {
            prefix: prefix.clone(),
            ..RedisOptions::default()
        };
        RedisState::open(&url(), options).expect("a valid URL")
    };
    let (a, b) = (open(), open());
    a.ping()
        .await
        .expect("redis-server answers (is it running? see .ci/run)");
    (a, b)
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn redis_sessions_pass_the_suite() {
    suite::session_store(|| async {
        let (a, b) = pair().await;
        (a.sessions(), b.sessions()) as (Arc<dyn SessionStore>, Arc<dyn SessionStore>)
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn redis_event_logs_pass_the_suite() {
    suite::event_log(|per_stream| async move {
        let (a, b) = pair().await;
        (a.event_log(per_stream), b.event_log(per_stream)) as (Arc<dyn EventLog>, Arc<dyn EventLog>)
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn redis_idempotency_records_pass_the_suite() {
    suite::idempotency_store(|ttl: Duration| async move {
        let (a, _) = pair().await;
        a.idempotency(ttl) as Arc<dyn IdempotencyStore>
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn redis_rate_buckets_pass_the_suite() {
    suite::rate_limiter(|| async {
        let (a, _) = pair().await;
        a.rate_limiter() as Arc<dyn RateLimiter>
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn the_redis_bus_passes_the_suite() {
    suite::event_bus(|capacity| async move {
        let (a, _) = pair().await;
        a.event_bus(capacity).await as Arc<dyn EventBus>
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn the_redis_bus_announces_each_change_once() {
    suite::event_bus_once(|| async {
        let (a, b) = pair().await;
        (a.event_bus(64).await, b.event_bus(64).await) as (Arc<dyn EventBus>, Arc<dyn EventBus>)
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn the_redis_relay_passes_the_suite() {
    suite::relay(|| async {
        let (a, b) = pair().await;
        (a.relay(), b.relay()) as (Arc<dyn Relay>, Arc<dyn Relay>)
    })
    .await;
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn hostile_ids_never_reach_another_key_and_an_unreachable_redis_is_a_clear_error() {
    let (a, _) = pair().await;
    let (sessions, events) = (a.sessions(), a.event_log(16));
    let record = |principal: &str| toolport_server::state::SessionRecord {
        negotiated: toolport_server::Negotiated {
            version: toolport_protocol::ProtocolVersion::ALL[0],
            client_capabilities: Default::default(),
            client_info: toolport_protocol::capabilities::Implementation::new("c", "1"),
        },
        principal: Some(principal.into()),
        settings: Default::default(),
    };
    sessions.create("victim", record("alice")).await.unwrap();
    events
        .append("victim", 1, bytes::Bytes::from_static(b"secret"))
        .await
        .unwrap();
    // Ids a client may make up, shaped like other keys: found as nothing, never an error.
    for id in ["victim:subs", "", ":", "victim\r\nFLUSHALL", "*", &"x".repeat(10_000)] {
        assert_eq!(sessions.get(id).await.unwrap(), None, "{id:?}");
        assert!(!sessions.remove(id).await.unwrap(), "{id:?}");
        assert_eq!(events.after(id, 1, 0).await.unwrap(), None, "{id:?}");
    }
    assert_eq!(events.after("1:victim", 0, 0).await.unwrap(), None);
    assert!(
        sessions.get("victim").await.unwrap().is_some(),
        "the victim is untouched"
    );
    assert_eq!(events.after("victim", 1, 0).await.unwrap().unwrap().len(), 1);

    // Nothing listens on this port: every call fails within the timeout, as Unavailable.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = RedisOptions {
        timeout: Duration::from_millis(500),
        ..RedisOptions::default()
    };
    let down = RedisState::open(&format!("redis://127.0.0.1:{port}"), options).unwrap();
    let started = std::time::Instant::now();
    let error = down.sessions().get("x").await.unwrap_err();
    assert!(
        matches!(error, toolport_server::state::StateError::Unavailable(_)),
        "{error}"
    );
    assert!(down.ping().await.is_err());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "bounded: {:?}",
        started.elapsed()
    );
    assert!(RedisState::open("http://not-redis", RedisOptions::default()).is_err());
}
