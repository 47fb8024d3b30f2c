//! Tasks through `toolport serve --demo` over raw HTTP, in both revisions
//! (the Python SDK `mcp` 2.3.0 has no tasks API, so these are the
//! task-augmented calls of each revision, byte by byte), and the kill test:
//! SIGKILL while 20 tasks run and 20 have finished, a restart on the same
//! data directory, every result still there, and the running ones ended as
//! docs/tasks.md says (a resumable `long_task` runs again to completion, a
//! `book_table` waiting for input fails with the message that says why).

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::{ACCEPT, JSON, Served, call, initialize, legacy_headers, modern_headers, spawn_serve};

const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `toolport serve --demo` with its tasks in `data`, leases of one second
/// and maintenance every second, so a killed server's tasks end quickly.
fn serve(data: &Path) -> (Served, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolport"));
    command
        .arg("--demo")
        .env("TOOLPORT_TASKS__DATA_DIR", data)
        .env("TOOLPORT_TASKS__LEASE_SECONDS", "1")
        .env("TOOLPORT_TASKS__MAINTENANCE_SECONDS", "1");
    let (served, url) = spawn_serve(&mut command);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    (served, addr)
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 request; `name` is its `Mcp-Name` (tool or task id).
async fn modern(addr: SocketAddr, method: &str, name: Option<&str>, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let (_, _, answer) = call(addr, "POST", &modern_headers(method, name), &body).await;
    answer
}

fn tasks_caps() -> Value {
    json!({"elicitation": {}, "extensions": {EXTENSION: {}}})
}

async fn create(addr: SocketAddr, tool: &str, arguments: Value) -> String {
    let answer = modern(
        addr,
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
        tasks_caps(),
    )
    .await;
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(addr: SocketAddr, id: &str) -> Value {
    let answer = modern(addr, "tasks/get", Some(id), json!({"taskId": id}), tasks_caps()).await;
    answer["result"].clone()
}

/// Polls (bounded: 30 s) until every task satisfies `done`; returns them.
async fn until(addr: SocketAddr, ids: &[String], done: impl Fn(&Value) -> bool) -> Vec<Value> {
    for _ in 0..600 {
        let mut all = Vec::new();
        for id in ids {
            all.push(get(addr, id).await);
        }
        if all.iter().all(&done) {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the tasks did not get there within 30 s");
}

#[tokio::test]
async fn a_2026_task_augmented_call_over_raw_http() {
    let data = tempfile::tempdir().unwrap();
    let (_served, addr) = serve(data.path());
    let discover = modern(addr, "server/discover", None, json!({}), json!({})).await;
    assert_eq!(discover["result"]["capabilities"]["extensions"][EXTENSION], json!({}));
    // Without the extension long_task is a plain call.
    let plain = modern(
        addr,
        "tools/call",
        Some("long_task"),
        json!({"name": "long_task", "arguments": {"steps": 1, "step_ms": 1}}),
        json!({}),
    )
    .await;
    assert_eq!(plain["result"]["content"][0]["text"], "finished 1 steps");
    let id = create(addr, "long_task", json!({"steps": 3, "step_ms": 20})).await;
    let done = until(addr, std::slice::from_ref(&id), |t| t["status"] == "completed").await;
    assert_eq!(done[0]["result"]["content"][0]["text"], "finished 3 steps");
    // The task id must be in Mcp-Name.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": id, "_meta": meta(tasks_caps())}});
    let (status, _, answer) = call(
        addr,
        "POST",
        &modern_headers("tasks/get", Some("other")),
        &body.to_string(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["code"], -32020);
    // A question inside the task, answered with tasks/update.
    let id = create(addr, "book_table", json!({"restaurant": "Chez Toolport"})).await;
    let waiting = until(addr, std::slice::from_ref(&id), |t| t["status"] == "input_required").await;
    assert_eq!(waiting[0]["inputRequests"]["booking"]["method"], "elicitation/create");
    let answer = json!({"booking": {"action": "accept", "content": {"name": "Ada", "guests": 2}}});
    let ack = modern(
        addr,
        "tasks/update",
        Some(&id),
        json!({"taskId": id, "inputResponses": answer}),
        tasks_caps(),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = until(addr, std::slice::from_ref(&id), |t| t["status"] == "completed").await;
    assert!(
        done[0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Ada"),
        "{}",
        done[0]
    );
}

#[tokio::test]
async fn a_2025_task_augmented_call_over_raw_http() {
    let data = tempfile::tempdir().unwrap();
    let (_served, addr) = serve(data.path());
    let session = initialize(addr, "2025-11-25").await;
    let headers = legacy_headers(&session);
    let request = |id: u32, method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let (_, _, created) = call(
        addr,
        "POST",
        &headers,
        &request(
            1,
            "tools/call",
            json!({"name": "long_task", "arguments": {"steps": 2, "step_ms": 20}, "task": {"ttl": 600000}}),
        ),
    )
    .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 600000);
    let id = task["taskId"].as_str().unwrap().to_owned();
    let (_, _, result) = call(
        addr,
        "POST",
        &headers,
        &request(2, "tasks/result", json!({"taskId": id})),
    )
    .await;
    let result = match result {
        // Answered on an SSE stream: the last data line is the answer.
        Value::String(stream) => {
            let data = stream
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap()
                .to_owned();
            serde_json::from_str(&data).unwrap()
        }
        json => json,
    };
    assert_eq!(result["result"]["content"][0]["text"], "finished 2 steps", "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let (_, _, listed) = call(addr, "POST", &headers, &request(3, "tasks/list", json!({}))).await;
    assert!(
        listed["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == id.as_str())
    );
    let (_, _, cancel) = call(
        addr,
        "POST",
        &headers,
        &request(4, "tasks/cancel", json!({"taskId": id})),
    )
    .await;
    assert_eq!(cancel["error"]["code"], -32602);
    // A body that is not JSON-RPC at all still gets a clear answer.
    let (status, _, _) = call(
        addr,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &session)],
        "{\"taskId\":",
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_killed_server_keeps_finished_results_and_ends_running_tasks_after_restart() {
    let data = tempfile::tempdir().unwrap();
    let (mut served, addr) = serve(data.path());
    let mut finished = Vec::new();
    for i in 0..20 {
        finished.push(create(addr, "long_task", json!({"steps": 1 + i % 3, "step_ms": 1})).await);
    }
    until(addr, &finished, |t| t["status"] == "completed").await;
    let mut resumable = Vec::new();
    for _ in 0..10 {
        resumable.push(create(addr, "long_task", json!({"steps": 50, "step_ms": 100})).await);
    }
    let mut waiting = Vec::new();
    for i in 0..10 {
        waiting.push(create(addr, "book_table", json!({"restaurant": format!("r{i}")})).await);
    }
    until(addr, &resumable, |t| t["status"] == "working").await;
    until(addr, &waiting, |t| t["status"] == "input_required").await;

    served.0.kill().unwrap(); // SIGKILL
    served.0.wait().unwrap();
    let (_served, addr) = serve(data.path());

    // Every result is still there, exactly.
    for (i, task) in until(addr, &finished, |t| t["status"] == "completed")
        .await
        .iter()
        .enumerate()
    {
        let text = format!("finished {} steps", 1 + i % 3);
        assert_eq!(task["result"]["content"][0]["text"], text.as_str());
    }
    // A resumable tool runs again and completes; the question cannot be
    // asked again, so those tasks fail, saying why. None stays unfinished.
    for task in until(addr, &resumable, |t| t["status"] == "completed").await {
        assert_eq!(task["result"]["content"][0]["text"], "finished 50 steps");
    }
    for task in until(addr, &waiting, |t| t["status"] == "failed").await {
        let message = task["statusMessage"].as_str().unwrap();
        assert!(message.contains("stopped before it finished"), "{message}");
        assert_eq!(task["error"]["code"], -32603);
    }
}

/// Runs `toolport ARGS...`; its status, stdout and stderr.
fn toolport(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_cli_calls_a_tool_as_a_task_and_lists_gets_and_cancels_tasks() {
    let data = tempfile::tempdir().unwrap();
    let (_served, addr) = serve(data.path());
    let url = format!("http://{addr}/mcp");
    for protocol in ["2026-07-28", "2025-11-25"] {
        let (ok, out, err) = toolport(&[
            "call",
            "long_task",
            "--task",
            "--args",
            r#"{"steps": 3, "step_ms": 200}"#,
            "--server",
            &url,
            "--protocol",
            protocol,
        ]);
        assert!(ok, "{protocol}: {err}");
        assert_eq!(out.trim(), "finished 3 steps", "{protocol}");
        assert!(err.starts_with("task "), "{protocol}: the task is shown: {err}");
    }
    let (ok, out, err) = toolport(&["tasks", "list", "--json", "--server", &url, "--protocol", "2025-11-25"]);
    assert!(ok, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{out}");
    assert!(listed.iter().all(|t| t["status"] == "completed"));
    let id = listed[0]["taskId"].as_str().unwrap();
    for protocol in ["2026-07-28", "2025-11-25"] {
        let (ok, out, err) = toolport(&["tasks", "get", id, "--server", &url, "--protocol", protocol]);
        assert!(ok, "{err}");
        assert!(
            out.contains("completed") && out.contains("finished 3 steps"),
            "{protocol}: {out}"
        );
    }
    // Cancelling a finished task: 2026-07-28 acknowledges, 2025-11-25 says it ended.
    let (ok, _, err) = toolport(&["tasks", "cancel", id, "--server", &url]);
    assert!(ok, "{err}");
    let (ok, _, err) = toolport(&["tasks", "cancel", id, "--server", &url, "--protocol", "2025-11-25"]);
    assert!(!ok);
    assert!(err.contains("terminal status 'completed'"), "{err}");
    let (ok, _, err) = toolport(&["tasks", "list", "--server", &url, "--protocol", "2026-07-28"]);
    assert!(!ok);
    assert!(err.contains("no tasks/list"), "{err}");
}
