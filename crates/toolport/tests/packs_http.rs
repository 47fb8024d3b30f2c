//! The packs over Streamable HTTP: a bare `toolport serve` serves both
//! packs on their embedded defaults and says how to connect; a file that
//! changes under a watched root reaches a legacy resource subscriber and a
//! 2026-07-28 listener exactly once each, within a second.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolport_http::HttpConfig;
use toolport_packs::{FsConfig, Packs, PacksConfig, RootConfig, SqlConfig};
use toolport_server::Server;

/// The next message on a stream within `limit`, if any.
async fn within(stream: &mut Streaming, limit: Duration) -> Option<Value> {
    tokio::time::timeout(limit, stream.next_message())
        .await
        .ok()
        .flatten()
        .map(|(_, m)| m)
}

#[tokio::test]
async fn a_changed_file_reaches_a_legacy_subscriber_and_a_listener_exactly_once_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("files");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("watched.txt"), "before").unwrap();
    std::fs::write(root.join("other.txt"), "other").unwrap();
    let config = PacksConfig {
        fs: FsConfig {
            roots: vec![RootConfig::read_only(&root)],
            ..FsConfig::default()
        },
        sql: SqlConfig {
            data_dir: Some(dir.path().join("data")),
            ..SqlConfig::default()
        },
        ..PacksConfig::default()
    };
    let packs = Packs::open(&config).await.unwrap();
    let server = packs.install(Server::builder("packs", "0")).build().unwrap();
    let _running = packs.start(&server).unwrap();
    let s = TestServer::start(server, HttpConfig::default()).await;
    let uri = format!("file://{}/watched.txt", root.display());

    // The legacy subscriber: a 2025-11-25 session, subscribed, with its GET stream open.
    let session = initialize(s.addr, "2025-11-25").await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": uri}});
    let (status, _, answer) = call(s.addr, "POST", &legacy_headers(&session), &subscribe.to_string()).await;
    assert_eq!((status, answer["result"].clone()), (StatusCode::OK, json!({})));
    let mut headers = legacy_headers(&session);
    headers[1] = ("accept", "text/event-stream");
    let mut legacy = send(s.addr, "GET", &headers, "").await;
    assert_eq!(legacy.status, StatusCode::OK);

    // The 2026-07-28 listener.
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{{"notifications":{{"resourceSubscriptions":["{uri}"]}},{MODERN_META}}}}}"#
    );
    let mut listener = send(s.addr, "POST", &modern_headers("subscriptions/listen", None), &listen).await;
    let ack = within(&mut listener, Duration::from_secs(5)).await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    std::fs::write(root.join("other.txt"), "not subscribed").unwrap();
    std::fs::write(root.join("watched.txt"), "after").unwrap();
    let expected = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}});
    let got = within(&mut legacy, Duration::from_secs(1)).await;
    assert_eq!(
        got.as_ref(),
        Some(&expected),
        "the legacy subscriber's update within 1 s"
    );
    let got = within(&mut listener, Duration::from_secs(1))
        .await
        .expect("the listener's update within 1 s");
    assert_eq!(
        (got["method"].clone(), got["params"]["uri"].clone()),
        (json!("notifications/resources/updated"), json!(uri))
    );
    assert_eq!(got["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    // Exactly one: the burst of events a write makes is folded into one update.
    assert_eq!(within(&mut legacy, Duration::from_millis(700)).await, None);
    assert_eq!(within(&mut listener, Duration::from_millis(700)).await, None);
}

#[test]
fn a_bare_toolport_serve_serves_both_packs_and_says_how_to_connect() {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("notes.md"), "# Notes\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .current_dir(cwd.path())
        .env("TOOLPORT_DATA_DIR", data.path())
        .env_remove("TOOLPORT_PACKS_CONFIG")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    for line in lines.by_ref().take(12) {
        let line = line.unwrap();
        let done = line.contains("sql: ");
        said.push(line);
        if done {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    let text = said.join("\n");
    let url = said[0]
        .split(" at ")
        .nth(1)
        .expect("the URL on the first line")
        .trim()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{text}");
    assert!(text.contains("mcp.Client("), "{text}");
    let root = cwd.path().canonicalize().unwrap();
    assert!(text.contains(&format!("= {} (read-only)", root.display())), "{text}");
    assert!(
        text.contains("sql: SQLite database, read-only; tables: customers, order_items"),
        "{text}"
    );
    assert!(
        data.path().join("demo.sqlite").is_file(),
        "the demo database is made on first run"
    );

    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
        let (status, _, answer) = call(addr, "POST", &modern_headers("tools/list", None), &body).await;
        assert_eq!(status, StatusCode::OK);
        let mut names: Vec<&str> =
            answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        names.sort();
        // Read-only defaults: no write tools.
        assert_eq!(
            names,
            [
                "describe_table", "directory_tree", "get_file_info", "list_directory", "list_roots", "list_tables",
                "query", "read_file", "read_media", "search_files"
            ]
        );
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"notes.md"}},{MODERN_META}}}}}"#
        );
        let (_, _, answer) = call(addr, "POST", &modern_headers("tools/call", Some("read_file")), &body).await;
        assert_eq!(answer["result"]["content"][0]["text"], "# Notes\n");
    });
    child.kill().unwrap();
    child.wait().unwrap();
}
