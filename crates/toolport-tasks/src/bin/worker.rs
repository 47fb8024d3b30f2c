//! A process that runs tasks in a SQLite file until it is killed: the
//! victim of the recovery test (`tests/recovery.rs`), which SIGKILLs it
//! while it writes.
//!
//! `toolport-tasks-worker FILE FINISHED PLAIN RESUMABLE` creates FINISHED
//! tasks and completes them, then starts PLAIN tasks and RESUMABLE
//! resumable ones, prints one JSON line with the ids, and then reports
//! progress on every running task, round after round, printing `round N`
//! after each, until it is killed (or, if nobody kills it, for a bounded
//! number of rounds).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolport_tasks::{EngineConfig, NewTask, SqliteStore, SystemClock, TaskEngine, TaskStatus, Transition};

/// The owner of every task the worker makes.
const OWNER: &str = "alice";

/// How many progress rounds the worker makes if never killed.
const MAX_ROUNDS: usize = 10_000;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, finished, plain, resumable] = args.as_slice() else {
        return Err("usage: toolport-tasks-worker FILE FINISHED PLAIN RESUMABLE".into());
    };
    let (finished, plain, resumable): (usize, usize, usize) = (finished.parse()?, plain.parse()?, resumable.parse()?);
    let store = SqliteStore::open(&PathBuf::from(file)).await?;
    let config = EngineConfig {
        runner_id: format!("worker-{}", std::process::id()),
        lease: Duration::from_secs(60),
        ..EngineConfig::default()
    };
    let engine = TaskEngine::with_config(Arc::new(store), config, Arc::new(SystemClock));
    let mut done = Vec::new();
    for n in 0..finished {
        let task = engine.create(NewTask::new(OWNER, "count", json!({ "n": n }))).await?;
        let result = json!({ "content": [{ "type": "text", "text": format!("counted {n}") }] });
        engine.update(OWNER, &task.id, Transition::complete(result)).await?;
        done.push(task.id);
    }
    let mut running = Vec::new();
    for n in 0..plain + resumable {
        let new = NewTask::new(OWNER, "long", json!({ "n": n })).resumable(n >= plain);
        running.push(engine.create(new).await?.id);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", json!({ "finished": done, "running": running }))?;
    out.flush()?;
    for round in 1..=MAX_ROUNDS {
        for id in &running {
            let step = Transition::to(TaskStatus::Working).message(format!("round {round}"));
            engine.update(OWNER, id, step).await?;
        }
        writeln!(out, "round {round}")?;
        out.flush()?;
    }
    Ok(())
}
