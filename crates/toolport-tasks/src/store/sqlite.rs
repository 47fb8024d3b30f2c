//! The default store: one SQLite file in the data directory. WAL journal
//! with `synchronous = FULL`, so a task is on disk when `insert` or `swap`
//! returns, and several processes may share the file (SQLite's file locks
//! order their writes; a busy file is waited for).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::types::ToSqlOutput;
use rusqlite::{Connection, Row, ToSql, TransactionBehavior};
use serde_json::Value;

use super::ListPosition;
use super::columns::{self, ColumnReader, Driver, Param, read_task};
use crate::error::StoreError;
use crate::id::TaskId;
use crate::record::{Millis, TaskRecord};

/// The schema, one step per entry; `PRAGMA user_version` counts the steps
/// applied.
const MIGRATIONS: &[&str] = &[include_str!("../../migrations/sqlite/0001_tasks.sql")];

/// The file's name inside the data directory.
pub const SQLITE_FILE_NAME: &str = "tasks.sqlite3";

/// How long a write waits for another process holding the file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Tasks in a SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn sql_error(what: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::new(format!("SQLite {what}: {e}"))
}

impl SqliteStore {
    /// Opens (creating if needed) the task file in `data_dir`.
    pub async fn open_in(data_dir: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open(&data_dir.join(SQLITE_FILE_NAME)).await
    }

    /// Opens (creating if needed) the task file at `path` and brings its
    /// schema up to date.
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let path = path.to_path_buf();
        let opened = path.clone();
        let connection = tokio::task::spawn_blocking(move || open_and_migrate(&opened))
            .await
            .map_err(|e| StoreError::new(format!("opening the task file stopped: {e}")))??;
        Ok(SqliteStore {
            connection: Arc::new(Mutex::new(connection)),
            path,
        })
    }

    /// The file this store writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on the connection off the async threads.
    async fn with<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let mut connection = connection
                .lock()
                .map_err(|_| StoreError::new("the SQLite connection was poisoned by a panic"))?;
            work(&mut connection)
        })
        .await
        .map_err(|e| StoreError::new(format!("a SQLite call stopped: {e}")))?
    }
}

fn open_and_migrate(path: &Path) -> Result<Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| StoreError::new(format!("cannot create the directory {}: {e}", parent.display())))?;
    }
    let mut connection = Connection::open(path)
        .map_err(|e| StoreError::new(format!("cannot open the task file {}: {e}", path.display())))?;
    let setup = (|| -> rusqlite::Result<()> {
        connection.busy_timeout(BUSY_TIMEOUT)?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: a committed transaction survives a power cut, not only a
        // crash of this process; "durable before it returns" means this.
        connection.pragma_update(None, "synchronous", "FULL")?;
        connection.pragma_update(None, "trusted_schema", false)?;
        Ok(())
    })();
    setup.map_err(sql_error("setup"))?;
    // IMMEDIATE: two processes starting at once migrate one after the other.
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_error("migration"))?;
    let applied: i64 = tx
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(sql_error("migration"))?;
    let applied = usize::try_from(applied).unwrap_or(usize::MAX);
    if applied > MIGRATIONS.len() {
        return Err(StoreError::new(format!(
            "the task file {} has schema version {applied}, newer than this build knows ({})",
            path.display(),
            MIGRATIONS.len()
        )));
    }
    for migration in &MIGRATIONS[applied..] {
        tx.execute_batch(migration).map_err(sql_error("migration"))?;
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len() as i64)
        .map_err(sql_error("migration"))?;
    tx.commit().map_err(sql_error("migration"))?;
    Ok(connection)
}

/// Binds a [`Param`]; JSON is stored as its text.
struct Bound(Param);

impl ToSql for Bound {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match &self.0 {
            Param::Text(text) => text.to_sql(),
            Param::Int(int) => int.to_sql(),
            Param::Bool(flag) => flag.to_sql(),
            Param::Json(Some(json)) => Ok(ToSqlOutput::from(json.to_string())),
            Param::Json(None) => Ok(ToSqlOutput::from(rusqlite::types::Null)),
        }
    }
}

impl ColumnReader for Row<'_> {
    fn text(&self, column: &str) -> Result<Option<String>, StoreError> {
        self.get(column).map_err(sql_error("row"))
    }

    fn int(&self, column: &str) -> Result<Option<i64>, StoreError> {
        self.get(column).map_err(sql_error("row"))
    }

    fn flag(&self, column: &str) -> Result<bool, StoreError> {
        self.get(column).map_err(sql_error("row"))
    }

    fn json(&self, column: &str) -> Result<Option<Value>, StoreError> {
        let text: Option<String> = self.get(column).map_err(sql_error("row"))?;
        text.map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| StoreError::new(format!("the stored {column} is not JSON: {e}")))
    }
}

fn bind(params: Vec<Param>) -> Vec<Bound> {
    params.into_iter().map(Bound).collect()
}

#[async_trait]
impl Driver for SqliteStore {
    const DELETE_LOCK: &'static str = "";

    async fn query(&self, sql: &str, params: Vec<Param>) -> Result<Vec<TaskRecord>, StoreError> {
        let sql = sql.to_owned();
        self.with(move |c| {
            let mut statement = c.prepare_cached(&sql).map_err(sql_error("query"))?;
            let mut rows = statement
                .query(rusqlite::params_from_iter(bind(params)))
                .map_err(sql_error("query"))?;
            let mut tasks = Vec::new();
            while let Some(row) = rows.next().map_err(sql_error("query"))? {
                tasks.push(read_task(row)?);
            }
            Ok(tasks)
        })
        .await
    }

    async fn execute(&self, sql: &str, params: Vec<Param>) -> Result<u64, StoreError> {
        let sql = sql.to_owned();
        self.with(move |c| {
            let mut statement = c.prepare_cached(&sql).map_err(sql_error("write"))?;
            let changed = statement
                .execute(rusqlite::params_from_iter(bind(params)))
                .map_err(sql_error("write"))?;
            Ok(u64::try_from(changed).unwrap_or(u64::MAX))
        })
        .await
    }
}

columns::task_store_over_driver!(SqliteStore);
