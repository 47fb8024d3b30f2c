//! The first line of defence: a statement is parsed (sqlparser) before the
//! database sees it, so the common ways to smuggle a write past a read-only
//! tool get a clear refusal. The database enforces read-only on its own
//! (see `sqlite.rs`, `postgres.rs`); this check only makes refusals
//! readable and catches side effects a read-only transaction allows.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Query, SetExpr, Statement, Visit, Visitor};
use sqlparser::dialect::{Dialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;

use super::SqlError;

/// Which database the statement is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Sqlite,
    Postgres,
}

impl Flavor {
    fn dialect(self) -> Box<dyn Dialect> {
        match self {
            Flavor::Sqlite => Box::new(SQLiteDialect {}),
            Flavor::Postgres => Box::new(PostgreSqlDialect {}),
        }
    }

    /// The name people know it by.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Flavor::Sqlite => "SQLite",
            Flavor::Postgres => "PostgreSQL",
        }
    }
}

/// Functions that write files, run programs, change server state or take
/// locks, even inside a read-only transaction, or that run SQL given as a
/// string (which this check could not see). Names are compared lowercased.
const DENIED_FUNCTIONS: &[(&str, &str)] = &[
    ("load_extension", "loads native code into the database"),
    ("fts3_tokenizer", "can register native code with SQLite"),
    ("writefile", "writes files"),
    ("readfile", "reads files outside the database"),
    ("edit", "starts an editor"),
    ("lo_export", "writes files on the database server"),
    ("lo_import", "reads files on the database server"),
    ("pg_read_file", "reads files on the database server"),
    ("pg_read_binary_file", "reads files on the database server"),
    ("pg_stat_file", "reads files on the database server"),
    ("set_config", "changes the session's settings"),
    ("nextval", "advances a sequence"),
    ("setval", "changes a sequence"),
    ("pg_notify", "sends notifications"),
    ("pg_terminate_backend", "ends other sessions"),
    ("pg_cancel_backend", "cancels other sessions' queries"),
    ("pg_reload_conf", "reloads the server's configuration"),
    ("pg_rotate_logfile", "rotates the server's log"),
    ("pg_promote", "promotes a standby"),
    ("pg_switch_wal", "switches the write-ahead log"),
    ("pg_create_restore_point", "writes to the write-ahead log"),
    ("txid_current", "assigns a transaction id"),
    ("pg_current_xact_id", "assigns a transaction id"),
    ("pg_export_snapshot", "exports a snapshot"),
    ("query_to_xml", "runs SQL given as a string"),
    ("query_to_xmlschema", "runs SQL given as a string"),
    ("query_to_xml_and_xmlschema", "runs SQL given as a string"),
    ("cursor_to_xml", "reads from a cursor"),
];

/// Families of functions, by prefix.
const DENIED_PREFIXES: &[(&str, &str)] = &[
    ("lo_", "works on large objects, some of which write"),
    ("pg_ls_", "lists files on the database server"),
    ("pg_file_", "changes files on the database server"),
    ("pg_advisory", "takes advisory locks"),
    ("pg_try_advisory", "takes advisory locks"),
    ("pg_sleep", "only waits"),
    ("dblink", "connects to other databases"),
    ("pg_replication_", "changes replication state"),
    ("pg_logical_", "writes to the write-ahead log"),
    ("pg_create_", "creates server objects"),
    ("pg_drop_", "drops server objects"),
];

fn denied_function(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    DENIED_FUNCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .or_else(|| DENIED_PREFIXES.iter().find(|(p, _)| name.starts_with(p)))
        .map(|(_, why)| *why)
}

fn refuse(message: impl Into<String>) -> SqlError {
    SqlError::Refused(message.into())
}

/// Checks that `sql` is exactly one read-only statement: a query (SELECT,
/// VALUES, WITH … SELECT, set operations) or EXPLAIN of one, with no
/// data-modifying part, no `SELECT … INTO`, no row locks and no denied
/// function. Returns whether it is an EXPLAIN.
pub(crate) fn check(sql: &str, flavor: Flavor) -> Result<(), SqlError> {
    let statements = Parser::parse_sql(&*flavor.dialect(), sql).map_err(|e| {
        refuse(format!(
            "refused: the statement could not be parsed as {} ({e}); send one SELECT statement",
            flavor.name()
        ))
    })?;
    let statement = match statements.as_slice() {
        [] => return Err(refuse("refused: there is no statement; send one SELECT statement")),
        [one] => one,
        many => {
            return Err(refuse(format!(
                "refused: {} statements were sent; the query tool runs exactly one read-only statement (stacked statements such as `COMMIT; DROP ...` are how read-only checks are bypassed)",
                many.len()
            )));
        }
    };
    let query = match statement {
        Statement::Query(query) => query,
        Statement::Explain { statement, .. } => match statement.as_ref() {
            Statement::Query(query) => query,
            other => {
                return Err(refuse(format!(
                    "refused: EXPLAIN of a {} statement; only queries may be explained",
                    keyword(other)
                )));
            }
        },
        other => {
            return Err(refuse(format!(
                "refused: {} is not a read-only query; the query tool runs SELECT, VALUES, WITH ... SELECT and EXPLAIN only",
                keyword(other)
            )));
        }
    };
    match query.visit(&mut ReadOnly) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// The statement's first keyword, for messages.
fn keyword(statement: &Statement) -> String {
    let text = statement.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    match words.as_slice() {
        [first, second] if matches!(first.to_ascii_uppercase().as_str(), "CREATE" | "DROP" | "ALTER") => {
            format!("{} {}", first.to_ascii_uppercase(), second.to_ascii_uppercase())
        }
        [first, ..] => first.to_ascii_uppercase(),
        [] => "an empty".into(),
    }
}

/// Walks a query; breaks at the first part that writes or has side effects.
struct ReadOnly;

impl Visitor for ReadOnly {
    type Break = SqlError;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<SqlError> {
        if !query.locks.is_empty() {
            return ControlFlow::Break(refuse(
                "refused: row locks (FOR UPDATE / FOR SHARE) are not allowed in a read-only query",
            ));
        }
        if let SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) = query.body.as_ref() {
            return ControlFlow::Break(refuse(
                "refused: the query contains a data-modifying statement (INSERT, UPDATE, DELETE or MERGE, e.g. in a writable CTE)",
            ));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &sqlparser::ast::Select) -> ControlFlow<SqlError> {
        if select.into.is_some() {
            return ControlFlow::Break(refuse(
                "refused: SELECT ... INTO creates a table; the query tool only reads",
            ));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<SqlError> {
        // Any statement nested inside the query (a writable CTE's body).
        ControlFlow::Break(refuse(format!(
            "refused: the query contains a {} statement (e.g. in a writable CTE); the query tool only reads",
            keyword(statement)
        )))
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<SqlError> {
        if let Expr::Function(function) = expr {
            let name = function
                .name
                .0
                .last()
                .map(|part| part.to_string().trim_matches('"').to_owned())
                .unwrap_or_default();
            if let Some(why) = denied_function(&name) {
                return ControlFlow::Break(refuse(format!(
                    "refused: the function {name}() {why}; the query tool runs side-effect-free reads only"
                )));
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(sql: &str, flavor: Flavor) -> String {
        match check(sql, flavor) {
            Err(SqlError::Refused(m)) => m,
            other => panic!("{sql}: expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn plain_queries_pass() {
        for sql in [
            "SELECT 1",
            "select * from customers where id = 3;",
            "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
            "SELECT a FROM x UNION SELECT b FROM y",
            "VALUES (1), (2)",
            "EXPLAIN QUERY PLAN SELECT * FROM orders",
            "SELECT count(*), upper(name) FROM customers GROUP BY 2",
        ] {
            check(sql, Flavor::Sqlite).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        check("EXPLAIN SELECT * FROM orders", Flavor::Postgres).unwrap();
        check("SELECT now()::date, '{1,2}'::int[]", Flavor::Postgres).unwrap();
    }

    #[test]
    fn writes_and_side_effects_are_refused_with_the_reason() {
        assert!(refused("COMMIT; DROP TABLE t", Flavor::Postgres).contains("2 statements"));
        assert!(refused("", Flavor::Sqlite).contains("no statement"));
        assert!(refused("DELETE FROM t", Flavor::Sqlite).contains("DELETE is not a read-only query"));
        assert!(refused("DROP TABLE t", Flavor::Sqlite).contains("DROP TABLE"));
        let cte = refused(
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            Flavor::Postgres,
        );
        assert!(cte.contains("writable CTE"), "{cte}");
        assert!(refused("SELECT * INTO t2 FROM t", Flavor::Postgres).contains("SELECT ... INTO"));
        assert!(refused("SELECT * FROM t FOR UPDATE", Flavor::Postgres).contains("row locks"));
        assert!(refused("SELECT lo_export(1, '/tmp/x')", Flavor::Postgres).contains("lo_export()"));
        assert!(refused("SELECT pg_catalog.PG_READ_FILE('x')", Flavor::Postgres).contains("reads files"));
        assert!(refused("SELECT load_extension('x')", Flavor::Sqlite).contains("native code"));
        assert!(refused("EXPLAIN DELETE FROM t", Flavor::Postgres).contains("EXPLAIN of a DELETE"));
        assert!(refused("SELEC 1", Flavor::Sqlite).contains("could not be parsed"));
    }
}
