//! `toolport tools | call | resources | read | prompts | prompt` against the
//! demo server, over stdio and HTTP: tables, `--json`, and the errors.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const TOOLPORT: &str = env!("CARGO_BIN_EXE_toolport");

fn toolport(args: &[&str]) -> Output {
    Command::new(TOOLPORT)
        .args(args)
        .env_remove("TOOLPORT_SERVER")
        .env_remove("TOOLPORT_BEARER")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .expect("run toolport")
}

/// Runs a client command against `toolport serve --stdio`.
fn over_stdio(args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", TOOLPORT, "serve", "--demo", "--stdio"]);
    toolport(&all)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

struct HttpServer(Child, String);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server() -> HttpServer {
    let mut child = Command::new(TOOLPORT)
        .args(["serve", "--demo", "--bind", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolport serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("the server says where it listens").unwrap();
    let url = first.split(" at ").nth(1).expect("an address").trim().to_owned();
    std::thread::spawn(move || lines.for_each(drop));
    HttpServer(child, url)
}

#[test]
fn tools_are_a_table_for_people_and_json_for_scripts() {
    let table = over_stdio(&["tools"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("TOOL"), "{text}");
    let names: Vec<&str> = lines.map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(
        names,
        ["book_table", "compute_stats", "echo", "get_weather", "long_task"]
    );

    let json = over_stdio(&["tools", "--json"]);
    let tools: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(tools.as_array().unwrap().len(), 5);
    assert_eq!(tools[2]["name"], "echo");
    assert_eq!(tools[2]["inputSchema"]["type"], "object");
}

#[test]
fn call_read_and_prompt_print_their_content() {
    let call = over_stdio(&["call", "echo", "--args", r#"{"message": "héllo"}"#]);
    assert!(call.status.success(), "{}", stderr(&call));
    assert_eq!(stdout(&call), "héllo\n");

    let json = over_stdio(&["call", "compute_stats", "--args", r#"{"numbers": [1, 2, 3]}"#, "--json"]);
    let result: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(result["structuredContent"]["mean"], 2.0);

    let read = over_stdio(&["read", "demo://readme"]);
    assert!(stdout(&read).starts_with("# Toolport demo"), "{}", stdout(&read));

    let resources = over_stdio(&["resources"]);
    assert!(
        stdout(&resources).contains("weather://{city}/forecast  forecast (template)"),
        "{}",
        stdout(&resources)
    );

    let prompts = over_stdio(&["prompts"]);
    assert!(
        stdout(&prompts).contains("plan_trip  city [days]"),
        "{}",
        stdout(&prompts)
    );

    let prompt = over_stdio(&["prompt", "plan_trip", "--arg", "city=Rome", "--arg", "days=2"]);
    assert!(
        stdout(&prompt).starts_with("user: Plan a 2-day trip to Rome."),
        "{}",
        stdout(&prompt)
    );
}

#[test]
fn the_same_commands_work_over_http_in_both_eras() {
    let server = http_server();
    for protocol in ["auto", "2025-11-25", "2025-03-26"] {
        let call = toolport(&[
            "call",
            "echo",
            "--args",
            r#"{"message":"x"}"#,
            "--server",
            &server.1,
            "--protocol",
            protocol,
        ]);
        assert!(call.status.success(), "{protocol}: {}", stderr(&call));
        assert_eq!(stdout(&call), "x\n");
    }
    let tools = toolport(&["tools", "--json", "--server", &server.1]);
    assert_eq!(
        serde_json::from_slice::<Value>(&tools.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn every_failure_says_what_to_do() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["tools"], "no server given"),
        (
            vec!["tools", "--server", "http://127.0.0.1:1/mcp", "--timeout", "2"],
            "check that the server is running",
        ),
        (
            vec![
                "tools",
                "--server",
                "https://127.0.0.1:1/mcp",
                "--ca-file",
                "/nonexistent/ca.pem",
            ],
            "reading the CA file /nonexistent/ca.pem",
        ),
        (vec!["tools", "--server", "not a url"], "is not a URL"),
        (
            vec!["tools", "--", "/nonexistent/server"],
            "is it installed and on PATH",
        ),
    ];
    for (args, expected) in cases {
        let out = toolport(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("backtrace"), "{}", stderr(&out));
    }
    let bad_json = over_stdio(&["call", "echo", "--args", "{oops"]);
    assert!(
        stderr(&bad_json).contains("--args is not valid JSON"),
        "{}",
        stderr(&bad_json)
    );
    let not_object = over_stdio(&["call", "echo", "--args", "[1]"]);
    assert!(
        stderr(&not_object).contains("must be a JSON object"),
        "{}",
        stderr(&not_object)
    );
    let unknown = over_stdio(&["call", "nope"]);
    assert!(stderr(&unknown).contains("Unknown tool"), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("what to do"), "{}", stderr(&unknown));
    let tool_error = over_stdio(&["call", "get_weather", "--args", r#"{"city": ""}"#]);
    assert_eq!(tool_error.status.code(), Some(1));
    assert!(
        stdout(&tool_error).contains("shorter than 1 character"),
        "{}",
        stdout(&tool_error)
    );
    let bad_arg = over_stdio(&["prompt", "plan_trip", "--arg", "city"]);
    assert!(stderr(&bad_arg).contains("NAME=VALUE"), "{}", stderr(&bad_arg));
    // Without a terminal there is nobody to ask: the question is a clear error.
    let asks = over_stdio(&["call", "book_table", "--args", r#"{"restaurant": "Chez Nous"}"#]);
    assert_eq!(asks.status.code(), Some(1));
    assert!(
        stderr(&asks).contains("elicitation") || stderr(&asks).contains("capability"),
        "{}",
        stderr(&asks)
    );
}

#[test]
fn a_server_that_does_not_answer_in_time_is_reported() {
    // `sleep` never answers: the probe and the handshake both time out.
    let out = toolport(&["tools", "--timeout", "1", "--", "sleep", "30"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no answer within 1s"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--timeout"), "{}", stderr(&out));
}
