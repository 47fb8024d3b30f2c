//! The shared store suite on a real PostgreSQL (`.ci/run` installs and
//! starts it and loads `tests/postgres/setup.sql`), each case in a schema
//! of its own so the cases may run at once; plus what only a shared
//! database shows: two processes' engines on one database see each other's
//! tasks and migrate once.
//!
//! `TOOLPORT_TEST_TASKS_POSTGRES_URL` points elsewhere than the default
//! `postgres://toolport_tasks:toolport_tasks@127.0.0.1:5432/toolport_tasks`.

use std::sync::Arc;

use serde_json::json;
use toolport_tasks::{NewTask, PostgresStore, TaskEngine, TaskError, TaskStore, Transition};

fn url() -> String {
    std::env::var("TOOLPORT_TEST_TASKS_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://toolport_tasks:toolport_tasks@127.0.0.1:5432/toolport_tasks".into())
}

/// A store in a fresh schema named after the case.
async fn store(case: &str) -> PostgresStore {
    let schema = format!("suite_{case}");
    drop_schema(&schema).await;
    PostgresStore::connect_in(&url(), Some(&schema), 8)
        .await
        .expect("PostgreSQL from .ci/run")
}

async fn drop_schema(schema: &str) {
    let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .await
        .unwrap();
    drop(client);
    driver.await.unwrap().unwrap();
}

/// A store in the case's own schema; nothing to keep alive.
async fn case_store(case: &str) -> ((), Arc<dyn TaskStore>) {
    ((), Arc::new(store(case).await))
}

toolport_tasks::store_suite!(case_store, #[ignore = "needs PostgreSQL (.ci/run starts it)"]);

#[tokio::test]
#[ignore = "needs PostgreSQL (.ci/run starts it)"]
async fn engines_sharing_a_database_see_one_set_of_tasks() {
    let first = store("shared").await;
    // A second process connecting to a migrated schema migrates nothing.
    let second = PostgresStore::connect_in(&url(), Some("suite_shared"), 2)
        .await
        .unwrap();
    let (a, b) = (TaskEngine::new(Arc::new(first)), TaskEngine::new(Arc::new(second)));
    let task = a.create(NewTask::new("alice", "t", json!({"x": 1}))).await.unwrap();
    let done = b
        .update("alice", &task.id, Transition::complete(json!("from b")))
        .await
        .unwrap();
    assert_eq!(a.get("alice", &task.id).await.unwrap(), done);
    let refused = a.cancel("alice", &task.id, None).await;
    assert!(matches!(refused, Err(TaskError::AlreadyTerminal { .. })), "{refused:?}");
}

#[tokio::test]
async fn an_unreachable_or_malformed_database_is_a_clear_error() {
    // A port nothing listens on (loopback): refused at once, no service needed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("postgres://nobody:secret@127.0.0.1:{port}/none");
    let refused = PostgresStore::connect(&url, 1).await.unwrap_err().to_string();
    assert!(refused.contains("no PostgreSQL connection"), "{refused}");
    assert!(!refused.contains("secret"), "the password leaked: {refused}");
    let malformed = PostgresStore::connect("postgres://a:b@host:notaport/db", 1)
        .await
        .unwrap_err();
    assert!(malformed.to_string().contains("URL is not valid"), "{malformed}");
    let schema = PostgresStore::connect_in(&url, Some("x; DROP TABLE tasks"), 1)
        .await
        .unwrap_err();
    assert!(schema.to_string().contains("not a lowercase identifier"), "{schema}");
}
