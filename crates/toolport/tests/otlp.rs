//! Spans exported over OTLP/HTTP to a receiver that decodes them with the
//! official OpenTelemetry protobuf definitions (PyPI `opentelemetry-proto`):
//! a `tools/call` whose `_meta` carries a W3C `traceparent` arrives as an
//! `mcp.request` span continuing that trace, with its method and tool.

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{MODERN_META, call, modern_headers, python, spawn_serve};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// Waits (bounded) for the child to exit.
fn wait_for_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    for _ in 0..300 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server did not stop within 15 s of SIGTERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PyPI opentelemetry-proto in .venv (made by .ci/run)"]
async fn request_spans_reach_an_otlp_collector_inside_the_callers_trace() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/otlp_receiver.py");
    let mut receiver = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the OTLP receiver (is .venv set up? see .ci/run)");
    let mut spans = BufReader::new(receiver.stdout.take().unwrap()).lines();
    let first = spans.next().expect("the receiver says where it listens").unwrap();
    let port = first.strip_prefix("listening ").expect("listening PORT").to_owned();
    let (lines, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in spans.map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });

    let (mut served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .arg("--demo")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}"))
            .env("OTEL_SERVICE_NAME", "toolport-under-test"),
    );
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let meta = MODERN_META.replace(
        r#""_meta":{"#,
        &format!(r#""_meta":{{"traceparent":"00-{TRACE_ID}-{PARENT_ID}-01","#),
    );
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"traced"}},{meta}}}}}"#
    );
    let (status, _, answer) = call(addr, "POST", &modern_headers("tools/call", Some("echo")), &body).await;
    assert_eq!(status, 200, "{answer}");

    // SIGTERM: the server drains, then flushes its spans before it exits.
    let pid = served.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    assert!(wait_for_exit(&mut served.0).success());

    let span = loop {
        let line = seen
            .recv_timeout(Duration::from_secs(10))
            .expect("the mcp.request span reached the collector");
        let span: Value = serde_json::from_str(&line).unwrap();
        if span["name"] == "mcp.request" && span["attributes"]["method"] == "tools/call" {
            break span;
        }
    };
    assert_eq!(span["trace_id"], TRACE_ID, "{span}");
    assert_eq!(span["parent_span_id"], PARENT_ID, "{span}");
    assert_eq!(span["attributes"]["tool"], "echo", "{span}");
    assert_eq!(span["attributes"]["trace_id"], TRACE_ID, "{span}");
    assert_eq!(span["service"], "toolport-under-test", "{span}");
    drop(receiver.stdin.take());
    let _ = receiver.wait();
}
