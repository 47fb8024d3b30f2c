//! The official TypeScript SDK client (npm `@modelcontextprotocol/sdk`,
//! `StreamableHTTPClientTransport`) against `toolport serve`; see
//! `interop/ts_client.mjs` for everything it checks.
//!
//! Needs Node.js and the SDK: `.ci/run` installs it under `.ci/npm/sdk`;
//! `TOOLPORT_TS_SDK` points elsewhere (the SDK's `dist/esm` directory).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn sdk() -> PathBuf {
    std::env::var_os("TOOLPORT_TS_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.ci/npm/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm")
        })
}

#[test]
#[ignore = "needs Node.js with npm @modelcontextprotocol/sdk (.ci/npm/sdk, made by .ci/run)"]
fn typescript_sdk_client_over_streamable_http() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--bind", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolport serve");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.split(" at ").nth(1).unwrap().trim().to_owned();
    std::thread::spawn(move || lines.for_each(drop));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ts_client.mjs");
    let output = Command::new("node")
        .arg(script)
        .arg(&url)
        .env("TS_SDK", sdk())
        .output()
        .expect("run node");
    server.kill().unwrap();
    server.wait().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "TypeScript client failed:\n{stdout}\n{stderr}");
    assert!(stderr.trim().is_empty(), "the TypeScript SDK complained: {stderr}");
    let seen: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(seen["protocol"], "2025-11-25");
    assert_eq!(seen["session"], true);
    assert_eq!(seen["progress"], 4);
    assert_eq!(seen["cancelled"], true);
    assert_eq!(seen["elicitation"], true);
}
