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
