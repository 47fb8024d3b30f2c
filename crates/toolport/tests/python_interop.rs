//! The official Python SDK client (PyPI `mcp`) drives `toolport serve --stdio`
//! in both eras; see `interop/python_client.py` for everything it checks.
//!
//! Needs a Python with `mcp` installed: `.ci/run` makes `.venv` at the
//! repository root; `TOOLPORT_PYTHON` points elsewhere.

use std::path::PathBuf;
use std::process::Command;

fn python() -> PathBuf {
    std::env::var_os("TOOLPORT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"))
}

fn drive(mode: &str, expected_protocol: &str) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/python_client.py");
    let output = Command::new(python())
        .arg(script)
        .arg(mode)
        .args(["--", env!("CARGO_BIN_EXE_toolport"), "serve", "--stdio"])
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
