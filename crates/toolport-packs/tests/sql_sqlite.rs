//! The SQL pack on embedded SQLite (the default): the bypass corpus refused
//! by the parser and by the database on its own, the database unchanged
//! afterwards, and the tools, resources and prompt working.

mod common;

use std::time::Duration;

use common::Client;
use common::sql::{assert_all_refused, bypasses, table_names};
use serde_json::json;
use toolport_packs::sql::{SqlConfig, SqlPack};
use toolport_server::Server;

async fn demo(dir: &std::path::Path, max_rows: usize, timeout_ms: u64) -> (SqlPack, Client) {
    let config = SqlConfig {
        data_dir: Some(dir.to_owned()),
        max_rows,
        statement_timeout_ms: timeout_ms,
        ..SqlConfig::default()
    };
    let pack = SqlPack::connect(&config).await.unwrap();
    let server = pack.clone().install(Server::builder("sql-test", "0")).build().unwrap();
    (pack, Client::new(server))
}

#[tokio::test]
async fn every_published_bypass_is_refused_and_the_database_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (pack, client) = demo(dir.path(), 500, 5000).await;
    let file = dir.path().join(toolport_packs::sql::DEMO_FILE);
    let before = std::fs::read(&file).unwrap();
    let corpus = bypasses("sqlite", dir.path());
    assert!(corpus.len() >= 25, "{} entries", corpus.len());
    assert_all_refused(&client, &pack, &corpus).await;
    assert_eq!(std::fs::read(&file).unwrap(), before, "the database file changed");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["demo.sqlite"], "nothing else may appear beside it");
}

#[tokio::test]
async fn queries_return_structured_rows_with_a_cap_and_stop_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (_pack, client) = demo(dir.path(), 5, 300).await;
    let rows = client
        .ok(
            "query",
            json!({"sql": "SELECT id, name, country FROM customers WHERE country = 'GB' ORDER BY id"}),
        )
        .await;
    assert_eq!(rows["columns"][1], json!({"name": "name", "type": "TEXT"}));
    assert_eq!(rows["rows"][0], json!([1, "Ada Lovelace", "GB"]));
    assert_eq!(
        (rows["rowCount"].clone(), rows["truncated"].clone()),
        (json!(3), json!(false))
    );
    let capped = client.ok("query", json!({"sql": "SELECT * FROM orders"})).await;
    assert_eq!(
        (capped["rowCount"].clone(), capped["truncated"].clone()),
        (json!(5), json!(true))
    );
    let typed = client
        .ok("query", json!({"sql": "SELECT 1.5 AS r, NULL AS n, x'00ff' AS b, total_cents FROM order_totals WHERE order_id = 1"}))
        .await;
    assert_eq!(
        typed["rows"][0].as_array().unwrap()[..3],
        [json!(1.5), json!(null), json!({"base64": "AP8="})]
    );
    assert!(typed["rows"][0][3].is_i64());
    let plan = client
        .ok(
            "query",
            json!({"sql": "EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer_id = 3"}),
        )
        .await;
    assert!(plan["rows"].to_string().contains("orders_by_customer"), "{plan}");
    // A runaway query is interrupted and the connection is usable afterwards.
    let started = std::time::Instant::now();
    let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
    let message = client.refused("query", json!({ "sql": endless })).await;
    assert!(message.contains("longer than 300 ms"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
    for _ in 0..5 {
        client.ok("query", json!({"sql": "SELECT 1"})).await;
    }
    let message = client.refused("query", json!({"sql": "SELECT * FROM nope"})).await;
    assert!(message.contains("no such table: nope"), "{message}");
}

#[tokio::test]
async fn tables_are_listed_described_and_readable_as_resources() {
    let dir = tempfile::tempdir().unwrap();
    let (_pack, client) = demo(dir.path(), 500, 5000).await;
    let tables = client.ok("list_tables", json!({})).await;
    assert_eq!(tables["database"], "SQLite");
    let names = table_names(&tables);
    assert_eq!(
        names,
        ["customers", "order_items", "order_totals", "orders", "products"]
    );
    let described = client.ok("describe_table", json!({"table": "customers"})).await;
    assert_eq!(
        described["columns"][0],
        json!({"name": "id", "type": "INTEGER", "nullable": true, "primaryKey": true})
    );
    assert_eq!(described["columns"][2]["nullable"], false);
    let message = client
        .refused("describe_table", json!({"table": "nope\"; DROP TABLE x; --"}))
        .await;
    assert!(message.contains("no table or view named"), "{message}");

    let listed = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"sql://demo/tables/customers"), "{uris:?}");
    let read = client
        .request("resources/read", json!({"uri": "sql://demo/tables/products"}))
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["table"]["name"], "products");
    assert_eq!(body["firstRows"]["rowCount"], 8);
    let missing = client
        .request("resources/read", json!({"uri": "sql://demo/tables/nope"}))
        .await
        .unwrap_err();
    assert!(missing["message"].as_str().unwrap().contains("Resource not found"));

    let prompt = client
        .request(
            "prompts/get",
            json!({"name": "query-with-explain", "arguments": {"query": "SELECT * FROM orders;"}}),
        )
        .await
        .unwrap();
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("EXPLAIN QUERY PLAN SELECT * FROM orders\n"), "{text}");
    assert!(text.contains("order_items (table)"), "{text}");
    let completion = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "sql://demo/tables/{table}"}, "argument": {"name": "table", "value": "ord"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        completion["completion"]["values"],
        json!(["order_items", "order_totals", "orders"])
    );
}

#[tokio::test]
async fn the_demo_database_is_made_once_and_a_missing_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = toolport_packs::sql::create_demo_database(dir.path()).unwrap();
    let modified = std::fs::metadata(&first).unwrap().modified().unwrap();
    let second = toolport_packs::sql::create_demo_database(dir.path()).unwrap();
    assert_eq!(
        (first.clone(), modified),
        (second, std::fs::metadata(&first).unwrap().modified().unwrap())
    );
    let config = SqlConfig {
        database: Some(format!("sqlite:{}", dir.path().join("absent.db").display())),
        ..SqlConfig::default()
    };
    let error = SqlPack::connect(&config).await.unwrap_err().to_string();
    assert!(error.contains("no SQLite database at"), "{error}");
}
