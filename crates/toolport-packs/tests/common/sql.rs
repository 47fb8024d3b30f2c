//! The SQL bypass corpus, shared by the SQLite and PostgreSQL tests.

#![allow(dead_code, unreachable_pub)]

use std::path::Path;

use serde_json::Value;
use toolport_packs::sql::{SqlError, SqlPack};

use super::Client;

/// One published bypass.
#[derive(Debug)]
pub struct Bypass {
    /// Whether the database refuses it even without the parser check.
    pub database_refuses: bool,
    pub fragment: String,
    pub sql: String,
}

/// The entries for `database` ("sqlite" or "postgres"), with `{DIR}` filled in.
pub fn bypasses(database: &str, dir: &Path) -> Vec<Bypass> {
    include_str!("../corpus/sql_bypasses.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|line| {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            let [target, enforcer, fragment, sql] = cols[..] else {
                panic!("a corpus line needs four columns: {line}");
            };
            (target == "both" || target == database).then(|| Bypass {
                database_refuses: enforcer == "db",
                fragment: fragment.to_owned(),
                sql: sql.replace("{DIR}", &dir.display().to_string()),
            })
        })
        .collect()
}

/// Every entry is refused by the query tool with its message, and, where
/// the database is the enforcer, by the database alone too.
pub async fn assert_all_refused(client: &Client, pack: &SqlPack, corpus: &[Bypass]) {
    let mut wrong = Vec::new();
    for entry in corpus {
        let result = client.tool("query", serde_json::json!({ "sql": entry.sql })).await;
        let message = result["content"][0]["text"].as_str().unwrap_or_default();
        if result["isError"] != true || !message.contains(&entry.fragment) {
            wrong.push(format!("{:?}: {message:?} lacks {:?}", entry.sql, entry.fragment));
        }
        if entry.database_refuses {
            match pack.query_without_parser_check(&entry.sql).await {
                Err(SqlError::Database(_) | SqlError::Timeout(_)) => {}
                other => wrong.push(format!(
                    "{:?}: the database itself should refuse it, got {other:?}",
                    entry.sql
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} entries went wrong:\n{}",
        wrong.len(),
        corpus.len(),
        wrong.join("\n")
    );
}

/// The table names of a `list_tables` result.
pub fn table_names(tables: &Value) -> Vec<&str> {
    tables["tables"]
        .as_array()
        .expect("a list of tables")
        .iter()
        .map(|t| t["name"].as_str().expect("a table name"))
        .collect()
}
