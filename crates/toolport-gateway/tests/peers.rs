//! Real upstreams nobody here wrote behind one gateway endpoint: npm
//! `@modelcontextprotocol/server-everything` and `server-filesystem` over
//! stdio, and a server on PyPI `mcp` 2.3.0 over Streamable HTTP (spoken to
//! in both eras); driven by Toolport's client in both eras and by the Python
//! SDK's client in both modes. `.ci/run` installs the peers.

mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;
use toolport_client::CallOptions;
use toolport_gateway::{Share, UpstreamConfig};
use toolport_protocol::ProtocolVersion;

const NEEDS: &str = "needs npm server-everything and server-filesystem in .ci/npm and PyPI mcp 2.3.0 in .venv";
const LEGACY: Option<ProtocolVersion> = Some(ProtocolVersion::V2025_11_25);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn npm_server(name: &str, package: &str, args: &[&str]) -> UpstreamConfig {
    let script = root().join(format!(
        ".ci/npm/{package}/node_modules/@modelcontextprotocol/server-{package}/dist/index.js"
    ));
    let mut all = vec![script.to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    UpstreamConfig {
        restart: quick_restarts(),
        ..UpstreamConfig::stdio(name, "node", &refs)
    }
}

/// The Python upstream on a free port, killed when dropped.
struct PythonUpstream {
    child: std::process::Child,
    url: String,
}

impl Drop for PythonUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn python_upstream() -> PythonUpstream {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(root().join(".venv/bin/python"))
        .arg(root().join("crates/toolport-gateway/tests/interop/python_upstream.py"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the Python upstream starts (.venv with mcp 2.3.0)");
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(&addr).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the Python upstream did not listen within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    PythonUpstream {
        child,
        url: format!("http://{addr}/mcp"),
    }
}

async fn gateway_of_peers(files: &std::path::Path, py: &PythonUpstream) -> Running {
    let dir = files.to_string_lossy().into_owned();
    start(vec![
        npm_server("everything", "everything", &["stdio"]),
        npm_server("files", "filesystem", &[&dir]),
        UpstreamConfig {
            share: Share::PerSession,
            resources: false,
            ..npm_server("ev", "everything", &["stdio"])
        },
        UpstreamConfig::http("py", &py.url),
        UpstreamConfig {
            protocol: Some("2025-11-25".into()),
            ..UpstreamConfig::http("pyl", &py.url)
        },
    ])
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs npm server-everything and server-filesystem in .ci/npm and PyPI mcp 2.3.0 in .venv"]
async fn real_upstreams_behind_one_endpoint_with_toolports_client() {
    let _ = NEEDS;
    let files = tempfile_dir();
    let py = python_upstream().await;
    let gw = gateway_of_peers(&files, &py).await;
    for version in [LEGACY, None] {
        let c = client(&gw.url, version).await;
        let era = format!("{version:?}");
        let names: Vec<String> = c.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        for needed in [
            "everything__echo",
            "everything__get-sum",
            "files__write_file",
            "files__read_text_file",
            "py__echo",
            "pyl__echo",
            "ev__echo",
        ] {
            assert!(
                names.contains(&needed.to_owned()),
                "{era}: {needed} missing from {names:?}"
            );
        }
        // Every tool of every upstream answers under its prefixed name.
        let r = c.call_tool("everything__echo", json!({"message": "hi"})).await.unwrap();
        assert!(text(&r).contains("hi"), "{era}: {}", text(&r));
        let r = c
            .call_tool("everything__get-sum", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert!(text(&r).contains('5'), "{era}: {}", text(&r));
        let path = files.join(format!("note-{}.txt", version.is_some()));
        let path = path.to_string_lossy().into_owned();
        let r = c
            .call_tool(
                "files__write_file",
                json!({"path": path, "content": "written through the gateway"}),
            )
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true), "{era}: {}", text(&r));
        let r = c
            .call_tool("files__read_text_file", json!({"path": path}))
            .await
            .unwrap();
        assert_eq!(text(&r), "written through the gateway", "{era}");
        for py in ["py", "pyl"] {
            let r = c
                .call_tool(&format!("{py}__echo"), json!({"message": "to python"}))
                .await
                .unwrap();
            assert_eq!(text(&r), "to python", "{era} {py}");
        }
        // Progress across the hop, from a stdio and an HTTP upstream.
        for (tool, args) in [
            (
                "everything__trigger-long-running-operation",
                json!({"duration": 0.3, "steps": 3}),
            ),
            ("py__count", json!({"steps": 3})),
            ("pyl__count", json!({"steps": 3})),
        ] {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let r = c
                .call_tool_with(tool, args, CallOptions::default().progress(tx))
                .await
                .unwrap();
            assert_ne!(r.is_error, Some(true), "{era} {tool}: {}", text(&r));
            let mut seen = 0;
            while rx.try_recv().is_ok() {
                seen += 1;
            }
            assert!(seen >= 1, "{era} {tool}: no progress crossed the hop");
        }
        // Elicitation across the hop: a handshake-era upstream over stdio
        // (per_session routes its request to the caller), a Python upstream
        // over HTTP in the handshake era (its request names the call) and
        // in 2026-07-28 (an InputRequiredResult).
        for tool in ["ev__trigger-elicitation-request", "pyl__ask_name", "py__ask_name"] {
            let r = c.call_tool(tool, json!({})).await.unwrap();
            assert_ne!(r.is_error, Some(true), "{era} {tool}: {}", text(&r));
        }
        let r = c.call_tool("pyl__ask_name", json!({})).await.unwrap();
        assert_eq!(text(&r), "hello Ada", "{era}");
        // A shared stdio upstream's unattributable request is refused, never sent to a caller.
        let r = c
            .call_tool("everything__trigger-elicitation-request", json!({}))
            .await
            .unwrap();
        assert!(
            text(&r).to_lowercase().contains("refused") || r.is_error == Some(true),
            "{era}: {}",
            text(&r)
        );
    }
    // Cancellation across the hop: a caller that gives up stops the upstream's run.
    let c = client(&gw.url, LEGACY).await;
    let before = stats(&c).await["cancelled"].as_u64().unwrap_or(0);
    let timed_out = c
        .call_tool_with(
            "py__wait",
            json!({"seconds": 30}),
            CallOptions::default().timeout(Duration::from_millis(500)),
        )
        .await;
    assert!(timed_out.is_err());
    eventually("the Python upstream saw the cancellation", || {
        let c = c.clone();
        async move { stats(&c).await["cancelled"].as_u64().unwrap_or(0) > before }
    })
    .await;
    gw.stop().await;
}

async fn stats(c: &toolport_client::Client) -> serde_json::Value {
    let r = c.call_tool("py__stats", json!({})).await.unwrap();
    let body = text(&r);
    r.structured_content
        .unwrap_or_else(|| serde_json::from_str(&body).unwrap_or_default())
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolport-gateway-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs npm server-everything and server-filesystem in .ci/npm and PyPI mcp 2.3.0 in .venv"]
async fn the_python_sdk_client_drives_the_gateway_in_both_modes() {
    let files = tempfile_dir();
    let py = python_upstream().await;
    let gw = gateway_of_peers(&files, &py).await;
    for (mode, expected) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let out = tokio::process::Command::new(root().join(".venv/bin/python"))
            .arg(root().join("crates/toolport-gateway/tests/interop/python_client.py"))
            .args([mode, &gw.url])
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{mode}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let seen: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(seen["protocol"], expected);
        assert_eq!(seen["elicited"], "hello Grace");
        assert!(!seen["progress"].as_array().unwrap().is_empty(), "{mode}: no progress");
    }
    gw.stop().await;
}
