//! A2A 1.0 against the official SDKs, both ways: the Python (PyPI `a2a-sdk`)
//! and JavaScript (npm `@a2a-js/sdk`) clients drive `toolport serve --demo
//! --a2a` over JSON-RPC and HTTP+JSON (see `interop/a2a_client.py` and
//! `interop/a2a_client.mjs` for everything they check), and Toolport's own
//! client (`toolport_a2a::A2aClient`, and the `toolport a2a` CLI over it)
//! drives an a2a-sdk agent (`interop/a2a_agent.py`).
//!
//! Needs `.venv` with `a2a-sdk[http-server]` and uvicorn, and `.ci/npm/a2a`
//! with `@a2a-js/sdk`, both made by `.ci/run`; `TOOLPORT_PYTHON` and
//! `TOOLPORT_A2A_JS_SDK` (the SDK's `dist` directory) point elsewhere.

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{Served, python, run_python, spawn_serve};
use toolport_a2a::types::TaskArtifactUpdateEvent;
use toolport_a2a::{
    A2aClient, Binding, ListTasksQuery, Message, Part, SendMessageConfiguration, SendMessageRequest, StreamResponse,
    Task, TaskState,
};

/// How long one item of a stream may take.
const ITEM_TIMEOUT: Duration = Duration::from_secs(15);

// ------------------------------------------------------------ Toolport as the server

/// `toolport serve --demo --a2a` on a free port with its own data directory
/// and push webhooks to loopback allowed; the child is killed when dropped
/// (before the directory goes).
struct A2aServe {
    _served: Served,
    _data: tempfile::TempDir,
    /// Where the Agent Card is (`http://127.0.0.1:PORT`).
    base: String,
}

fn serve_a2a() -> A2aServe {
    let data = tempfile::tempdir().unwrap();
    let (served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--a2a"])
            .env("TOOLPORT_DATA_DIR", data.path())
            .env("TOOLPORT_A2A__PUSH_ALLOW_PRIVATE", "true"),
    );
    let base = url
        .strip_suffix("/mcp")
        .unwrap_or_else(|| panic!("the MCP URL ends with /mcp: {url}"))
        .to_owned();
    A2aServe {
        _served: served,
        _data: data,
        base,
    }
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("an array: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_else(|| panic!("a string: {v}")))
        .collect()
}

/// The Agent Card as the SDK client read it: all five demo tools as skills,
/// both bindings.
fn assert_card(card: &Value) {
    assert_eq!(card["name"], "Toolport demo", "{card}");
    let mut skills = strings(&card["skill_ids"]);
    skills.sort_unstable();
    assert_eq!(
        skills,
        ["book_table", "compute_stats", "echo", "get_weather", "long_task"],
        "{card}"
    );
    let bindings = strings(&card["bindings"]);
    assert!(
        bindings.contains(&"JSONRPC") && bindings.contains(&"HTTP+JSON"),
        "{card}"
    );
    assert_eq!(card["streaming"], true, "{card}");
}

fn python_sdk_client(binding: &str) {
    let server = serve_a2a();
    let seen = run_python(
        "a2a_client.py",
        &[server.base.as_ref(), "--binding".as_ref(), binding.as_ref()],
    );
    assert_eq!(seen["binding"], binding);
    assert_eq!(seen["failed"], serde_json::json!([]), "{seen:#}");

    assert_card(&seen["card"]);
    assert_eq!(seen["card"]["push_notifications"], true, "{seen:#}");

    let blocking = &seen["blocking"];
    assert_eq!(blocking["state"], "COMPLETED", "{blocking}");
    assert_eq!(strings(&blocking["texts"]), ["hello a2a"], "{blocking}");

    let structured = &seen["structured"];
    assert_eq!(structured["state"], "COMPLETED", "{structured}");
    assert_eq!(structured["data"]["count"], 3, "{structured}");
    assert_eq!(structured["data"]["sum"], 6, "{structured}");

    let tool_error = &seen["tool_error"];
    assert_eq!(tool_error["empty_numbers"]["state"], "FAILED", "{tool_error}");
    assert_eq!(tool_error["unknown_tool"]["state"], "REJECTED", "{tool_error}");

    let streaming = &seen["streaming"];
    let events = strings(&streaming["events"]);
    assert!(events[0].starts_with("task:"), "{streaming}");
    assert!(events.contains(&"status:WORKING"), "{streaming}");
    assert!(events.contains(&"artifact"), "{streaming}");
    assert_eq!(events.last(), Some(&"status:COMPLETED"), "{streaming}");
    assert_eq!(streaming["working_with_message"], 3, "{streaming}");
    assert_eq!(
        strings(&streaming["artifact_texts"]),
        ["finished 3 steps"],
        "{streaming}"
    );

    let history = &seen["get_history"];
    assert_eq!(history["state"], "COMPLETED", "{history}");
    assert_eq!(history["history_1"], 1, "{history}");

    let list = &seen["list"];
    assert_eq!(list["last_next_page_token"], "", "{list}");
    assert_eq!(list["raw_last_page"]["has_key"], true, "{list}");
    assert_eq!(list["raw_last_page"]["nextPageToken"], "", "{list}");
    assert_eq!(list["newest_first"], true, "{list}");
    assert_eq!(list["count"], list["distinct"], "{list}");
    assert_eq!(list["count"], list["total_size"], "{list}");
    assert!(list["count"].as_u64().unwrap() >= 4, "{list}");

    let cancel = &seen["cancel"];
    assert_eq!(cancel["state"], "CANCELED", "{cancel}");
    assert_eq!(cancel["state_after_get"], "CANCELED", "{cancel}");
    assert_eq!(cancel["second_cancel"]["code"], -32002, "{cancel}");
    assert_eq!(cancel["second_cancel"]["type"], "TaskNotCancelableError", "{cancel}");

    let two = &seen["subscribe_two"];
    assert_eq!(strings(&two["first"]).last(), Some(&"status:COMPLETED"), "{two}");
    assert_eq!(strings(&two["second"]).last(), Some(&"status:COMPLETED"), "{two}");
    assert_eq!(two["equal_collapsed"], true, "{two}");

    let input = &seen["input_required"];
    assert_eq!(input["state"], "INPUT_REQUIRED", "{input}");
    assert_eq!(input["same_task"], true, "{input}");
    assert_eq!(input["final_state"], "COMPLETED", "{input}");
    let booked = strings(&input["final_texts"]);
    assert!(
        booked
            .iter()
            .any(|t| t.contains("Booked a table for 2") && t.contains("Ada")),
        "{input}"
    );

    let push = &seen["push"];
    assert!(
        strings(&push["states"]).contains(&"status:COMPLETED"),
        "a COMPLETED notification: {push}"
    );
    assert_eq!(strings(&push["token_headers"]), ["tok-123"], "{push}");
    assert_eq!(push["authorization_header"], "Bearer push-cred", "{push}");
    assert_eq!(push["created"]["token"], "tok-123", "{push}");
    assert_eq!(push["get"]["url_matches"], true, "{push}");
    assert_eq!(push["list_count"], 2, "{push}");
    assert_eq!(strings(&push["list_urls"]), ["/created", "/send"], "{push}");
    // Deleting twice is fine, and removes the one config only.
    assert_eq!(strings(&push["delete"]), ["ok", "ok"], "{push}");
    assert_eq!(push["list_count_after_delete"], 1, "{push}");

    if binding == "rest" {
        let errors = &seen["rest_errors"];
        assert_eq!(errors["task_not_found"]["http_status"], 404, "{errors}");
        assert_eq!(errors["task_not_found"]["reason"], "TASK_NOT_FOUND", "{errors}");
        assert_eq!(
            errors["version_not_supported"]["reason"], "VERSION_NOT_SUPPORTED",
            "{errors}"
        );
    } else {
        let errors = &seen["errors"];
        assert_eq!(errors["task_not_found"]["code"], -32001, "{errors}");
        assert_eq!(errors["task_not_found"]["error_info"], true, "{errors}");
        assert_eq!(errors["task_not_found"]["reason"], "TASK_NOT_FOUND", "{errors}");
        assert_eq!(errors["task_not_found"]["id"], 1, "{errors}");
        assert_eq!(errors["version_not_supported"]["code"], -32009, "{errors}");
        assert_eq!(errors["parse_error"]["code"], -32700, "{errors}");
        assert_eq!(errors["parse_error"]["id"], Value::Null, "{errors}");
        assert_eq!(errors["method_not_found"]["code"], -32601, "{errors}");
    }
}

#[test]
#[ignore = "needs Python with PyPI a2a-sdk==1.3.0 (.venv, made by .ci/run)"]
fn python_a2a_sdk_client_over_jsonrpc() {
    python_sdk_client("jsonrpc");
}

#[test]
#[ignore = "needs Python with PyPI a2a-sdk==1.3.0 (.venv, made by .ci/run)"]
fn python_a2a_sdk_client_over_http_json() {
    python_sdk_client("rest");
}

/// The `dist` directory of npm `@a2a-js/sdk`: `.ci/npm/a2a` (made by
/// `.ci/run`), or `TOOLPORT_A2A_JS_SDK`.
fn js_sdk() -> PathBuf {
    std::env::var_os("TOOLPORT_A2A_JS_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/npm/a2a/node_modules/@a2a-js/sdk/dist")
        })
}

fn js_sdk_client(binding: &str) {
    let server = serve_a2a();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/a2a_client.mjs");
    let output = Command::new("node")
        .arg(script)
        .arg(&server.base)
        .args(["--binding", binding])
        .env("A2A_JS_SDK", js_sdk())
        .output()
        .expect("run node (is .ci/npm/a2a set up? see .ci/run)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "JavaScript client failed:\n{stdout}\n{stderr}");
    assert!(stderr.trim().is_empty(), "the JavaScript SDK complained: {stderr}");
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(seen["binding"], binding);
    assert_eq!(seen["failed"], serde_json::json!([]), "{seen:#}");

    assert_card(&seen["card"]);
    let transport = if binding == "rest" { "HTTP+JSON" } else { "JSONRPC" };
    assert_eq!(seen["card"]["transport"], transport, "{seen:#}");
    assert_eq!(seen["card"]["protocol_version"], "1.0", "{seen:#}");

    let blocking = &seen["blocking"];
    assert_eq!(blocking["state"], "COMPLETED", "{blocking}");
    assert_eq!(strings(&blocking["texts"]), ["hello a2a"], "{blocking}");

    let streaming = &seen["streaming"];
    let events = strings(&streaming["events"]);
    assert!(events[0].starts_with("task:"), "{streaming}");
    assert!(events.contains(&"status:WORKING"), "{streaming}");
    assert!(events.contains(&"artifact"), "{streaming}");
    assert_eq!(events.last(), Some(&"status:COMPLETED"), "{streaming}");
    assert_eq!(streaming["working_with_message"], 3, "{streaming}");

    let get = &seen["get_task"];
    assert_eq!(get["same_id"], true, "{get}");
    assert_eq!(get["state"], "COMPLETED", "{get}");
    assert_eq!(get["history_length_1"], 1, "{get}");

    let cancel = &seen["cancel"];
    assert!(
        ["SUBMITTED", "WORKING"].contains(&cancel["initial_state"].as_str().unwrap_or_default()),
        "{cancel}"
    );
    assert_eq!(cancel["state"], "CANCELED", "{cancel}");
    assert_eq!(cancel["second_cancel"]["name"], "TaskNotCancelableError", "{cancel}");
    if binding == "jsonrpc" {
        assert_eq!(cancel["second_cancel"]["code"], -32002, "{cancel}");
    }
}

#[test]
#[ignore = "needs npm @a2a-js/sdk 1.3.0 (.ci/npm/a2a, made by .ci/run)"]
fn js_a2a_sdk_client_over_jsonrpc() {
    js_sdk_client("jsonrpc");
}

#[test]
#[ignore = "needs npm @a2a-js/sdk 1.3.0 (.ci/npm/a2a, made by .ci/run)"]
fn js_a2a_sdk_client_over_http_json() {
    js_sdk_client("rest");
}

// ------------------------------------------------------------ an a2a-sdk agent as the server

/// `interop/a2a_agent.py`, killed when dropped (also when a test fails).
struct PeerAgent {
    child: Child,
    /// Where its Agent Card is (`http://127.0.0.1:PORT`).
    base: String,
}

impl PeerAgent {
    fn start() -> PeerAgent {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/a2a_agent.py");
        let mut child = Command::new(python())
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the a2a-sdk agent (is .venv set up? see .ci/run)");
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let stderr = child.stderr.take().unwrap();
        // Keep draining both pipes so the agent never blocks on a full one;
        // what it said on stderr comes back if it fails to start.
        let complaints = std::thread::spawn(move || {
            BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .take(200)
                .collect::<Vec<_>>()
                .join("\n")
        });
        let mut agent = PeerAgent {
            child,
            base: String::new(),
        };
        let first = match stdout.next() {
            Some(Ok(line)) => line,
            _ => {
                let _ = agent.child.kill();
                let _ = agent.child.wait();
                panic!(
                    "the a2a-sdk agent exited before listening:\n{}",
                    complaints.join().unwrap()
                );
            }
        };
        std::thread::spawn(move || stdout.for_each(drop));
        agent.base = first
            .strip_prefix("a2a agent listening at ")
            .unwrap_or_else(|| panic!("the agent's first line says where it listens: {first}"))
            .trim()
            .to_owned();
        agent
    }
}

impl Drop for PeerAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_message(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user(vec![Part::text(text)]))
}

fn artifact_texts(task: &Task) -> Vec<String> {
    task.artifacts
        .iter()
        .flatten()
        .flat_map(|a| &a.parts)
        .filter_map(|p| p.text.clone())
        .collect()
}

fn expect_task(answer: StreamResponse) -> Task {
    match answer {
        StreamResponse::Task(task) => task,
        other => panic!("answered with something else than a task: {other:?}"),
    }
}

/// Every item of a stream (a `toolport_a2a` `EventStream`) until the agent
/// closes it, each within 15 s.
macro_rules! drain {
    ($stream:expr) => {{
        let mut items: Vec<StreamResponse> = Vec::new();
        let mut closed = false;
        for _ in 0..100 {
            match tokio::time::timeout(ITEM_TIMEOUT, $stream.next()).await {
                Ok(Some(item)) => items.push(item.expect("a stream item")),
                Ok(None) => {
                    closed = true;
                    break;
                }
                Err(_) => panic!("no stream item within 15 s after {items:#?}"),
            }
        }
        assert!(closed, "a stream of over 100 items: {items:#?}");
        items
    }};
}

fn artifact_update(item: &StreamResponse) -> &TaskArtifactUpdateEvent {
    match item {
        StreamResponse::ArtifactUpdate(update) => update,
        other => panic!("not an artifact update: {other:?}"),
    }
}

async fn rust_client_against_python_agent(binding: Binding) {
    let agent = PeerAgent::start();
    let (client, card) = A2aClient::discover(&agent.base, Some(binding)).await.unwrap();
    assert_eq!(card.name, "a2a-sdk interop agent");
    assert_eq!(client.binding(), binding);
    let path = match binding {
        Binding::JsonRpc => "/a2a/jsonrpc",
        Binding::Rest => "/a2a/rest",
    };
    assert_eq!(client.url(), format!("{}{path}", agent.base));
    let skills: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(skills, ["echo", "stream"]);

    // A blocking send.
    let hello = expect_task(client.send(text_message("hello")).await.unwrap());
    assert_eq!(hello.status.state, TaskState::Completed, "{hello:#?}");
    assert_eq!(artifact_texts(&hello), ["echo: hello"], "{hello:#?}");

    // A streamed one: the task, WORKING, three chunks of one artifact, COMPLETED.
    let mut stream = client.send_streaming(text_message("stream please")).await.unwrap();
    let items = drain!(stream);
    assert_eq!(items.len(), 6, "{items:#?}");
    let streamed = match &items[0] {
        StreamResponse::Task(task) => task.clone(),
        other => panic!("the first item is not the task: {other:?}"),
    };
    assert!(
        matches!(streamed.status.state, TaskState::Submitted | TaskState::Working),
        "{items:#?}"
    );
    assert_eq!(items[1].state(), Some(TaskState::Working), "{items:#?}");
    assert!(
        matches!(&items[1], StreamResponse::StatusUpdate(u) if u.task_id == streamed.id),
        "{items:#?}"
    );
    let chunks: Vec<_> = items[2..5].iter().map(artifact_update).collect();
    let texts: Vec<String> = chunks
        .iter()
        .map(|c| c.artifact.parts.iter().filter_map(|p| p.text.clone()).collect())
        .collect();
    assert_eq!(texts, ["chunk 1", "chunk 2", "chunk 3"], "{items:#?}");
    assert_eq!(
        chunks.iter().map(|c| c.append).collect::<Vec<_>>(),
        [false, true, true],
        "{items:#?}"
    );
    assert_eq!(
        chunks.iter().map(|c| c.last_chunk).collect::<Vec<_>>(),
        [false, false, true],
        "{items:#?}"
    );
    assert!(
        chunks
            .iter()
            .all(|c| c.task_id == streamed.id && c.artifact.artifact_id == chunks[0].artifact.artifact_id),
        "{items:#?}"
    );
    assert_eq!(items[5].state(), Some(TaskState::Completed), "{items:#?}");

    // Get, with its history: the user's message.
    let got = client.get(&hello.id, Some(10)).await.unwrap();
    assert_eq!(got.id, hello.id);
    assert_eq!(got.status.state, TaskState::Completed);
    let history = got.history.clone().unwrap_or_default();
    assert!(
        history
            .iter()
            .any(|m| m.role == toolport_a2a::Role::User && m.text() == "hello"),
        "{got:#?}"
    );
    let streamed_now = client.get(&streamed.id, None).await.unwrap();
    assert_eq!(streamed_now.status.state, TaskState::Completed, "{streamed_now:#?}");
    assert_eq!(
        artifact_texts(&streamed_now).concat(),
        "chunk 1chunk 2chunk 3",
        "the chunks appended: {streamed_now:#?}"
    );

    // List finds both.
    let listed = client.list(&ListTasksQuery::default()).await.unwrap();
    let ids: Vec<&str> = listed.tasks.iter().map(|t| t.id.as_str()).collect();
    assert!(
        ids.contains(&hello.id.as_str()) && ids.contains(&streamed.id.as_str()),
        "{ids:?}"
    );

    // A slow task, answered at once, subscribed to, then cancelled.
    let mut request = text_message("slow please");
    request.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..SendMessageConfiguration::default()
    });
    let slow = expect_task(client.send(request).await.unwrap());
    assert!(
        matches!(slow.status.state, TaskState::Submitted | TaskState::Working),
        "{slow:#?}"
    );
    let mut subscription = client.subscribe(&slow.id).await.unwrap();
    let first = tokio::time::timeout(ITEM_TIMEOUT, subscription.next())
        .await
        .expect("the subscription's first item within 15 s")
        .expect("a first item")
        .unwrap();
    match &first {
        StreamResponse::Task(task) => {
            assert_eq!(task.id, slow.id);
            assert!(
                matches!(task.status.state, TaskState::Submitted | TaskState::Working),
                "{first:#?}"
            );
        }
        other => panic!("the subscription did not start with the task: {other:?}"),
    }
    let canceled = client.cancel(&slow.id).await.unwrap();
    assert_eq!(canceled.id, slow.id);
    assert_eq!(canceled.status.state, TaskState::Canceled, "{canceled:#?}");
    let rest = drain!(subscription);
    assert_eq!(
        rest.iter().rev().find_map(StreamResponse::state),
        Some(TaskState::Canceled),
        "the subscription ends CANCELED: {rest:#?}"
    );
    let after = client.get(&slow.id, None).await.unwrap();
    assert_eq!(after.status.state, TaskState::Canceled, "{after:#?}");
}

#[tokio::test]
#[ignore = "needs Python with PyPI a2a-sdk==1.3.0 (.venv, made by .ci/run)"]
async fn rust_client_over_jsonrpc_against_a2a_sdk_agent() {
    rust_client_against_python_agent(Binding::JsonRpc).await;
}

#[tokio::test]
#[ignore = "needs Python with PyPI a2a-sdk==1.3.0 (.venv, made by .ci/run)"]
async fn rust_client_over_http_json_against_a2a_sdk_agent() {
    rust_client_against_python_agent(Binding::Rest).await;
}

/// Runs `toolport a2a ARGS... URL`; asserts it succeeded and returns stdout.
fn cli(agent: &PeerAgent, args: &[&str]) -> String {
    let output: Output = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .arg("a2a")
        .arg(args[0])
        .arg(&agent.base)
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .expect("run toolport a2a");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "toolport a2a {args:?} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn cli_json(agent: &PeerAgent, args: &[&str]) -> Value {
    let stdout = cli(agent, args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("toolport a2a {args:?} printed no JSON ({e}):\n{stdout}"))
}

fn json_texts(parts: &Value) -> Vec<&str> {
    parts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

#[test]
#[ignore = "needs Python with PyPI a2a-sdk==1.3.0 (.venv, made by .ci/run)"]
fn cli_against_a2a_sdk_agent() {
    let agent = PeerAgent::start();

    let card = cli_json(&agent, &["card"]);
    assert_eq!(card["name"], "a2a-sdk interop agent", "{card:#}");
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON"], "{card:#}");

    let hello = cli_json(&agent, &["send", "hello"]);
    let hello = &hello["task"];
    let hello_id = hello["id"].as_str().unwrap_or_else(|| panic!("a task: {hello:#}"));
    assert_eq!(hello["status"]["state"], "TASK_STATE_COMPLETED", "{hello:#}");
    assert_eq!(
        json_texts(&hello["artifacts"][0]["parts"]),
        ["echo: hello"],
        "{hello:#}"
    );

    // Streamed: one JSON line per item.
    let lines = cli(&agent, &["send", "stream it", "--stream"]);
    let items: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    assert_eq!(items.len(), 6, "{lines}");
    let stream_id = items[0]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("the first line is the task: {lines}"));
    assert_eq!(
        items[1]["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING",
        "{lines}"
    );
    for (i, item) in items[2..5].iter().enumerate() {
        let update = &item["artifactUpdate"];
        assert_eq!(update["taskId"], stream_id, "{lines}");
        assert_eq!(
            json_texts(&update["artifact"]["parts"]),
            [format!("chunk {}", i + 1)],
            "{lines}"
        );
        assert_eq!(update["append"], i > 0, "{lines}");
    }
    assert_eq!(
        items[5]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{lines}"
    );

    let got = cli_json(&agent, &["get", hello_id]);
    assert_eq!(got["id"], hello_id, "{got:#}");
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED", "{got:#}");
    assert!(
        got["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "ROLE_USER" && json_texts(&m["parts"]) == ["hello"]),
        "{got:#}"
    );
    let got_rest = cli_json(&agent, &["get", stream_id, "--binding", "rest"]);
    assert_eq!(got_rest["id"], stream_id, "{got_rest:#}");
    assert_eq!(got_rest["status"]["state"], "TASK_STATE_COMPLETED", "{got_rest:#}");

    let listed = cli_json(&agent, &["list"]);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap_or_else(|| panic!("a list of tasks: {listed:#}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&hello_id) && ids.contains(&stream_id), "{ids:?}");

    let slow = cli_json(&agent, &["send", "slow one", "--no-wait"]);
    let slow = &slow["task"];
    let slow_id = slow["id"].as_str().unwrap_or_else(|| panic!("a task: {slow:#}"));
    assert!(
        ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].contains(&slow["status"]["state"].as_str().unwrap()),
        "--no-wait answers at once: {slow:#}"
    );
    let canceled = cli_json(&agent, &["cancel", slow_id]);
    assert_eq!(canceled["id"], slow_id, "{canceled:#}");
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED", "{canceled:#}");
    let after = cli_json(&agent, &["get", slow_id]);
    assert_eq!(after["status"]["state"], "TASK_STATE_CANCELED", "{after:#}");
}
