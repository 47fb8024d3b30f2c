//! `toolport serve --config gateway.toml` with an `[[upstream]]`, `toolport
//! pins list | approve` and `toolport tools --server URL` showing each tool's
//! upstream. The upstream is this binary's own demo server over stdio.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const TOOLPORT: &str = env!("CARGO_BIN_EXE_toolport");

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(config: &std::path::Path) -> (Served, String) {
    let mut child = Command::new(TOOLPORT)
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(config)
        // The audit stream goes to the test's directory, not the user's.
        .env("TOOLPORT_DATA_DIR", config.parent().unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut url = None;
    for line in lines.by_ref().take(200) {
        let line = line.unwrap();
        if let Some(at) = line.strip_prefix("toolport: gateway serving MCP (2024-11-05 … 2026-07-28) at ") {
            url = Some(at.trim().to_owned());
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    (Served(child), url.expect("the gateway says where it listens"))
}

fn toolport(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(TOOLPORT).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn pins_quarantine_upstream_tools_until_approved_and_tools_shows_their_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let pins = dir.path().join("pins.json");
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[gateway]\npins = {pins:?}\n\n[[upstream]]\nname = \"demo\"\ncommand = {TOOLPORT:?}\nargs = [\"serve\", \"--stdio\", \"--demo\"]\n"
        ),
    )
    .unwrap();
    let (_served, url) = serve(&config);
    let config_arg = config.to_str().unwrap();
    let (ok, out, err) = toolport(&["tools", "--server", &url]);
    assert!(ok, "{err}");
    assert!(
        !out.contains("demo__echo"),
        "a new tool is served before approval:\n{out}"
    );
    let (ok, out, err) = toolport(&["pins", "list", "--config", config_arg]);
    assert!(ok, "{err}");
    assert!(
        out.contains("demo__echo") && out.contains("new: waiting for approval"),
        "{out}"
    );
    let (ok, out, err) = toolport(&["pins", "approve", "demo__echo", "--config", config_arg]);
    assert!(ok, "{err}");
    assert!(out.contains("approved demo__echo"), "{out}");
    let (ok, _, err) = toolport(&["pins", "approve", "demo__nonesuch", "--config", config_arg]);
    assert!(!ok && err.contains("not in"), "{err}");
    let mut listed = String::new();
    for _ in 0..100 {
        let (_, out, _) = toolport(&["tools", "--server", &url]);
        if out.contains("demo__echo") {
            listed = out;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(listed.contains("UPSTREAM"), "no upstream column:\n{listed}");
    let row = listed
        .lines()
        .find(|l| l.starts_with("demo__echo"))
        .expect("the approved tool is listed");
    assert!(row.split_whitespace().nth(1) == Some("demo"), "{row}");
    let (ok, out, _) = toolport(&[
        "call",
        "demo__echo",
        "--server",
        &url,
        "--args",
        r#"{"message": "through"}"#,
    ]);
    assert!(ok && out.contains("through"), "{out}");
    let (ok, out, _) = toolport(&["pins", "list", "--config", config_arg]);
    assert!(
        ok && out
            .lines()
            .any(|l| l.starts_with("demo__echo") && l.ends_with("approved")),
        "{out}"
    );
}

/// `toolport serve --config` with `text`: its exit status and stderr.
fn refused(text: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, text).unwrap();
    let out = Command::new(TOOLPORT)
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env("TOOLPORT_DATA_DIR", dir.path())
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_bad_upstream_configuration_fails_at_start_up_with_the_key() {
    let up = "[[upstream]]\nname = \"fx\"\ncommand = \"x\"\n";
    let cases = [
        (
            "[[upstream]]\nname = \"a b\"\ncommand = \"x\"\n".to_owned(),
            vec!["upstream[0]", "name must be"],
        ),
        (
            format!("{up}[upstream.limits]\nscopes = [\"files:read\"]\n"),
            vec!["oauth.issuer", "[upstream.limits]"],
        ),
        (
            format!("{up}[upstream.limits]\nrate = {{ per_second = 0, burst = 1 }}\n"),
            vec!["upstream[0] (\"fx\")", "limits.rate.per_second"],
        ),
        (
            format!("{up}[upstream.limits.tools.echo]\nmax_concurrent = 0\n"),
            vec!["limits.tools.echo.max_concurrent"],
        ),
        (
            format!(
                "[limits.tools.fx__echo]\nmax_concurrent = 2\n\n{up}[upstream.limits.tools.echo]\nmax_concurrent = 1\n"
            ),
            vec!["limits.tools.\"fx__echo\"", "keep one of them"],
        ),
        (
            format!("{up}[upstream.limits]\nmax_cuncurrent = 1\n"),
            vec!["max_cuncurrent"],
        ),
    ];
    for (text, expected) in cases {
        let (status, err) = refused(&text);
        assert_eq!(status, Some(2), "{text}\n{err}");
        for e in expected {
            assert!(err.contains(e), "{text}\nmissing {e:?} in:\n{err}");
        }
    }
}

/// One GET of `path` on the server at `url` (HTTP/1.1, connection closed):
/// the status and the body.
fn get(url: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn the_console_of_a_gateway_shows_each_upstream_with_its_state_and_tools() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    let missing = dir.path().join("no-such-program");
    std::fs::write(
        &config,
        format!(
            "[gateway]\nstart_timeout_seconds = 2\n\n[ui]\nenabled = true\n\n\
             [[upstream]]\nname = \"demo\"\ncommand = {TOOLPORT:?}\nargs = [\"serve\", \"--stdio\", \"--demo\"]\n\n\
             [[upstream]]\nname = \"gone\"\ncommand = {missing:?}\nrequired = false\n"
        ),
    )
    .unwrap();
    let (_served, url) = serve(&config);
    let (status, body) = get(&url, "/admin/upstreams");
    assert_eq!(status, 200, "{body}");
    let view: serde_json::Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(view["available"], true, "{view}");
    let upstreams = view["upstreams"].as_array().unwrap();
    assert_eq!(upstreams.len(), 2, "{view}");
    let (demo, gone) = (&upstreams[0], &upstreams[1]);
    assert_eq!(demo["name"], "demo", "{view}");
    assert_eq!(
        (&demo["transport"], &demo["state"]),
        (&"stdio".into(), &"up".into()),
        "{view}"
    );
    assert!(
        demo["tools"].as_u64().unwrap() >= 5,
        "the demo's tools are counted: {view}"
    );
    assert!(demo["since"].as_str().is_some_and(|s| s.ends_with('Z')), "{view}");
    assert_eq!(gone["name"], "gone", "{view}");
    assert_ne!(gone["state"], "up", "{view}");
    assert_eq!(gone["tools"], 0, "{view}");
    assert!(
        gone["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "why it is down: {view}"
    );
    // The overview tells the page the view has data.
    let (status, body) = get(&url, "/admin/overview");
    assert_eq!(status, 200, "{body}");
    let overview: serde_json::Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(overview["views"]["upstreams"], true, "{overview}");
}

#[test]
fn a_gateways_upstream_tools_are_a2a_skills() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[a2a]\nenabled = true\n\n[[upstream]]\nname = \"demo\"\ncommand = {TOOLPORT:?}\nargs = [\"serve\", \"--stdio\", \"--demo\"]\n"
        ),
    )
    .unwrap();
    let (_gateway, url) = serve(&config);
    let base = url.trim_end_matches("/mcp");
    let (ok, card, err) = toolport(&["a2a", "card", base]);
    assert!(ok, "{err}");
    let card: serde_json::Value = serde_json::from_str(&card).unwrap();
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(
        skills.contains(&"demo__echo") && skills.contains(&"demo__long_task"),
        "{skills:?}"
    );
    let data = r#"{"tool":"demo__echo","arguments":{"message":"through the gateway"}}"#;
    let (ok, sent, err) = toolport(&["a2a", "send", base, "--data", data]);
    assert!(ok, "{err}");
    let sent: serde_json::Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert_eq!(
        sent["task"]["artifacts"][0]["parts"][0]["text"], "through the gateway",
        "{sent}"
    );
}
