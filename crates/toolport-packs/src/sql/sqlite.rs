//! SQLite, read-only three times over: the file is opened read-only (no
//! URI filenames), `query_only` is on, and an authorizer allows nothing but
//! reading: every write, ATTACH/DETACH, transaction control, schema change,
//! PRAGMA other than schema reads, and `load_extension` are denied when the
//! statement is compiled. A statement that runs too long is interrupted.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, InterruptHandle, OpenFlags};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::{Column, ColumnInfo, Rows, SqlError, TableDescription, TableInfo};

/// PRAGMAs that only read the schema (the `pragma_*` table-valued functions
/// `describe_table` uses).
const READ_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
];

/// Functions denied even though SQLite would call them for a read.
const DENIED_FUNCTIONS: &[&str] = &["load_extension", "fts3_tokenizer", "writefile", "readfile", "edit"];

/// The authorizer: allow reads, deny everything else.
fn authorize(context: AuthContext<'_>) -> Authorization {
    match context.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => Authorization::Allow,
        AuthAction::Function { function_name } => {
            if DENIED_FUNCTIONS.iter().any(|f| f.eq_ignore_ascii_case(function_name)) {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Pragma { pragma_name, .. } => {
            if READ_PRAGMAS.iter().any(|p| p.eq_ignore_ascii_case(pragma_name)) {
                Authorization::Allow
            } else {
                Authorization::Deny
            }
        }
        _ => Authorization::Deny,
    }
}

struct Slot {
    connection: Connection,
    interrupt: std::sync::Arc<InterruptHandle>,
}

/// A small pool of read-only connections to one file.
pub(crate) struct Sqlite {
    slots: Mutex<Vec<Slot>>,
    available: Semaphore,
    timeout: Duration,
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

fn db_error(e: rusqlite::Error) -> SqlError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::AuthorizationForStatementDenied => {
            SqlError::Database(format!("{e} (the connection is read-only: only reads are authorized)"))
        }
        rusqlite::Error::MultipleStatement => SqlError::Database("more than one statement was sent".into()),
        _ => SqlError::Database(e.to_string()),
    }
}

/// Opens one read-only, locked-down connection.
fn open_read_only(path: &Path) -> Result<Slot, SqlError> {
    // No SQLITE_OPEN_URI: a configured path is a path, never `file:...?mode=rw`.
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags)
        .map_err(|e| SqlError::Setup(format!("cannot open the SQLite database {}: {e}", path.display())))?;
    let setup = (|| -> rusqlite::Result<()> {
        connection.pragma_update(None, "query_only", true)?;
        // Functions called from views and triggers must be innocuous.
        connection.pragma_update(None, "trusted_schema", false)?;
        connection.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        connection.busy_timeout(Duration::from_millis(500))?;
        connection.authorizer(Some(authorize))?;
        Ok(())
    })();
    setup.map_err(|e| SqlError::Setup(format!("cannot lock down the SQLite connection: {e}")))?;
    let interrupt = std::sync::Arc::new(connection.get_interrupt_handle());
    Ok(Slot { connection, interrupt })
}

fn json_value(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) if f.is_finite() => json!(f),
        ValueRef::Real(f) => json!(f.to_string()),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => json!({ "base64": STANDARD.encode(b) }),
    }
}

fn run(connection: &Connection, sql: &str, max_rows: usize) -> Result<Rows, SqlError> {
    let mut statement = connection.prepare(sql).map_err(db_error)?;
    if !statement.readonly() {
        // The authorizer already denied every write; this is a last check.
        return Err(SqlError::Database("the statement would write".into()));
    }
    let columns: Vec<Column> = statement
        .columns()
        .iter()
        .map(|c| Column {
            name: c.name().to_owned(),
            type_name: c.decl_type().map(str::to_owned),
        })
        .collect();
    let width = columns.len();
    let mut rows = Vec::new();
    let mut truncated = false;
    let mut cursor = statement.query([]).map_err(db_error)?;
    while let Some(row) = cursor.next().map_err(db_error)? {
        if rows.len() == max_rows {
            truncated = true;
            break;
        }
        let values = (0..width)
            .map(|i| row.get_ref(i).map(json_value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(db_error)?;
        rows.push(values);
    }
    Ok(Rows {
        columns,
        row_count: rows.len(),
        rows,
        truncated,
        max_rows,
    })
}

impl Sqlite {
    /// Opens `size` read-only connections to the file at `path`.
    pub(crate) fn open(path: &Path, size: usize, timeout: Duration) -> Result<Sqlite, SqlError> {
        if !path.is_file() {
            return Err(SqlError::Setup(format!("no SQLite database at {}", path.display())));
        }
        let slots = (0..size).map(|_| open_read_only(path)).collect::<Result<Vec<_>, _>>()?;
        Ok(Sqlite {
            slots: Mutex::new(slots),
            available: Semaphore::new(size),
            timeout,
        })
    }

    /// Runs `work` on a free connection, off the async threads, interrupting
    /// it when it outlasts the timeout.
    async fn with_connection<T, F>(&self, work: F) -> Result<T, SqlError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, SqlError> + Send + 'static,
    {
        let _permit = self
            .available
            .acquire()
            .await
            .map_err(|_| SqlError::Setup("the database is closed".into()))?;
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .ok_or_else(|| SqlError::Database("no free database connection (one was lost to a crash)".into()))?;
        let interrupt = slot.interrupt.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            let result = work(&slot.connection);
            (slot, result)
        });
        let joined = match tokio::time::timeout(self.timeout, &mut job).await {
            Ok(joined) => joined,
            Err(_) => {
                interrupt.interrupt();
                if let Ok((slot, _)) = job.await {
                    self.slots.lock().unwrap_or_else(|p| p.into_inner()).push(slot);
                }
                return Err(SqlError::Timeout(self.timeout.as_millis() as u64));
            }
        };
        let (slot, result) = joined.map_err(|e| SqlError::Database(format!("the query stopped unexpectedly: {e}")))?;
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).push(slot);
        result
    }

    pub(crate) async fn query(&self, sql: &str, max_rows: usize) -> Result<Rows, SqlError> {
        let sql = sql.to_owned();
        self.with_connection(move |c| run(c, &sql, max_rows)).await
    }

    pub(crate) async fn list_tables(&self) -> Result<Vec<TableInfo>, SqlError> {
        let rows = self
            .query(
                "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                100_000,
            )
            .await?;
        Ok(rows
            .rows
            .into_iter()
            .map(|r| TableInfo {
                name: r[0].as_str().unwrap_or_default().to_owned(),
                kind: r[1].as_str().unwrap_or_default().to_owned(),
            })
            .collect())
    }

    pub(crate) async fn describe(&self, table: &str) -> Result<TableDescription, SqlError> {
        let name = table.to_owned();
        self.with_connection(move |c| {
            let kind: Option<String> = c
                .query_row(
                    "SELECT type FROM sqlite_schema WHERE name = ?1 AND type IN ('table', 'view')",
                    [&name],
                    |r| r.get(0),
                )
                .ok();
            let mut statement = c
                .prepare("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid")
                .map_err(db_error)?;
            let columns = statement
                .query_map([&name], |r| {
                    Ok(ColumnInfo {
                        name: r.get(0)?,
                        type_name: r.get(1)?,
                        nullable: r.get::<_, i64>(2)? == 0,
                        default: r.get(3)?,
                        primary_key: r.get::<_, i64>(4)? > 0,
                    })
                })
                .map_err(db_error)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(db_error)?;
            Ok(TableDescription {
                name,
                kind: kind.unwrap_or_else(|| "table".into()),
                columns,
            })
        })
        .await
    }
}
