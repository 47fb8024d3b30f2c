//! The official Python SDK client (PyPI `mcp`) drives `toolport serve` over
//! stdio and Streamable HTTP, in both eras; see `interop/python_client.py`
//! for everything it checks.
//!
//! Needs a Python with `mcp` installed: `.ci/run` makes `.venv` at the
//! repository root; `TOOLPORT_PYTHON` points elsewhere.

mod support;

use std::process::Command;

use support::{run_python, spawn_serve};

fn drive(mode: &str, expected_protocol: &str) {
    drive_target(
        mode,
        expected_protocol,
        &["--", env!("CARGO_BIN_EXE_toolport"), "serve", "--demo", "--stdio"],
    );
}

fn drive_http(mode: &str, expected_protocol: &str) {
    let (_server, url) = spawn_serve(Command::new(env!("CARGO_BIN_EXE_toolport")).arg("--demo"));
    drive_target(mode, expected_protocol, &[&url]);
}

fn drive_target(mode: &str, expected_protocol: &str, target: &[&str]) {
    let mut args = vec![std::ffi::OsStr::new(mode)];
    args.extend(target.iter().map(std::ffi::OsStr::new));
    let seen = run_python("python_client.py", &args);
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
