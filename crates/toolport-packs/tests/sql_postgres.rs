//! The SQL pack on a real PostgreSQL (`.ci/run` installs and starts it and
//! loads `tests/postgres/setup.sql`): the bypass corpus refused by the
//! parser and, where PostgreSQL can, by the database alone; the data
//! unchanged; sessions reset when a pooled connection is reused; results
//! typed.
//!
//! `TOOLPORT_TEST_POSTGRES_URL` points elsewhere than the default
//! `postgres://toolport_ro:toolport_ro@127.0.0.1:5432/toolport_demo`.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::Client;
use common::sql::{assert_all_refused, bypasses, table_names};
use serde_json::{Value, json};
use toolport_packs::sql::{SqlConfig, SqlPack};
use toolport_server::Server;

fn url() -> String {
    std::env::var("TOOLPORT_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://toolport_ro:toolport_ro@127.0.0.1:5432/toolport_demo".into())
}

async fn connect(pool_size: usize, max_rows: usize) -> (SqlPack, Client) {
    let config = SqlConfig {
        database: Some(url()),
        pool_size: Some(pool_size),
        max_rows,
        statement_timeout_ms: 1500,
        ..SqlConfig::default()
    };
    let pack = SqlPack::connect(&config).await.expect("PostgreSQL from .ci/run");
    let server = pack.clone().install(Server::builder("pg-test", "0")).build().unwrap();
    (pack, Client::new(server))
}

/// Row counts of every table, to show nothing changed.
async fn counts(pack: &SqlPack) -> Value {
    let rows = pack
        .query(
            "SELECT (SELECT count(*) FROM customers), (SELECT count(*) FROM products), \
             (SELECT count(*) FROM orders), (SELECT count(*) FROM order_items), \
             (SELECT sum(price) FROM products), (SELECT last_value FROM order_seq)",
        )
        .await
        .unwrap();
    json!(rows.rows)
}

#[tokio::test]
#[ignore = "needs PostgreSQL (.ci/run starts it)"]
async fn every_published_bypass_is_refused_and_nothing_changes() {
    let (pack, client) = connect(2, 500).await;
    let before = counts(&pack).await;
    // A directory the server's own user could write to, to show it did not.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let corpus = bypasses("postgres", dir.path());
    assert!(corpus.len() >= 30, "{} entries", corpus.len());
    // pg_terminate_backend would end the test's own connection; its refusal
    // by the parser is what is shown here.
    assert_all_refused(&client, &pack, &corpus).await;
    assert_eq!(counts(&pack).await, before);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the server wrote a file"
    );
    let tables = client.ok("list_tables", json!({})).await;
    assert!(!tables.to_string().contains("pwned"), "{tables}");
}

#[tokio::test]
#[ignore = "needs PostgreSQL (.ci/run starts it)"]
async fn session_side_effects_do_not_survive_into_the_next_query() {
    // One connection, so the next query reuses it.
    let (pack, _) = connect(1, 500).await;
    pack.query_without_parser_check("SELECT pg_advisory_lock(4242)")
        .await
        .unwrap();
    pack.query_without_parser_check("SELECT set_config('application_name', 'pwned', false)")
        .await
        .unwrap();
    let locks = pack
        .query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
        .await
        .unwrap();
    assert_eq!(locks.rows, [[json!(0)]], "the advisory lock was released on reuse");
    let name = pack.query("SELECT current_setting('application_name')").await.unwrap();
    assert_ne!(name.rows[0][0], "pwned", "session settings were reset on reuse");
    let timeout = pack.query("SELECT current_setting('statement_timeout')").await.unwrap();
    assert_eq!(timeout.rows, [[json!("1500ms")]]);
}

#[tokio::test]
#[ignore = "needs PostgreSQL (.ci/run starts it)"]
async fn results_are_typed_capped_and_described() {
    let (_pack, client) = connect(2, 3).await;
    let rows = client
        .ok(
            "query",
            json!({"sql": "SELECT id, name, country, created_at, external_id, true AS yes, 1.5::float8 AS f, NULL::int AS n FROM customers WHERE id = 2"}),
        )
        .await;
    assert_eq!(
        rows["rows"][0],
        json!([
            2,
            "Customer 2",
            "NL",
            "2025-01-03T00:00:00Z",
            "00000000-0000-4000-8000-000000000002",
            true,
            1.5,
            null
        ])
    );
    assert_eq!(rows["columns"][3], json!({"name": "created_at", "type": "timestamptz"}));
    let money = client
        .ok(
            "query",
            json!({"sql": "SELECT price, ordered_on FROM products, orders WHERE products.id = 4 AND orders.id = 1"}),
        )
        .await;
    assert_eq!(money["rows"][0], json!(["39.05", "2025-03-02"]));
    let capped = client
        .ok("query", json!({"sql": "SELECT * FROM orders ORDER BY id"}))
        .await;
    assert_eq!(
        (capped["rowCount"].clone(), capped["truncated"].clone()),
        (json!(3), json!(true))
    );
    let plan = client
        .ok("query", json!({"sql": "EXPLAIN SELECT * FROM orders WHERE id = 3"}))
        .await;
    assert!(plan["rows"].to_string().contains("orders_pkey"), "{plan}");
    let odd = client.ok("query", json!({"sql": "SELECT ARRAY[1, 2] AS a"})).await;
    assert!(odd["rows"][0][0].as_str().unwrap().contains("cast it to text"), "{odd}");

    let tables = client.ok("list_tables", json!({})).await;
    assert_eq!(tables["database"], "PostgreSQL");
    let names = table_names(&tables);
    assert_eq!(
        names,
        ["customers", "order_items", "order_totals", "orders", "products"]
    );
    let products = client.ok("describe_table", json!({"table": "products"})).await;
    assert_eq!(
        products["columns"][3],
        json!({"name": "price", "type": "numeric", "nullable": false, "primaryKey": false})
    );
    assert_eq!(products["columns"][0]["primaryKey"], true);
    let read = client
        .request("resources/read", json!({"uri": "sql://postgres/tables/products"}))
        .await
        .unwrap();
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("TAOCP"));
    let slow = client
        .refused(
            "query",
            json!({"sql": "SELECT count(*) FROM generate_series(1, 1000000000)"}),
        )
        .await;
    assert!(slow.contains("statement timeout"), "{slow}");
}
