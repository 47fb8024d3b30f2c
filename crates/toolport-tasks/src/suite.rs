//! The contract every [`TaskStore`] passes, driven through the engine: one
//! async function per property, each given a fresh, empty store. Time is a
//! [`ManualClock`], so leases and expiry are tested without waiting.
//!
//! Each function panics (with what broke) when the contract does not hold.

use std::sync::Arc;

use serde_json::json;

use crate::{
    EngineConfig, ManualClock, NewTask, TaskEngine, TaskError, TaskId, TaskRecord, TaskStatus, TaskStore, Transition,
};

/// One `#[tokio::test]` per case of the suite, each on a fresh store from
/// `$make`: an async fn taking the case's name and returning a guard to
/// keep alive for the case (a temporary directory, say) and the store.
/// Attributes after the factory go on every test (`#[ignore = "..."]`).
#[macro_export]
macro_rules! store_suite {
    ($make:path $(, #[$attr:meta])* $(,)?) => {
        $crate::store_suite!(@cases $make, [$(#[$attr])*],
            created_task_reads_back_whole,
            other_principals_see_not_found,
            transitions_compare_and_swap_and_ends_are_final,
            invalid_requests_are_refused_and_change_nothing,
            list_pages_newest_first,
            racing_cancels_and_completions_have_one_winner,
            racing_swaps_from_one_version_have_one_winner,
            watchers_get_the_current_state_then_each_change,
            expired_leases_fail_or_hand_over,
            tasks_past_their_ttl_are_deleted,
            metadata_changes_after_the_end_by_compare_and_swap,
        );
    };
    (@cases $make:path, $attrs:tt, $($case:ident),* $(,)?) => {
        $( $crate::store_suite!(@case $make, $attrs, $case); )*
    };
    (@case $make:path, [$($attr:tt)*], $case:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        $($attr)*
        async fn $case() {
            let (_guard, store) = $make(stringify!($case)).await;
            $crate::suite::$case(store).await;
        }
    };
}

/// Where the suite's clocks start.
const START: i64 = 1_700_000_000_000;

/// The suite's lease, in milliseconds.
const LEASE_MS: i64 = 30_000;

/// An engine over `store` named `runner`, reading `clock`, keeping tasks
/// without a requested time to live until deleted.
fn engine(store: &Arc<dyn TaskStore>, runner: &str, clock: &Arc<ManualClock>) -> TaskEngine {
    let config = EngineConfig {
        runner_id: runner.into(),
        lease: std::time::Duration::from_millis(LEASE_MS as u64),
        default_ttl_ms: None,
        ..EngineConfig::default()
    };
    TaskEngine::with_config(Arc::clone(store), config, clock.clone())
}

fn setup(store: Arc<dyn TaskStore>) -> (TaskEngine, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(START));
    (engine(&store, "runner-a", &clock), clock)
}

/// An owner no other test uses, so suites may share a database.
fn owner(name: &str) -> String {
    format!("{name}-{}", TaskId::generate())
}

/// A task is stored with every field as created, and reads back the same.
pub async fn created_task_reads_back_whole(store: Arc<dyn TaskStore>) {
    let (engine, _) = setup(Arc::clone(&store));
    let alice = owner("alice");
    let new = NewTask::new(&alice, "report", json!({"year": 2026, "rows": [1, 2.5, "x", null]}))
        .ttl_ms(60_000)
        .poll_interval_ms(250)
        .resumable(true)
        .status(TaskStatus::Submitted)
        .context_id("ctx-1")
        .metadata(json!({"history": [{"role": "user"}]}));
    let created = engine.create(new).await.unwrap();
    assert_eq!(created.version, 1);
    assert_eq!(created.status, TaskStatus::Submitted);
    assert_eq!(created.expires_at, Some(START + 60_000));
    assert_eq!(created.lease.as_ref().map(|l| l.expires_at), Some(START + LEASE_MS));
    // Straight from the store: creation was written before it returned.
    let stored = store.get(&alice, &created.id).await.unwrap();
    assert_eq!(stored.as_ref(), Some(&created));
    assert_eq!(engine.get(&alice, &created.id).await.unwrap(), created);
}

/// Another principal's task does not exist for them, whatever they try.
pub async fn other_principals_see_not_found(store: Arc<dyn TaskStore>) {
    let (engine, _) = setup(store);
    let (alice, mallory) = (owner("alice"), owner("mallory"));
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let not_found = |r: Result<TaskRecord, TaskError>| matches!(r, Err(TaskError::NotFound(id)) if id == task.id);
    assert!(not_found(engine.get(&mallory, &task.id).await));
    assert!(not_found(engine.cancel(&mallory, &task.id, None).await));
    assert!(not_found(
        engine
            .transition(&mallory, &task.id, 1, Transition::complete(json!(1)))
            .await
    ));
    assert!(not_found(engine.update(&mallory, &task.id, Transition::cancel()).await));
    assert!(not_found(engine.renew_lease(&mallory, &task.id).await));
    assert!(matches!(
        engine.watch(&mallory, &task.id).await,
        Err(TaskError::NotFound(_))
    ));
    assert!(engine.list(&mallory, None, None).await.unwrap().tasks.is_empty());
    // Unknown, empty and hostile ids are not found either.
    for id in ["", "nope", "' OR 1=1 --", &"f".repeat(10_000)] {
        let id = TaskId::from(id);
        assert!(
            matches!(engine.get(&alice, &id).await, Err(TaskError::NotFound(_))),
            "{id}"
        );
    }
    // And alice's task is as it was.
    assert_eq!(engine.get(&alice, &task.id).await.unwrap(), task);
}

/// Transitions swap on the version; terminal states never change again.
pub async fn transitions_compare_and_swap_and_ends_are_final(store: Arc<dyn TaskStore>) {
    let (engine, clock) = setup(store);
    let alice = owner("alice");
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    clock.advance(5);
    let asked = engine
        .transition(
            &alice,
            &task.id,
            1,
            Transition::to(TaskStatus::InputRequired)
                .message("need a name")
                .input_requests(json!({"r1": {"method": "elicitation/create"}})),
        )
        .await
        .unwrap();
    assert_eq!((asked.version, asked.updated_at), (2, START + 5));
    assert_eq!(asked.status_message.as_deref(), Some("need a name"));
    // A writer that read version 1 lost: told the actual version.
    let stale = engine
        .transition(&alice, &task.id, 1, Transition::to(TaskStatus::Working))
        .await;
    assert!(
        matches!(
            stale,
            Err(TaskError::VersionConflict {
                expected: 1,
                actual: 2,
                ..
            })
        ),
        "{stale:?}"
    );
    // Leaving input_required clears the requests.
    let working = engine
        .transition(&alice, &task.id, 2, Transition::to(TaskStatus::Working))
        .await
        .unwrap();
    assert_eq!(working.input_requests, None);
    let done = engine
        .transition(&alice, &task.id, 3, Transition::complete(json!({"content": []})))
        .await
        .unwrap();
    assert_eq!(done.lease, None, "a finished task holds no lease");
    // Nothing moves a completed task: not a cancel, not a CAS at its version.
    let cancel = engine.cancel(&alice, &task.id, None).await;
    assert!(
        matches!(
            cancel,
            Err(TaskError::AlreadyTerminal {
                status: TaskStatus::Completed,
                ..
            })
        ),
        "{cancel:?}"
    );
    let again = engine
        .transition(&alice, &task.id, 4, Transition::fail(json!({"code": 1})))
        .await;
    assert!(matches!(again, Err(TaskError::AlreadyTerminal { .. })), "{again:?}");
    assert_eq!(engine.get(&alice, &task.id).await.unwrap(), done);
}

/// Changes no task can make are refused before anything is written.
pub async fn invalid_requests_are_refused_and_change_nothing(store: Arc<dyn TaskStore>) {
    let (engine, _) = setup(store);
    let alice = owner("alice");
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let invalid = [
        Transition::to(TaskStatus::Working).result(json!(1)),
        Transition::to(TaskStatus::Completed).error(json!({"code": 1})),
        Transition::to(TaskStatus::Working).input_requests(json!({})),
        Transition::complete(json!("x".repeat(engine.config().max_value_bytes))),
    ];
    for change in invalid {
        let refused = engine.transition(&alice, &task.id, 1, change.clone()).await;
        assert!(
            matches!(
                refused,
                Err(TaskError::InvalidTransition(_) | TaskError::InvalidRequest(_))
            ),
            "{change:?}: {refused:?}"
        );
    }
    assert_eq!(engine.get(&alice, &task.id).await.unwrap(), task);
    let bad_new = [
        NewTask::new("", "t", json!({})),
        NewTask::new(&alice, "", json!({})),
        NewTask::new(&alice, "t", json!({})).status(TaskStatus::Completed),
        NewTask::new("o".repeat(5000), "t", json!({})),
        NewTask::new(&alice, "t", json!("x".repeat(engine.config().max_value_bytes))),
    ];
    for new in bad_new {
        let refused = engine.create(new).await;
        assert!(
            matches!(
                refused,
                Err(TaskError::InvalidTransition(_) | TaskError::InvalidRequest(_))
            ),
            "{refused:?}"
        );
    }
    assert_eq!(engine.list(&alice, None, None).await.unwrap().tasks, [task]);
}

/// A principal's list comes newest first in pages that neither skip nor
/// repeat, ties in creation time included; a forged cursor is refused.
pub async fn list_pages_newest_first(store: Arc<dyn TaskStore>) {
    let (engine, clock) = setup(store);
    let (alice, bob) = (owner("alice"), owner("bob"));
    let mut created = Vec::new();
    for i in 0..7 {
        // Pairs share a millisecond, so the id breaks the tie.
        if i % 2 == 0 {
            clock.advance(10);
        }
        created.push(engine.create(NewTask::new(&alice, "t", json!({"i": i}))).await.unwrap());
        engine.create(NewTask::new(&bob, "t", json!({}))).await.unwrap();
    }
    created.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = engine.list(&alice, cursor.as_deref(), Some(3)).await.unwrap();
        pages += 1;
        assert!(page.tasks.len() <= 3);
        seen.extend(page.tasks);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        assert!(pages < 10, "the pages do not end");
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, created);
    for forged in ["garbage", "12", "x.y", ""] {
        let refused = engine.list(&alice, Some(forged), None).await;
        assert!(matches!(refused, Err(TaskError::InvalidRequest(_))), "{forged:?}");
    }
    // A page size of zero or a huge one is brought into range.
    assert_eq!(engine.list(&alice, None, Some(0)).await.unwrap().tasks.len(), 1);
    assert_eq!(
        engine.list(&alice, None, Some(usize::MAX)).await.unwrap().tasks.len(),
        7
    );
}

/// How many writers race in the race cases.
const RACERS: usize = 50;

/// Runs `RACERS` writers at once on `owner`'s task `id`, each doing
/// `write(engine, owner, id, its number)`; their answers in spawn order.
async fn race<F, Fut>(engine: &TaskEngine, owner: &str, id: &TaskId, write: F) -> Vec<Result<TaskRecord, TaskError>>
where
    F: Fn(TaskEngine, String, TaskId, usize) -> Fut,
    Fut: std::future::Future<Output = Result<TaskRecord, TaskError>> + Send + 'static,
{
    let racers: Vec<_> = (0..RACERS)
        .map(|i| tokio::spawn(write(engine.clone(), owner.to_owned(), id.clone(), i)))
        .collect();
    let mut answers = Vec::new();
    for racer in racers {
        answers.push(racer.await.expect("a racer panicked"));
    }
    answers
}

/// 50 cancels and completions race on one task: exactly one terminal state
/// wins and every loser is told the task already ended, in that state.
pub async fn racing_cancels_and_completions_have_one_winner(store: Arc<dyn TaskStore>) {
    let (engine, _) = setup(store);
    let alice = owner("alice");
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let answers = race(&engine, &alice, &task.id, |engine, alice, id, i| async move {
        if i % 2 == 0 {
            engine.cancel(&alice, &id, Some(format!("cancel {i}"))).await
        } else {
            engine.update(&alice, &id, Transition::complete(json!({"by": i}))).await
        }
    })
    .await;
    let mut winners = Vec::new();
    let mut losers = Vec::new();
    for answer in answers {
        match answer {
            Ok(task) => winners.push(task),
            Err(TaskError::AlreadyTerminal { status, .. }) => losers.push(status),
            Err(other) => panic!("a racer got {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    let winner = &winners[0];
    assert_eq!(losers.len(), RACERS - 1);
    assert!(losers.iter().all(|s| *s == winner.status), "{losers:?}");
    assert_eq!(winner.version, 2);
    assert_eq!(engine.get(&alice, &task.id).await.unwrap(), *winner);
}

/// 50 writers swap from one version: exactly one wins the step, the others
/// learn the version moved.
pub async fn racing_swaps_from_one_version_have_one_winner(store: Arc<dyn TaskStore>) {
    let (engine, _) = setup(store);
    let alice = owner("alice");
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let answers = race(&engine, &alice, &task.id, |engine, alice, id, i| async move {
        let change = Transition::to(TaskStatus::Working).message(format!("step by {i}"));
        engine.transition(&alice, &id, 1, change).await
    })
    .await;
    let mut winners = Vec::new();
    for answer in answers {
        match answer {
            Ok(task) => winners.push(task),
            Err(TaskError::VersionConflict {
                expected: 1, actual: 2, ..
            }) => {}
            Err(other) => panic!("a racer got {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    assert_eq!(engine.get(&alice, &task.id).await.unwrap(), winners[0]);
}

/// A watcher gets the current state first, then every change in order,
/// and stops after the end.
pub async fn watchers_get_the_current_state_then_each_change(store: Arc<dyn TaskStore>) {
    let (engine, _) = setup(store);
    let alice = owner("alice");
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let step = engine
        .update(&alice, &task.id, Transition::to(TaskStatus::Working).message("half"))
        .await
        .unwrap();
    let mut early = engine.watch(&alice, &task.id).await.unwrap();
    let mut late = engine.watch(&alice, &task.id).await.unwrap();
    let input = engine
        .update(
            &alice,
            &task.id,
            Transition::to(TaskStatus::InputRequired).input_requests(json!({"q": 1})),
        )
        .await
        .unwrap();
    let done = engine
        .update(&alice, &task.id, Transition::complete(json!("ok")))
        .await
        .unwrap();
    for watch in [&mut early, &mut late] {
        assert_eq!(watch.next().await.unwrap().as_ref(), Some(&step));
        assert_eq!(watch.next().await.unwrap().as_ref(), Some(&input));
        assert_eq!(watch.next().await.unwrap().as_ref(), Some(&done));
        assert_eq!(watch.next().await.unwrap(), None);
    }
    // Watching a finished task shows its end and stops.
    let mut after = engine.watch(&alice, &task.id).await.unwrap();
    assert_eq!(after.next().await.unwrap(), Some(done));
    assert_eq!(after.next().await.unwrap(), None);
}

/// When a runner dies, its tasks end: failed with a message saying so, or
/// handed to another runner if resumable. Renewed and finished tasks are
/// left alone, and the dead runner cannot take its task back.
pub async fn expired_leases_fail_or_hand_over(store: Arc<dyn TaskStore>) {
    let (dead, clock) = setup(Arc::clone(&store));
    let alive = engine(&store, "runner-b", &clock);
    let alice = owner("alice");
    let plain = dead.create(NewTask::new(&alice, "t", json!({"n": 1}))).await.unwrap();
    let resumable = dead
        .create(NewTask::new(&alice, "t", json!({"n": 2})).resumable(true))
        .await
        .unwrap();
    let finished = dead.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let finished = dead
        .update(&alice, &finished.id, Transition::complete(json!(3)))
        .await
        .unwrap();
    let renewed = alive.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    // Before the lease runs out nothing is recovered.
    clock.advance(LEASE_MS - 1);
    assert!(alive.claim_expired().await.unwrap().claimed.is_empty());
    alive.renew_lease(&alice, &renewed.id).await.unwrap();
    clock.advance(2);
    let recovery = alive.claim_expired().await.unwrap();
    assert_eq!(recovery.failed.len(), 1, "{recovery:?}");
    assert_eq!(recovery.claimed.len(), 1, "{recovery:?}");
    let failed = engine_get(&alive, &alice, &plain.id).await;
    assert_eq!(failed.status, TaskStatus::Failed);
    let message = failed.status_message.unwrap_or_default();
    assert!(message.contains("stopped before it finished"), "{message}");
    assert_eq!(failed.error.as_ref().and_then(|e| e["code"].as_i64()), Some(-32603));
    let claimed = engine_get(&alive, &alice, &resumable.id).await;
    assert_eq!(claimed.status, TaskStatus::Working);
    assert_eq!(claimed.lease.as_ref().map(|l| l.owner.as_str()), Some("runner-b"));
    assert_eq!(claimed.arguments, json!({"n": 2}), "what is needed to run it again");
    assert_eq!(recovery.claimed[0], claimed);
    assert_eq!(engine_get(&alive, &alice, &finished.id).await, finished);
    assert_eq!(
        engine_get(&alive, &alice, &renewed.id).await.status,
        TaskStatus::Working
    );
    // The dead runner, if it was only slow, learns it lost the task.
    let lost = dead.renew_lease(&alice, &resumable.id).await;
    assert!(matches!(lost, Err(TaskError::LeaseLost(_))), "{lost:?}");
    // A second round finds nothing more.
    let again = alive.claim_expired().await.unwrap();
    assert!(again.failed.is_empty() && again.claimed.is_empty(), "{again:?}");
}

async fn engine_get(engine: &TaskEngine, owner: &str, id: &TaskId) -> TaskRecord {
    engine.get(owner, id).await.unwrap()
}

/// A task past its time to live is deleted, and its watchers are told; a
/// task without one stays.
pub async fn tasks_past_their_ttl_are_deleted(store: Arc<dyn TaskStore>) {
    let (engine, clock) = setup(store);
    let alice = owner("alice");
    let short = engine
        .create(NewTask::new(&alice, "t", json!({})).ttl_ms(1000))
        .await
        .unwrap();
    let kept = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let mut watch = engine.watch(&alice, &short.id).await.unwrap();
    assert_eq!(watch.next().await.unwrap(), Some(short.clone()));
    clock.advance(1000);
    // Not yet: it lives out its whole time to live.
    assert_eq!(engine.sweep_expired().await.unwrap(), 0);
    assert_eq!(engine.get(&alice, &short.id).await.unwrap(), short);
    clock.advance(1);
    assert_eq!(engine.sweep_expired().await.unwrap(), 1);
    assert!(matches!(
        engine.get(&alice, &short.id).await,
        Err(TaskError::NotFound(_))
    ));
    assert_eq!(engine.get(&alice, &kept.id).await.unwrap(), kept);
    // The deletion is already on the channel; the timeout turns a missing
    // one into a failure instead of a hang.
    let told = tokio::time::timeout(std::time::Duration::from_secs(10), watch.next()).await;
    assert!(matches!(told, Ok(Ok(None))), "{told:?}");
    // A requested time to live beyond the limit is shortened to it.
    let long = engine
        .create(NewTask::new(&alice, "t", json!({})).ttl_ms(u64::MAX))
        .await
        .unwrap();
    assert_eq!(long.ttl_ms, Some(engine.config().max_ttl_ms));
}

/// Metadata (a protocol's bookkeeping) still changes once a task ended, by
/// compare and swap, without touching its status or result.
pub async fn metadata_changes_after_the_end_by_compare_and_swap(store: Arc<dyn TaskStore>) {
    let (engine, _clock) = setup(store);
    let alice = owner("alice");
    let task = engine.create(NewTask::new(&alice, "t", json!({}))).await.unwrap();
    let done = engine
        .transition(&alice, &task.id, 1, Transition::complete(json!({"ok": true})))
        .await
        .unwrap();
    let noted = engine
        .annotate(&alice, &task.id, done.version, json!({"push": []}))
        .await
        .unwrap();
    assert_eq!(noted.version, done.version + 1);
    let read = engine.get(&alice, &task.id).await.unwrap();
    assert_eq!(read.metadata, Some(json!({"push": []})));
    assert_eq!(
        (read.status, read.result.clone()),
        (TaskStatus::Completed, Some(json!({"ok": true})))
    );
    // A writer that read the older version loses, and changes nothing.
    let stale = engine
        .annotate(&alice, &task.id, done.version, json!({"push": ["x"]}))
        .await;
    assert!(matches!(stale, Err(TaskError::VersionConflict { .. })), "{stale:?}");
    assert_eq!(
        engine.get(&alice, &task.id).await.unwrap().metadata,
        Some(json!({"push": []}))
    );
    // Another principal's task is not found.
    let bob = owner("bob");
    assert!(matches!(
        engine.annotate(&bob, &task.id, noted.version, json!({})).await,
        Err(TaskError::NotFound(_))
    ));
}
