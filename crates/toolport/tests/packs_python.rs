//! The official Python SDK client (PyPI `mcp`) calls every tool of both
//! packs on `toolport serve` over Streamable HTTP, in both eras, with client
//! roots that narrow access; see `interop/packs_client.py`.

mod support;

use std::os::unix::fs::symlink;
use std::process::Command;

use serde_json::json;
use support::{run_python, spawn_serve};

fn drive(mode: &str, expected_protocol: &str) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("root");
    std::fs::create_dir_all(root.join("open")).unwrap();
    std::fs::create_dir_all(root.join("closed")).unwrap();
    std::fs::write(root.join("open/hello.txt"), "hello from the open directory\n").unwrap();
    std::fs::write(root.join("closed/secret.txt"), "not for this client").unwrap();
    std::fs::write(
        root.join("open/pixel.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0",
    )
    .unwrap();
    symlink("/etc/passwd", root.join("open/escape")).unwrap();
    let settings = json!({
        "fs": {"roots": [{"path": root, "name": "work", "writable": true}]},
        "sql": {"data_dir": dir.path().join("data")}
    });
    let config = dir.path().join("packs.json");
    std::fs::write(&config, settings.to_string()).unwrap();
    let (_server, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .arg("--packs-config")
            .arg(&config),
    );
    let seen = run_python("packs_client.py", &[mode.as_ref(), url.as_ref(), root.as_os_str()]);
    assert_eq!(seen["protocol"], expected_protocol);
    assert_eq!(seen["roots_narrowed"], true);
    assert!(seen["roots_asked"].as_u64().unwrap() > 0, "{seen}");
    let mut every = vec![
        "create_directory",
        "describe_table",
        "directory_tree",
        "edit_file",
        "get_file_info",
        "list_directory",
        "list_roots",
        "list_tables",
        "move_file",
        "query",
        "read_file",
        "read_media",
        "search_files",
        "write_file",
    ];
    every.sort();
    assert_eq!(seen["tools"], json!(every));
    // The client's writes landed where it said, inside the root.
    assert_eq!(
        std::fs::read_to_string(root.join("open/note.md")).unwrap(),
        "alpha\ngamma\n"
    );
}

#[test]
#[ignore = "needs Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
fn python_sdk_client_calls_every_pack_tool_in_2026_07_28() {
    drive("auto", "2026-07-28");
}

#[test]
#[ignore = "needs Python with PyPI mcp==2.3.0 (.venv, made by .ci/run)"]
fn python_sdk_client_calls_every_pack_tool_in_2025_11_25() {
    drive("legacy", "2025-11-25");
}
