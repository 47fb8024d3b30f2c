//! The shared store: PostgreSQL, for several Toolport processes serving
//! one set of tasks. A swap is one `UPDATE ... WHERE version = $n`: under
//! READ COMMITTED a second writer waits for the first, then re-checks the
//! version on the row the first one wrote, so exactly one of two racing
//! swaps based on one version succeeds.

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use serde_json::Value;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

use super::ListPosition;
use super::columns::{self, ColumnReader, Driver, Param, read_task};
use crate::error::StoreError;
use crate::id::TaskId;
use crate::record::{Millis, TaskRecord};

/// The schema, one step per entry; `task_schema_version` counts the steps
/// applied.
const MIGRATIONS: &[&str] = &[include_str!("../../migrations/postgres/0001_tasks.sql")];

/// Any number: processes migrating at once take this transaction lock in
/// turn.
const MIGRATION_LOCK: i64 = 0x7461_736b_7300;

/// How long a call waits for a connection before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Tasks in a PostgreSQL database.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password: not shown.
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

fn db_error(what: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| match e.as_db_error() {
        Some(db) => StoreError::new(format!("PostgreSQL {what}: {} ({})", db.message(), db.code().code())),
        None => StoreError::new(format!("PostgreSQL {what}: {e}")),
    }
}

/// Whether `name` is a plain lowercase SQL identifier, safe to put in a
/// statement unquoted.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z' | '_'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && name.len() <= 63
}

impl PostgresStore {
    /// Connects a pool of `pool_size` to the database at `url`
    /// (`postgres://user:password@host:port/database`) and brings the
    /// schema up to date.
    pub async fn connect(url: &str, pool_size: usize) -> Result<PostgresStore, StoreError> {
        PostgresStore::connect_in(url, None, pool_size).await
    }

    /// As [`connect`](PostgresStore::connect), with the tables in `schema`
    /// (created if missing; a lowercase identifier).
    pub async fn connect_in(url: &str, schema: Option<&str>, pool_size: usize) -> Result<PostgresStore, StoreError> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::new(format!("the PostgreSQL URL is not valid: {e}")))?;
        if let Some(schema) = schema {
            if !is_identifier(schema) {
                return Err(StoreError::new(format!(
                    "the schema name {schema:?} is not a lowercase identifier (a-z, 0-9, _)"
                )));
            }
            config.options(format!("-c search_path={schema}"));
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::new(format!("cannot build the PostgreSQL pool: {e}")))?;
        let store = PostgresStore { pool };
        store.migrate(schema).await?;
        Ok(store)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| StoreError::new(format!("no PostgreSQL connection: {e}")))
    }

    async fn migrate(&self, schema: Option<&str>) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error("migration"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(db_error("migration lock"))?;
        if let Some(schema) = schema {
            tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .await
                .map_err(db_error("creating the schema"))?;
        }
        tx.batch_execute("CREATE TABLE IF NOT EXISTS task_schema_version (version integer NOT NULL)")
            .await
            .map_err(db_error("migration"))?;
        let applied: Option<i32> = tx
            .query_opt("SELECT version FROM task_schema_version", &[])
            .await
            .map_err(db_error("migration"))?
            .map(|row| row.get(0));
        let applied = applied.map_or(0, |v| usize::try_from(v).unwrap_or(0));
        if applied > MIGRATIONS.len() {
            return Err(StoreError::new(format!(
                "the task database has schema version {applied}, newer than this build knows ({})",
                MIGRATIONS.len()
            )));
        }
        for migration in &MIGRATIONS[applied..] {
            tx.batch_execute(migration).await.map_err(db_error("migration"))?;
        }
        let version = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
        tx.execute("DELETE FROM task_schema_version", &[])
            .await
            .map_err(db_error("migration"))?;
        tx.execute("INSERT INTO task_schema_version (version) VALUES ($1)", &[&version])
            .await
            .map_err(db_error("migration"))?;
        tx.commit().await.map_err(db_error("migration"))
    }
}

/// A [`Param`] as the driver binds it; JSON as `jsonb`.
fn bound(param: Param) -> Box<dyn ToSql + Sync + Send> {
    match param {
        Param::Text(text) => Box::new(text),
        Param::Int(int) => Box::new(int),
        Param::Bool(flag) => Box::new(flag),
        Param::Json(json) => Box::new(json),
    }
}

/// The driver's view of bound values.
fn refs(bound: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    bound.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
}

impl ColumnReader for Row {
    fn text(&self, column: &str) -> Result<Option<String>, StoreError> {
        self.try_get(column).map_err(db_error("row"))
    }

    fn int(&self, column: &str) -> Result<Option<i64>, StoreError> {
        self.try_get(column).map_err(db_error("row"))
    }

    fn flag(&self, column: &str) -> Result<bool, StoreError> {
        self.try_get(column).map_err(db_error("row"))
    }

    fn json(&self, column: &str) -> Result<Option<Value>, StoreError> {
        self.try_get(column).map_err(db_error("row"))
    }
}

#[async_trait]
impl Driver for PostgresStore {
    // Two processes sweeping at once delete disjoint tasks.
    const DELETE_LOCK: &'static str = "FOR UPDATE SKIP LOCKED";

    async fn query(&self, sql: &str, params: Vec<Param>) -> Result<Vec<TaskRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await.map_err(db_error("prepare"))?;
        let bound: Vec<_> = params.into_iter().map(bound).collect();
        let rows = client
            .query(&statement, &refs(&bound))
            .await
            .map_err(db_error("query"))?;
        rows.iter().map(read_task).collect()
    }

    async fn execute(&self, sql: &str, params: Vec<Param>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await.map_err(db_error("prepare"))?;
        let bound: Vec<_> = params.into_iter().map(bound).collect();
        client
            .execute(&statement, &refs(&bound))
            .await
            .map_err(db_error("write"))
    }
}

columns::task_store_over_driver!(PostgresStore);

#[cfg(test)]
mod tests {
    use super::is_identifier;

    #[test]
    fn only_plain_lowercase_identifiers_are_schema_names() {
        for good in ["tasks", "_t", "toolport_tasks_2"] {
            assert!(is_identifier(good), "{good}");
        }
        for bad in ["", "Tasks", "1tasks", "t;drop", "t-1", "\"t\"", &"a".repeat(64)] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }
}
