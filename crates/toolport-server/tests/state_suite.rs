//! The in-memory state stores pass the shared store suite.

use std::sync::Arc;
use std::time::Duration;

use toolport_server::state::{
    EventBus, EventLog, IdempotencyStore, MemoryEventBus, MemoryEventLog, MemoryIdempotencyStore, MemoryRateLimiter,
    MemoryRelay, MemorySessionStore, RateLimiter, Relay, SessionStore, suite,
};

#[tokio::test(start_paused = true)]
async fn memory_sessions_pass_the_suite() {
    suite::session_store(|| async {
        let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::new());
        (store.clone(), store)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn memory_event_logs_pass_the_suite() {
    suite::event_log(|per_stream| async move {
        let log: Arc<dyn EventLog> = Arc::new(MemoryEventLog::new(per_stream));
        (log.clone(), log)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn memory_idempotency_records_pass_the_suite() {
    suite::idempotency_store(|ttl: Duration| async move {
        Arc::new(MemoryIdempotencyStore::new(ttl)) as Arc<dyn IdempotencyStore>
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn memory_rate_buckets_pass_the_suite() {
    suite::rate_limiter(|| async { Arc::new(MemoryRateLimiter::new()) as Arc<dyn RateLimiter> }).await;
}

#[tokio::test(start_paused = true)]
async fn the_memory_bus_passes_the_suite() {
    suite::event_bus(|capacity| async move { Arc::new(MemoryEventBus::new(capacity)) as Arc<dyn EventBus> }).await;
}

#[tokio::test(start_paused = true)]
async fn the_memory_bus_announces_each_change_once() {
    suite::event_bus_once(|| async {
        let bus: Arc<dyn EventBus> = Arc::new(MemoryEventBus::default());
        (bus.clone(), bus)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_memory_relay_passes_the_suite() {
    suite::relay(|| async {
        let relay: Arc<dyn Relay> = Arc::new(MemoryRelay::new());
        (relay.clone(), relay)
    })
    .await;
}

#[test]
fn the_key_ring_passes_the_suite() {
    suite::key_ring();
}
