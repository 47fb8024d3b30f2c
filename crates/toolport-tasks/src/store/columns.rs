//! A task as table columns, one mapping for both databases: the SQL text,
//! the values bound to it, and the reading of a row. Each store only
//! teaches its driver to bind a [`Param`] and to read a column through
//! [`ColumnReader`].
//!
//! [`TaskStore`]: super::TaskStore

use std::sync::LazyLock;

use async_trait::async_trait;
use serde_json::Value;

use super::ListPosition;
use crate::error::StoreError;
use crate::id::TaskId;
use crate::record::{Lease, Millis, TaskRecord};

/// Every column, in the order the statements below bind them.
const COLUMNS: &str = "id, owner, status, status_message, created_at, updated_at, ttl_ms, expires_at, \
     poll_interval_ms, input_requests, result, error, version, lease_owner, lease_expires_at, resumable, \
     tool, arguments, context_id, metadata";

/// The statuses a swap may no longer change, spelled for SQL.
const TERMINAL: &str = "('completed', 'failed', 'cancelled', 'rejected')";

/// A statement built once from the column list.
type Statement = LazyLock<String>;

// The statements both stores run. Parameters are `$n`: PostgreSQL's
// numbered parameters, and to SQLite named ones numbered in order of first
// appearance, which every statement here keeps equal to `n`.
static INSERT: Statement = LazyLock::new(|| {
    format!(
        "INSERT INTO tasks ({COLUMNS}) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
    )
});
static GET: Statement = LazyLock::new(|| format!("SELECT {COLUMNS} FROM tasks WHERE id = $1 AND owner = $2"));
static LIST_FIRST: Statement = LazyLock::new(|| {
    format!("SELECT {COLUMNS} FROM tasks WHERE owner = $1 ORDER BY created_at DESC, id DESC LIMIT $2")
});
static LIST_AFTER: Statement = LazyLock::new(|| {
    format!(
        "SELECT {COLUMNS} FROM tasks WHERE owner = $1 AND (created_at, id) < ($2, $3) \
         ORDER BY created_at DESC, id DESC LIMIT $4"
    )
});
static SWAP: Statement = LazyLock::new(|| {
    format!(
        "UPDATE tasks SET status = $1, status_message = $2, updated_at = $3, input_requests = $4, \
         result = $5, error = $6, version = $7, lease_owner = $8, lease_expires_at = $9, metadata = $10 \
         WHERE id = $11 AND version = $12 AND status NOT IN {TERMINAL}"
    )
});
static ANNOTATE: Statement =
    LazyLock::new(|| "UPDATE tasks SET version = $1, metadata = $2 WHERE id = $3 AND version = $4".to_owned());
static EXPIRED_LEASES: Statement = LazyLock::new(|| {
    format!(
        "SELECT {COLUMNS} FROM tasks WHERE lease_expires_at < $1 AND status NOT IN {TERMINAL} \
         ORDER BY lease_expires_at LIMIT $2"
    )
});

/// The deletion of expired tasks; `lock` is what the inner select adds to
/// keep two deleting processes apart (PostgreSQL's `FOR UPDATE SKIP
/// LOCKED`; SQLite locks the whole file anyway).
fn delete_expired_statement(lock: &str) -> String {
    format!(
        "DELETE FROM tasks WHERE id IN \
         (SELECT id FROM tasks WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 {lock}) \
         RETURNING {COLUMNS}"
    )
}

/// What a store's driver does: run one statement with bound values. The
/// [`TaskStore`] methods are the same for every driver (the functions
/// below); each store forwards to them.
#[async_trait]
pub(super) trait Driver: Send + Sync {
    /// The lock clause of the expired tasks' deletion.
    const DELETE_LOCK: &'static str;

    /// Runs a statement returning task rows.
    async fn query(&self, sql: &str, params: Vec<Param>) -> Result<Vec<TaskRecord>, StoreError>;

    /// Runs a statement; returns how many rows it changed.
    async fn execute(&self, sql: &str, params: Vec<Param>) -> Result<u64, StoreError>;
}

/// `TaskStore::insert` on `driver`.
pub(super) async fn insert(driver: &impl Driver, task: &TaskRecord) -> Result<(), StoreError> {
    driver.execute(&INSERT, insert_params(task)).await.map(drop)
}

/// `TaskStore::get` on `driver`.
pub(super) async fn get(driver: &impl Driver, owner: &str, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
    Ok(driver.query(&GET, vec![text(id.as_str()), text(owner)]).await?.pop())
}

/// `TaskStore::list` on `driver`.
pub(super) async fn list(
    driver: &impl Driver,
    owner: &str,
    after: Option<&ListPosition>,
    count: usize,
) -> Result<Vec<TaskRecord>, StoreError> {
    match after {
        None => driver.query(&LIST_FIRST, vec![text(owner), limit(count)]).await,
        Some(after) => {
            let params = vec![
                text(owner),
                Param::Int(Some(after.created_at)),
                text(after.id.as_str()),
                limit(count),
            ];
            driver.query(&LIST_AFTER, params).await
        }
    }
}

/// `TaskStore::swap` on `driver`.
pub(super) async fn swap(driver: &impl Driver, task: &TaskRecord, expected_version: u64) -> Result<bool, StoreError> {
    Ok(driver.execute(&SWAP, swap_params(task, expected_version)).await? == 1)
}

/// `TaskStore::annotate` on `driver`.
pub(super) async fn annotate(
    driver: &impl Driver,
    task: &TaskRecord,
    expected_version: u64,
) -> Result<bool, StoreError> {
    let params = vec![
        int(task.version),
        Param::Json(task.metadata.clone()),
        text(task.id.as_str()),
        int(expected_version),
    ];
    Ok(driver.execute(&ANNOTATE, params).await? == 1)
}

/// `TaskStore::expired_leases` on `driver`.
pub(super) async fn expired_leases(
    driver: &impl Driver,
    now: Millis,
    count: usize,
) -> Result<Vec<TaskRecord>, StoreError> {
    driver
        .query(&EXPIRED_LEASES, vec![Param::Int(Some(now)), limit(count)])
        .await
}

/// `TaskStore::delete_expired` on `driver`.
pub(super) async fn delete_expired<D: Driver>(
    driver: &D,
    now: Millis,
    count: usize,
) -> Result<Vec<TaskRecord>, StoreError> {
    let sql = delete_expired_statement(D::DELETE_LOCK);
    driver.query(&sql, vec![Param::Int(Some(now)), limit(count)]).await
}

/// One bound value.
#[derive(Debug, Clone)]
pub(super) enum Param {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(bool),
    Json(Option<Value>),
}

fn text(value: &str) -> Param {
    Param::Text(Some(value.to_owned()))
}

fn int(value: u64) -> Param {
    Param::Int(Some(i64::try_from(value).unwrap_or(i64::MAX)))
}

fn limit(limit: usize) -> Param {
    Param::Int(Some(i64::try_from(limit).unwrap_or(i64::MAX)))
}

/// The values of the insertion.
fn insert_params(task: &TaskRecord) -> Vec<Param> {
    vec![
        text(task.id.as_str()),
        text(&task.owner),
        text(task.status.as_str()),
        Param::Text(task.status_message.clone()),
        Param::Int(Some(task.created_at)),
        Param::Int(Some(task.updated_at)),
        Param::Int(task.ttl_ms.map(|v| i64::try_from(v).unwrap_or(i64::MAX))),
        Param::Int(task.expires_at),
        int(task.poll_interval_ms),
        Param::Json(task.input_requests.clone()),
        Param::Json(task.result.clone()),
        Param::Json(task.error.clone()),
        int(task.version),
        Param::Text(task.lease.as_ref().map(|l| l.owner.clone())),
        Param::Int(task.lease.as_ref().map(|l| l.expires_at)),
        Param::Bool(task.resumable),
        text(&task.tool),
        Param::Json(Some(task.arguments.clone())),
        Param::Text(task.context_id.clone()),
        Param::Json(task.metadata.clone()),
    ]
}

/// The values of the swap.
fn swap_params(task: &TaskRecord, expected_version: u64) -> Vec<Param> {
    vec![
        text(task.status.as_str()),
        Param::Text(task.status_message.clone()),
        Param::Int(Some(task.updated_at)),
        Param::Json(task.input_requests.clone()),
        Param::Json(task.result.clone()),
        Param::Json(task.error.clone()),
        int(task.version),
        Param::Text(task.lease.as_ref().map(|l| l.owner.clone())),
        Param::Int(task.lease.as_ref().map(|l| l.expires_at)),
        Param::Json(task.metadata.clone()),
        text(task.id.as_str()),
        int(expected_version),
    ]
}

/// Reads one column of a row by name; each driver implements it.
pub(super) trait ColumnReader {
    /// A text column.
    fn text(&self, column: &str) -> Result<Option<String>, StoreError>;
    /// An integer column.
    fn int(&self, column: &str) -> Result<Option<i64>, StoreError>;
    /// A boolean column.
    fn flag(&self, column: &str) -> Result<bool, StoreError>;
    /// A JSON column.
    fn json(&self, column: &str) -> Result<Option<Value>, StoreError>;
}

fn required<T>(column: &str, value: Option<T>) -> Result<T, StoreError> {
    value.ok_or_else(|| StoreError::new(format!("the stored {column} is missing")))
}

/// Converts a stored integer to `u64`, refusing what no engine wrote.
fn unsigned(column: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::new(format!("the stored {column} is negative: {value}")))
}

/// The task in `row`.
pub(super) fn read_task(row: &impl ColumnReader) -> Result<TaskRecord, StoreError> {
    let status = required("status", row.text("status")?)?;
    Ok(TaskRecord {
        id: TaskId::from(required("id", row.text("id")?)?),
        owner: required("owner", row.text("owner")?)?,
        status: status.parse().map_err(|e| StoreError::new(format!("{e}")))?,
        status_message: row.text("status_message")?,
        created_at: required("created_at", row.int("created_at")?)?,
        updated_at: required("updated_at", row.int("updated_at")?)?,
        ttl_ms: row.int("ttl_ms")?.map(|v| unsigned("ttl_ms", v)).transpose()?,
        expires_at: row.int("expires_at")?,
        poll_interval_ms: unsigned(
            "poll_interval_ms",
            required("poll_interval_ms", row.int("poll_interval_ms")?)?,
        )?,
        input_requests: row.json("input_requests")?,
        result: row.json("result")?,
        error: row.json("error")?,
        version: unsigned("version", required("version", row.int("version")?)?)?,
        lease: match (row.text("lease_owner")?, row.int("lease_expires_at")?) {
            (Some(owner), Some(expires_at)) => Some(Lease { owner, expires_at }),
            _ => None,
        },
        resumable: row.flag("resumable")?,
        tool: required("tool", row.text("tool")?)?,
        arguments: required("arguments", row.json("arguments")?)?,
        context_id: row.text("context_id")?,
        metadata: row.json("metadata")?,
    })
}

/// The [`TaskStore`](super::TaskStore) methods of a store that implements
/// [`Driver`]: the same for every driver, written once here.
macro_rules! task_store_over_driver {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::store::TaskStore for $store {
            async fn insert(&self, task: &TaskRecord) -> Result<(), StoreError> {
                columns::insert(self, task).await
            }

            async fn get(&self, owner: &str, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
                columns::get(self, owner, id).await
            }

            async fn list(
                &self,
                owner: &str,
                after: Option<&ListPosition>,
                limit: usize,
            ) -> Result<Vec<TaskRecord>, StoreError> {
                columns::list(self, owner, after, limit).await
            }

            async fn swap(&self, task: &TaskRecord, expected_version: u64) -> Result<bool, StoreError> {
                columns::swap(self, task, expected_version).await
            }

            async fn annotate(&self, task: &TaskRecord, expected_version: u64) -> Result<bool, StoreError> {
                columns::annotate(self, task, expected_version).await
            }

            async fn expired_leases(&self, now: Millis, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
                columns::expired_leases(self, now, limit).await
            }

            async fn delete_expired(&self, now: Millis, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
                columns::delete_expired(self, now, limit).await
            }
        }
    };
}
pub(super) use task_store_over_driver;
