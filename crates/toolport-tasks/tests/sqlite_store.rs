//! The shared store suite on SQLite, each case in a file of its own, plus
//! what only a file shows: a reopened file has every task, and a file from
//! a newer build is refused.

use std::sync::Arc;

use serde_json::json;
use toolport_tasks::{NewTask, SqliteStore, TaskEngine, TaskStore, Transition};

async fn store(dir: &tempfile::TempDir) -> Arc<dyn TaskStore> {
    Arc::new(SqliteStore::open_in(dir.path()).await.unwrap())
}

/// A store in a temporary directory of its own, kept while the case runs.
async fn case_store(_case: &str) -> (tempfile::TempDir, Arc<dyn TaskStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    (dir, store)
}

toolport_tasks::store_suite!(case_store);

#[tokio::test]
async fn a_reopened_file_has_every_task_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let engine = TaskEngine::new(store(&dir).await);
    let running = engine
        .create(NewTask::new("alice", "t", json!({"a": 1})))
        .await
        .unwrap();
    let done = engine.create(NewTask::new("alice", "t", json!({}))).await.unwrap();
    let done = engine
        .update(
            "alice",
            &done.id,
            Transition::complete(json!({"content": [{"type": "text", "text": "hi"}]})),
        )
        .await
        .unwrap();
    drop(engine);
    let reopened = TaskEngine::new(store(&dir).await);
    assert_eq!(reopened.get("alice", &running.id).await.unwrap(), running);
    assert_eq!(reopened.get("alice", &done.id).await.unwrap(), done);
}

#[tokio::test]
async fn a_file_from_a_newer_build_is_refused_not_changed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.sqlite3");
    {
        let connection = rusqlite_connection(&path);
        connection.pragma_update(None, "user_version", 99).unwrap();
    }
    let refused = SqliteStore::open(&path).await.unwrap_err();
    assert!(refused.to_string().contains("schema version 99"), "{refused}");
    assert_eq!(
        rusqlite_connection(&path)
            .pragma_query_value(None, "user_version", |row| row.get::<_, i64>(0))
            .unwrap(),
        99
    );
}

#[tokio::test]
async fn a_path_that_cannot_be_a_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-db");
    std::fs::write(
        &path,
        b"this is not a SQLite file, just some text long enough to have a header",
    )
    .unwrap();
    let refused = SqliteStore::open(&path).await.unwrap_err();
    assert!(refused.to_string().contains("SQLite"), "{refused}");
}

fn rusqlite_connection(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}
