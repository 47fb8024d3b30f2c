//! A process running tasks is killed with SIGKILL while it writes; after a
//! restart every finished task's result is there, every plain running task
//! ends failed with a message saying its process stopped, every resumable
//! one is handed to the new runner, and none stays working.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use toolport_tasks::{
    Clock, EngineConfig, ManualClock, SqliteStore, SystemClock, TaskEngine, TaskId, TaskStatus, Transition,
};

const FINISHED: usize = 20;
const PLAIN: usize = 10;
const RESUMABLE: usize = 10;

/// The worker's lease (src/bin/worker.rs), plus a margin.
const PAST_THE_LEASE_MS: i64 = 61_000;

/// The worker process, killed if the test fails before it does.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ids(line: &Value, key: &str) -> Vec<TaskId> {
    serde_json::from_value(line[key].clone()).unwrap()
}

#[tokio::test]
async fn a_killed_runner_leaves_results_and_no_task_working() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.sqlite3");
    let mut worker = Worker(
        Command::new(env!("CARGO_BIN_EXE_toolport-tasks-worker"))
            .arg(&file)
            .args([FINISHED, PLAIN, RESUMABLE].map(|n| n.to_string()))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(worker.0.stdout.take().unwrap()).lines();
    let announced: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let (finished, running) = (ids(&announced, "finished"), ids(&announced, "running"));
    assert_eq!((finished.len(), running.len()), (FINISHED, PLAIN + RESUMABLE));
    // Kill it in the middle of its progress writes, a few rounds in.
    for expected in 1..=3 {
        assert_eq!(lines.next().unwrap().unwrap(), format!("round {expected}"));
    }
    worker.0.kill().unwrap(); // SIGKILL
    let status = worker.0.wait().unwrap();
    assert!(!status.success(), "the worker was not killed: {status}");

    // The restart: a new process's engine, its clock past the dead lease.
    let clock = Arc::new(ManualClock::new(SystemClock.now_ms() + PAST_THE_LEASE_MS));
    let config = EngineConfig {
        runner_id: "restarted".into(),
        ..EngineConfig::default()
    };
    let store = Arc::new(SqliteStore::open(&file).await.unwrap());
    let engine = TaskEngine::with_config(store, config, clock);
    for (n, id) in finished.iter().enumerate() {
        let task = engine.get("alice", id).await.unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(task.result.unwrap()["content"][0]["text"], format!("counted {n}"));
    }
    let recovery = engine.claim_expired().await.unwrap();
    let failed: HashSet<_> = recovery.failed.iter().map(|t| t.id.clone()).collect();
    let claimed: HashSet<_> = recovery.claimed.iter().map(|t| t.id.clone()).collect();
    assert_eq!(failed, running[..PLAIN].iter().cloned().collect());
    assert_eq!(claimed, running[PLAIN..].iter().cloned().collect());
    for task in &recovery.failed {
        let message = task.status_message.as_deref().unwrap_or_default();
        assert!(message.contains("process running this task stopped"), "{message}");
    }
    // The resumable ones run again here, from what was stored, and finish.
    for task in recovery.claimed {
        assert_eq!(task.lease.as_ref().unwrap().owner, "restarted");
        let n = task.arguments["n"].as_u64().unwrap();
        engine
            .update("alice", &task.id, Transition::complete(json!({ "rerun": n })))
            .await
            .unwrap();
    }
    // Nothing is left running: every task of the file has ended.
    let page = engine.list("alice", None, Some(100)).await.unwrap();
    assert_eq!(page.tasks.len(), FINISHED + PLAIN + RESUMABLE);
    let unfinished: Vec<_> = page.tasks.iter().filter(|t| !t.status.is_terminal()).collect();
    assert!(unfinished.is_empty(), "{unfinished:?}");
}
