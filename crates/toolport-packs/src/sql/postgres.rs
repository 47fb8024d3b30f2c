//! PostgreSQL: every statement runs in its own read-only transaction with a
//! `statement_timeout`, through the extended protocol (which accepts exactly
//! one statement), and is rolled back. The role should only be able to
//! read; a superuser is refused unless allowed. Connections come from a pool
//! that resets session state (settings, advisory locks, listeners) whenever
//! a connection is reused.

use std::error::Error as StdError;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use serde_json::{Value, json};
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::{NoTls, Row};

use super::{Column, ColumnInfo, Rows, SqlError, TableDescription, TableInfo};
use crate::time::{date, timestamp_micros};

/// A pool of connections as one role.
pub(crate) struct Postgres {
    pool: Pool,
    timeout: Duration,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The database's own message, with its detail and hint.
fn db_error(e: tokio_postgres::Error) -> SqlError {
    match e.as_db_error() {
        Some(db) => {
            let mut message = db.message().to_owned();
            if let Some(detail) = db.detail() {
                message.push_str(&format!(" ({detail})"));
            }
            if let Some(hint) = db.hint() {
                message.push_str(&format!("; hint: {hint}"));
            }
            if db.code() == &tokio_postgres::error::SqlState::QUERY_CANCELED {
                return SqlError::Database(format!("{message} (the statement timeout stopped it)"));
            }
            SqlError::Database(message)
        }
        None => SqlError::Database(match e.source() {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        }),
    }
}

/// Any PostgreSQL value as JSON: the common types natively, numerics and
/// dates as text, other types as a note saying to cast them.
struct PgValue(Value);

impl<'a> FromSql<'a> for PgValue {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        let value = match *ty {
            Type::BOOL => json!(bool::from_sql(ty, raw)?),
            Type::INT2 => json!(i16::from_sql(ty, raw)?),
            Type::INT4 => json!(i32::from_sql(ty, raw)?),
            Type::INT8 => json!(i64::from_sql(ty, raw)?),
            Type::OID => json!(u32::from_sql(ty, raw)?),
            Type::FLOAT4 => float(f64::from(f32::from_sql(ty, raw)?)),
            Type::FLOAT8 => float(f64::from_sql(ty, raw)?),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::CHAR => {
                json!(String::from_utf8_lossy(raw))
            }
            Type::JSON | Type::JSONB => Value::from_sql(ty, raw)?,
            Type::BYTEA => json!({ "base64": STANDARD.encode(raw) }),
            Type::NUMERIC => json!(numeric(raw)?),
            Type::DATE => {
                let days = i32::from_sql(&Type::INT4, raw)?;
                json!(date(i64::from(days) + 10_957))
            }
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                let micros = i64::from_sql(&Type::INT8, raw)?;
                json!(timestamp_micros(micros + 946_684_800_000_000))
            }
            Type::UUID if raw.len() == 16 => {
                let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
                json!(format!(
                    "{}-{}-{}-{}-{}",
                    &hex[..8],
                    &hex[8..12],
                    &hex[12..16],
                    &hex[16..20],
                    &hex[20..]
                ))
            }
            _ => json!(format!(
                "<{} value: cast it to text in the query, e.g. col::text>",
                ty.name()
            )),
        };
        Ok(PgValue(value))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(PgValue(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

fn float(f: f64) -> Value {
    if f.is_finite() { json!(f) } else { json!(f.to_string()) }
}

/// PostgreSQL's binary NUMERIC: base-10000 digits, a weight, a sign and a
/// display scale; as decimal text, so no precision is lost.
fn numeric(raw: &[u8]) -> Result<String, Box<dyn StdError + Sync + Send>> {
    let word = |i: usize| -> Result<u16, Box<dyn StdError + Sync + Send>> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "short NUMERIC value".into())
    };
    let (count, weight, sign, scale) = (word(0)? as usize, word(1)? as i16, word(2)?, word(3)? as usize);
    match sign {
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        _ => {}
    }
    let digits: Vec<u16> = (0..count).map(|i| word(4 + i)).collect::<Result<_, _>>()?;
    let digit = |i: i32| -> u16 {
        if i >= 0 {
            digits.get(i as usize).copied().unwrap_or(0)
        } else {
            0
        }
    };
    let mut int_part = String::new();
    for i in 0..=i32::from(weight).max(-1) {
        let d = digit(i);
        if int_part.is_empty() {
            if d != 0 {
                int_part = d.to_string();
            }
        } else {
            int_part.push_str(&format!("{d:04}"));
        }
    }
    if int_part.is_empty() {
        int_part.push('0');
    }
    let mut frac = String::new();
    let mut i = i32::from(weight) + 1;
    while frac.len() < scale {
        frac.push_str(&format!("{:04}", digit(i)));
        i += 1;
    }
    frac.truncate(scale);
    let negative = sign == 0x4000;
    let mut out = if negative { format!("-{int_part}") } else { int_part };
    if scale > 0 {
        out.push('.');
        out.push_str(&frac);
    }
    Ok(out)
}

impl Postgres {
    /// Connects a pool of `size` and checks the role.
    pub(crate) async fn connect(
        url: &str,
        size: usize,
        timeout: Duration,
        allow_superuser: bool,
    ) -> Result<Postgres, SqlError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| SqlError::Setup(format!("the PostgreSQL URL is not valid: {e}")))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Clean,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .build()
            .map_err(|e| SqlError::Setup(format!("cannot build the connection pool: {e}")))?;
        let db = Postgres { pool, timeout };
        let client = db.client().await?;
        let row = client
            .query_one(
                "SELECT current_user::text, rolsuper FROM pg_roles WHERE rolname = current_user",
                &[],
            )
            .await
            .map_err(|e| SqlError::Setup(format!("cannot check the PostgreSQL role: {}", db_error(e))))?;
        let (role, superuser): (String, bool) = (row.get(0), row.get(1));
        if superuser && !allow_superuser {
            return Err(SqlError::Setup(format!(
                "refusing to run queries as the PostgreSQL superuser {role:?}: connect as a role that can only read (see docs/packs.md), or set allow_superuser"
            )));
        }
        Ok(db)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, SqlError> {
        self.pool
            .get()
            .await
            .map_err(|e| SqlError::Database(format!("no database connection: {e}")))
    }

    /// Runs one statement in a read-only transaction that is rolled back,
    /// fetching at most `max_rows + 1` rows.
    async fn run(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        max_rows: usize,
    ) -> Result<(Vec<Column>, Vec<Row>), SqlError> {
        let mut client = self.client().await?;
        let ms = self.timeout.as_millis().max(1);
        let work = async {
            let tx = client
                .build_transaction()
                .read_only(true)
                .start()
                .await
                .map_err(db_error)?;
            tx.batch_execute(&format!(
                "SET LOCAL statement_timeout = {ms}; SET LOCAL lock_timeout = {ms}; SET LOCAL idle_in_transaction_session_timeout = {}",
                ms * 2
            ))
            .await
            .map_err(db_error)?;
            // Prepared through the extended protocol: one statement only.
            let statement = tx.prepare(sql).await.map_err(db_error)?;
            let columns = statement
                .columns()
                .iter()
                .map(|c| Column {
                    name: c.name().to_owned(),
                    type_name: Some(c.type_().name().to_owned()),
                })
                .collect();
            let portal = tx.bind(&statement, params).await.map_err(db_error)?;
            let fetch = i32::try_from(max_rows.saturating_add(1)).unwrap_or(i32::MAX);
            let rows = tx.query_portal(&portal, fetch).await.map_err(db_error)?;
            tx.rollback().await.map_err(db_error)?;
            Ok((columns, rows))
        };
        // The statement timeout stops the query; this also covers a
        // connection that stops answering.
        match tokio::time::timeout(self.timeout + Duration::from_secs(2), work).await {
            Ok(result) => result,
            Err(_) => Err(SqlError::Timeout(ms as u64)),
        }
    }

    pub(crate) async fn query(&self, sql: &str, max_rows: usize) -> Result<Rows, SqlError> {
        let (columns, rows) = self.run(sql, &[], max_rows).await?;
        let truncated = rows.len() > max_rows;
        let rows: Vec<Vec<Value>> = rows
            .iter()
            .take(max_rows)
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, PgValue>(i).map(|v| v.0))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()
            .map_err(db_error)?;
        Ok(Rows {
            columns,
            row_count: rows.len(),
            rows,
            truncated,
            max_rows,
        })
    }

    pub(crate) async fn list_tables(&self) -> Result<Vec<TableInfo>, SqlError> {
        let (_, rows) = self
            .run(
                "SELECT table_schema::text, table_name::text, table_type::text FROM information_schema.tables \
                 WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
                &[],
                100_000,
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| {
                let (schema, name, kind): (String, String, String) = (r.get(0), r.get(1), r.get(2));
                TableInfo {
                    name: if schema == "public" {
                        name
                    } else {
                        format!("{schema}.{name}")
                    },
                    kind: if kind == "VIEW" { "view" } else { "table" }.to_owned(),
                }
            })
            .collect())
    }

    pub(crate) async fn describe(&self, table: &str) -> Result<TableDescription, SqlError> {
        let (schema, name) = table.split_once('.').unwrap_or(("public", table));
        // pg_catalog, not information_schema, for the primary key: the
        // latter hides constraints from a role that may only read.
        let (_, rows) = self
            .run(
                "SELECT c.column_name::text, c.data_type::text, c.is_nullable = 'YES', c.column_default::text, \
                   EXISTS (SELECT 1 FROM pg_index i \
                           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) \
                           WHERE i.indrelid = format('%I.%I', c.table_schema, c.table_name)::regclass \
                             AND i.indisprimary AND a.attname = c.column_name), \
                   (SELECT table_type::text FROM information_schema.tables t \
                     WHERE t.table_schema = c.table_schema AND t.table_name = c.table_name) \
                 FROM information_schema.columns c WHERE c.table_schema = $1 AND c.table_name = $2 \
                 ORDER BY c.ordinal_position",
                &[&schema, &name],
                10_000,
            )
            .await?;
        let kind = rows
            .first()
            .map(|r| r.get::<_, Option<String>>(5).unwrap_or_default())
            .map(|k| if k == "VIEW" { "view" } else { "table" })
            .unwrap_or("table");
        Ok(TableDescription {
            name: table.to_owned(),
            kind: kind.to_owned(),
            columns: rows
                .iter()
                .map(|r| ColumnInfo {
                    name: r.get(0),
                    type_name: r.get(1),
                    nullable: r.get(2),
                    default: r.get(3),
                    primary_key: r.get(4),
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::numeric;

    fn words(w: &[u16]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn numerics_decode_exactly() {
        // 12345.678: digits [1, 2345, 6780], weight 1, scale 3.
        assert_eq!(numeric(&words(&[3, 1, 0, 3, 1, 2345, 6780])).unwrap(), "12345.678");
        // -0.05: digits [500], weight -1, scale 2.
        assert_eq!(numeric(&words(&[1, (-1i16) as u16, 0x4000, 2, 500])).unwrap(), "-0.05");
        assert_eq!(numeric(&words(&[0, 0, 0, 0])).unwrap(), "0");
        // 10000: digits [1], weight 1, scale 0.
        assert_eq!(numeric(&words(&[1, 1, 0, 0, 1])).unwrap(), "10000");
        assert_eq!(numeric(&words(&[0, 0, 0xC000, 0])).unwrap(), "NaN");
    }
}
