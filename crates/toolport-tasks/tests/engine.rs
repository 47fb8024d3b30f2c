//! What the engine does beyond one store call, on SQLite: the maintenance
//! loop recovers and hands out tasks, a lease keeper keeps a long task from
//! being taken for dead, and a watcher that fell behind still sees the end.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;
use toolport_tasks::{
    EngineConfig, ManualClock, NewTask, SqliteStore, TaskEngine, TaskError, TaskStatus, TaskStore, Transition,
};

const START: i64 = 1_700_000_000_000;
const LEASE: Duration = Duration::from_secs(30);

async fn engine(dir: &tempfile::TempDir, runner: &str, clock: &Arc<ManualClock>, events: usize) -> TaskEngine {
    let store: Arc<dyn TaskStore> = Arc::new(SqliteStore::open_in(dir.path()).await.unwrap());
    let config = EngineConfig {
        runner_id: runner.into(),
        lease: LEASE,
        event_capacity: events,
        ..EngineConfig::default()
    };
    TaskEngine::with_config(store, config, clock.clone())
}

#[tokio::test]
async fn maintenance_hands_out_resumable_tasks_and_stops_when_nobody_listens() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(START));
    let dead = engine(&dir, "dead", &clock, 16).await;
    let task = dead
        .create(NewTask::new("alice", "t", json!({"n": 7})).resumable(true))
        .await
        .unwrap();
    let plain = dead.create(NewTask::new("alice", "t", json!({}))).await.unwrap();
    clock.advance(LEASE.as_millis() as i64 + 1);
    let alive = engine(&dir, "alive", &clock, 16).await;
    let (sender, mut claimed) = mpsc::channel(4);
    let maintenance = tokio::spawn(alive.clone().maintain(Duration::from_millis(5), sender));
    // The first round runs at once.
    let resumed = claimed.recv().await.unwrap();
    assert_eq!(
        (resumed.id.clone(), resumed.arguments.clone()),
        (task.id.clone(), json!({"n": 7}))
    );
    assert_eq!(alive.get("alice", &plain.id).await.unwrap().status, TaskStatus::Failed);
    drop(claimed);
    tokio::time::timeout(Duration::from_secs(10), maintenance)
        .await
        .expect("maintenance stops once its receiver is gone")
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_kept_lease_outlives_its_first_term() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(START));
    let runner = engine(&dir, "runner", &clock, 16).await;
    let other = engine(&dir, "other", &clock, 16).await;
    let task = runner.create(NewTask::new("alice", "t", json!({}))).await.unwrap();
    let mut keeper = runner.keep_lease("alice", &task.id);
    for _ in 0..5 {
        clock.advance(LEASE.as_millis() as i64 / 2);
        let renewed = keeper.next_renewal().await.expect("the keeper renews");
        assert!(renewed.lease.unwrap().expires_at > START + LEASE.as_millis() as i64);
        let recovery = other.claim_expired().await.unwrap();
        assert!(
            recovery.failed.is_empty() && recovery.claimed.is_empty(),
            "{recovery:?}"
        );
    }
    // Once the task ends the keeper stops.
    runner
        .update("alice", &task.id, Transition::complete(json!(1)))
        .await
        .unwrap();
    assert_eq!(keeper.next_renewal().await, None);
    assert!(!keeper.is_keeping());
}

#[tokio::test]
async fn a_watcher_that_fell_behind_reads_the_latest_state() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(START));
    // Room for one event: the watcher below misses most of them.
    let engine = engine(&dir, "runner", &clock, 1).await;
    let task = engine.create(NewTask::new("alice", "t", json!({}))).await.unwrap();
    let mut watch = engine.watch("alice", &task.id).await.unwrap();
    assert_eq!(watch.next().await.unwrap().unwrap().version, 1);
    for i in 0..5 {
        let step = Transition::to(TaskStatus::Working).message(format!("step {i}"));
        engine.update("alice", &task.id, step).await.unwrap();
    }
    let done = engine
        .update("alice", &task.id, Transition::complete(json!("ok")))
        .await
        .unwrap();
    // Whatever was dropped, the end arrives and nothing older follows it.
    let mut last = None;
    while let Some(seen) = watch.next().await.unwrap() {
        last = Some(seen);
    }
    assert_eq!(last, Some(done));
}

#[tokio::test]
async fn a_runner_that_lost_its_lease_is_told_to_stop() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(START));
    let slow = engine(&dir, "slow", &clock, 16).await;
    let task = slow
        .create(NewTask::new("alice", "t", json!({})).resumable(true))
        .await
        .unwrap();
    clock.advance(LEASE.as_millis() as i64 + 1);
    let other = engine(&dir, "other", &clock, 16).await;
    assert_eq!(other.claim_expired().await.unwrap().claimed.len(), 1);
    let lost = slow.renew_lease("alice", &task.id).await;
    assert!(matches!(lost, Err(TaskError::LeaseLost(_))), "{lost:?}");
}
