//! The official Python SDK client (PyPI `mcp`) drives `toolport serve` over
//! stdio and Streamable HTTP, in both eras; see `interop/python_client.py`
//! for everything it checks.
//!
//! Needs a Python with `mcp` installed: `.ci/run` makes `.venv` at the
//! repository root; `TOOLPORT_PYTHON` points elsewhere.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

fn python() -> PathBuf {
    std::env::var_os("TOOLPORT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"))
}

/// `toolport serve` on a free port; the child and its URL.
fn http_server(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolport serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("toolport prints where it listens").unwrap();
    let url = first
        .split(" at ")
        .nth(1)
        .expect("a URL on the first line")
        .trim()
        .to_owned();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn drive(mode: &str, expected_protocol: &str) {
    drive_target(
        mode,
        expected_protocol,
        &["--", env!("CARGO_BIN_EXE_toolport"), "serve", "--demo", "--stdio"],
    );
}

fn drive_http(mode: &str, expected_protocol: &str) {
    let (mut server, url) = http_server(&[]);
    drive_target(mode, expected_protocol, &[&url]);
    server.kill().unwrap();
    server.wait().unwrap();
}

fn drive_target(mode: &str, expected_protocol: &str, target: &[&str]) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/python_client.py");
    let output = Command::new(python())
        .arg(script)
        .arg(mode)
        .args(target)
        .output()
        .expect("run the Python SDK client (is .venv set up? see .ci/run)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(seen["protocol"], expected_protocol);
    assert_eq!(seen["cancelled"], true);
    assert_eq!(seen["elicitation"], true);
    assert_eq!(seen["progress"], 3);
}

#[test]
#[ignore = "needs Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
fn python_sdk_client_over_stdio_auto_mode_settles_on_2026_07_28() {
    drive("auto", "2026-07-28");
}

#[test]
#[ignore = "needs Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
fn python_sdk_client_over_stdio_legacy_mode_settles_on_2025_11_25() {
    drive("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
fn python_sdk_client_over_http_auto_mode_settles_on_2026_07_28() {
    drive_http("auto", "2026-07-28");
}

#[test]
#[ignore = "needs Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
fn python_sdk_client_over_http_legacy_mode_settles_on_2025_11_25() {
    drive_http("legacy", "2025-11-25");
}
