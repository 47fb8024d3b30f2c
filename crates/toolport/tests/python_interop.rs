//! The official Python SDK client (PyPI `mcp`) drives `toolport serve` over
//! stdio and Streamable HTTP, in both eras; see `interop/python_client.py`
//! for everything it checks.
//!
//! Needs a Python with `mcp` installed: `.ci/run` makes `.venv` at the
//! repository root; `TOOLPORT_PYTHON` points elsewhere.

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::{python, spawn_serve};

fn drive(mode: &str, expected_protocol: &str) {
    drive_target(
        mode,
        expected_protocol,
        &["--", env!("CARGO_BIN_EXE_toolport"), "serve", "--demo", "--stdio"],
    );
}

fn drive_http(mode: &str, expected_protocol: &str) {
    let (mut server, url) = spawn_serve(Command::new(env!("CARGO_BIN_EXE_toolport")).arg("--demo"));
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
