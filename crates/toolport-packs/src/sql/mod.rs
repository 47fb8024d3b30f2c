//! The SQL pack: a `query` tool that runs exactly one read-only statement,
//! `list_tables`, `describe_table`, tables as resources and a
//! `query-with-explain` prompt, over embedded SQLite (the default) or
//! PostgreSQL.
//!
//! Read-only is enforced by the database: SQLite is opened read-only with
//! `query_only` and an authorizer that denies every write, ATTACH, PRAGMA
//! other than schema reads, and `load_extension`; PostgreSQL statements run
//! in a read-only transaction with a `statement_timeout`, as a role that
//! should only be able to read (the pack refuses a superuser). Statements
//! are parsed first so that several statements, writable CTEs and the like
//! get a clear refusal before the database sees them.

mod demo;
pub(crate) mod guard;
mod postgres;
mod sqlite;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolport_server::ServerBuilder;

pub use demo::{DEMO_FILE, create_demo_database};
use guard::Flavor;

/// Settings of the SQL pack.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SqlConfig {
    /// `postgres://user@host/db` (or `postgresql://`), `sqlite:<path>`, or a
    /// path to an SQLite file. Absent: the demo SQLite database in
    /// `data_dir`, created on first run.
    pub database: Option<String>,
    /// Where the demo database lives; see [`crate::default_data_dir`].
    pub data_dir: Option<PathBuf>,
    /// Most rows one query returns; more set `truncated`.
    pub max_rows: usize,
    /// How long one statement may run, in milliseconds.
    pub statement_timeout_ms: u64,
    /// Connections in the pool; absent: `DB_POOL_SIZE` from the
    /// environment, or 4.
    pub pool_size: Option<usize>,
    /// The name in table resource URIs (`sql://<name>/tables/<table>`).
    pub name: Option<String>,
    /// Let PostgreSQL connect as a superuser (refused by default: a
    /// superuser can bypass read-only in too many ways).
    pub allow_superuser: bool,
}

impl Default for SqlConfig {
    fn default() -> Self {
        SqlConfig {
            database: None,
            data_dir: None,
            max_rows: 500,
            statement_timeout_ms: 5000,
            pool_size: None,
            name: None,
            allow_superuser: false,
        }
    }
}

/// Why a statement did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// The statement is not one read-only query.
    #[error("{0}")]
    Refused(String),
    /// The database refused or failed it.
    #[error("the database refused the statement: {0}")]
    Database(String),
    /// It ran longer than the statement timeout.
    #[error("the statement ran longer than {0} ms and was stopped")]
    Timeout(u64),
    /// The pack could not start.
    #[error("{0}")]
    Setup(String),
}

/// A column of a result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its declared type, when the database says.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
}

/// The result of one query.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rows {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows, each a list of values in column order.
    pub rows: Vec<Vec<Value>>,
    /// How many rows are in `rows`.
    pub row_count: usize,
    /// Whether the query had more rows than `maxRows`.
    pub truncated: bool,
    /// The row cap.
    pub max_rows: usize,
}

/// A table or view.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TableInfo {
    /// Its name (`schema.table` outside PostgreSQL's `public` schema).
    pub name: String,
    /// "table" or "view".
    pub kind: String,
}

/// A column of a table.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ColumnInfo {
    /// Its name.
    pub name: String,
    /// Its declared type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Whether it may be NULL.
    pub nullable: bool,
    /// Its default, as SQL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Whether it is part of the primary key.
    pub primary_key: bool,
}

/// A table's columns.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TableDescription {
    /// The table.
    pub name: String,
    /// "table" or "view".
    pub kind: String,
    /// Its columns, in order.
    pub columns: Vec<ColumnInfo>,
}

/// A connected database.
#[derive(Debug)]
pub(crate) enum Backend {
    Sqlite(sqlite::Sqlite),
    Postgres(postgres::Postgres),
}

impl Backend {
    pub(crate) fn flavor(&self) -> Flavor {
        match self {
            Backend::Sqlite(_) => Flavor::Sqlite,
            Backend::Postgres(_) => Flavor::Postgres,
        }
    }

    /// Runs a statement without the parser's check: the database alone
    /// enforces read-only here. Only for statements this crate wrote, and
    /// for tests that show the database's own refusal.
    pub(crate) async fn run_unchecked(&self, sql: &str, max_rows: usize) -> Result<Rows, SqlError> {
        match self {
            Backend::Sqlite(db) => db.query(sql, max_rows).await,
            Backend::Postgres(db) => db.query(sql, max_rows).await,
        }
    }

    /// Checks, then runs, one statement.
    pub(crate) async fn query(&self, sql: &str, max_rows: usize) -> Result<Rows, SqlError> {
        guard::check(sql, self.flavor())?;
        self.run_unchecked(sql, max_rows).await
    }

    pub(crate) async fn list_tables(&self) -> Result<Vec<TableInfo>, SqlError> {
        match self {
            Backend::Sqlite(db) => db.list_tables().await,
            Backend::Postgres(db) => db.list_tables().await,
        }
    }

    pub(crate) async fn describe(&self, table: &str) -> Result<TableDescription, SqlError> {
        let description = match self {
            Backend::Sqlite(db) => db.describe(table).await?,
            Backend::Postgres(db) => db.describe(table).await?,
        };
        if description.columns.is_empty() {
            return Err(SqlError::Refused(format!(
                "there is no table or view named {table:?}; list_tables shows them"
            )));
        }
        Ok(description)
    }

    /// `SELECT * FROM <table>` with the table name quoted for this database.
    pub(crate) fn select_all(&self, table: &str) -> String {
        let quoted: Vec<String> = match self.flavor() {
            // `schema.table` in PostgreSQL; SQLite names may contain dots.
            Flavor::Postgres => table.split('.').map(quote_ident).collect(),
            Flavor::Sqlite => vec![quote_ident(table)],
        };
        format!("SELECT * FROM {}", quoted.join("."))
    }
}

/// An SQL identifier in double quotes.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The SQL pack. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SqlPack {
    pub(crate) shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) backend: Backend,
    pub(crate) name: String,
    pub(crate) max_rows: usize,
    pub(crate) tables: Vec<TableInfo>,
}

impl SqlPack {
    /// Connects (creating the demo database on first run when no database is
    /// configured) and reads the list of tables.
    pub async fn connect(config: &SqlConfig) -> Result<SqlPack, SqlError> {
        let timeout = Duration::from_millis(config.statement_timeout_ms.max(1));
        let pool_size = config
            .pool_size
            .or_else(|| std::env::var("DB_POOL_SIZE").ok().and_then(|v| v.trim().parse().ok()))
            .unwrap_or(4)
            .clamp(1, 256);
        let (backend, default_name) = match config.database.as_deref() {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => (
                Backend::Postgres(postgres::Postgres::connect(url, pool_size, timeout, config.allow_superuser).await?),
                "postgres".to_owned(),
            ),
            Some(path) => {
                let path = PathBuf::from(path.strip_prefix("sqlite:").unwrap_or(path));
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "sqlite".into());
                (Backend::Sqlite(sqlite::Sqlite::open(&path, pool_size, timeout)?), name)
            }
            None => {
                let dir = config
                    .data_dir
                    .clone()
                    .unwrap_or_else(crate::data_dir::default_data_dir);
                let path = create_demo_database(&dir)?;
                (
                    Backend::Sqlite(sqlite::Sqlite::open(&path, pool_size, timeout)?),
                    "demo".to_owned(),
                )
            }
        };
        let tables = backend.list_tables().await?;
        Ok(SqlPack {
            shared: Arc::new(Shared {
                backend,
                name: config.name.clone().unwrap_or(default_name),
                max_rows: config.max_rows.max(1),
                tables,
            }),
        })
    }

    /// "SQLite" or "PostgreSQL".
    pub fn database_kind(&self) -> &'static str {
        self.shared.backend.flavor().name()
    }

    /// The tables and views found at connect time.
    pub fn tables(&self) -> &[TableInfo] {
        &self.shared.tables
    }

    /// Runs one statement as the `query` tool does: parser check, then the
    /// database's own read-only enforcement.
    pub async fn query(&self, sql: &str) -> Result<Rows, SqlError> {
        self.shared.backend.query(sql, self.shared.max_rows).await
    }

    /// Proves the database answers with the cheapest round trip (`SELECT 1`
    /// on a pooled connection), for readiness probes.
    pub async fn ping(&self) -> Result<(), SqlError> {
        self.shared.backend.run_unchecked("SELECT 1", 1).await.map(drop)
    }

    /// Runs a statement with only the database's enforcement, skipping the
    /// parser: for showing that the database refuses writes on its own.
    #[doc(hidden)]
    pub async fn query_without_parser_check(&self, sql: &str) -> Result<Rows, SqlError> {
        self.shared.backend.run_unchecked(sql, self.shared.max_rows).await
    }

    /// Adds the tools, the table resources and the prompt.
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        tools::install(&self.shared, builder)
    }
}
