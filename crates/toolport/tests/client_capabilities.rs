//! The client commands use only what the server declared
//! (`basic/lifecycle`): against a server that offers only tools (the
//! official Python SDK's low-level server, like rmcp's echo example), the
//! listing commands say so without asking, in both eras.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const TOOLPORT: &str = env!("CARGO_BIN_EXE_toolport");

fn python() -> PathBuf {
    std::env::var_os("TOOLPORT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"))
}

/// `toolport ARGS --protocol VERSION -- python tools_only_server.py`.
fn against_tools_only(args: &[&str], protocol: &str) -> Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/tools_only_server.py");
    Command::new(TOOLPORT)
        .args(args)
        .args(["--protocol", protocol, "--"])
        .arg(python())
        .arg(script)
        .env_remove("TOOLPORT_SERVER")
        .stdin(Stdio::null())
        .output()
        .expect("run toolport")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
#[ignore = "needs .venv with PyPI mcp 2.3.0 (see .ci/run)"]
fn listings_of_what_the_server_does_not_offer_say_so_without_asking() {
    for protocol in ["2025-11-25", "auto"] {
        for (command, noun) in [("resources", "resources"), ("prompts", "prompts")] {
            let out = against_tools_only(&[command], protocol);
            assert!(out.status.success(), "{protocol} {command}: {}", text(&out.stderr));
            assert!(
                text(&out.stderr).contains(&format!("the server offers no {noun}")),
                "{protocol} {command}: {}",
                text(&out.stderr)
            );
            assert!(!text(&out.stderr).contains("-32601"), "{}", text(&out.stderr));
            let json = against_tools_only(&[command, "--json"], protocol);
            assert!(
                json.status.success(),
                "{protocol} {command} --json: {}",
                text(&json.stderr)
            );
            let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
            assert!(
                value == serde_json::json!([]) || value["resources"] == serde_json::json!([]),
                "{value}"
            );
        }
        // Reading one is an error that names the reason.
        let read = against_tools_only(&["read", "file:///x"], protocol);
        assert_eq!(read.status.code(), Some(1), "{protocol}");
        assert!(
            text(&read.stderr).contains("offers no resources"),
            "{}",
            text(&read.stderr)
        );
        // What it does offer still works.
        let tools = against_tools_only(&["tools"], protocol);
        assert!(tools.status.success(), "{protocol}: {}", text(&tools.stderr));
        assert!(text(&tools.stdout).contains("echo"), "{}", text(&tools.stdout));
    }
}
