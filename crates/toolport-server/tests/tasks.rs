//! MCP tasks through the whole server, over an in-memory stdio connection,
//! on a SQLite task store: the 2025-11-25 methods (lifecycle, enforcement
//! of `taskSupport`, input on the `tasks/result` stream, cancellation), the
//! 2026-07-28 extension's refusals and partial `tasks/update`, listen
//! streams, the policies (a task holds its gate place; the audit records
//! creation and end), hostile input, and 50 cancels racing a completion.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::Notify;
use toolport_protocol::elicitation::ElicitRequestParams;
use toolport_protocol::mrtr::{InputRequest, InputRequests};
use toolport_rpc::PeerOptions;
use toolport_rpc::stdio::from_async;
use toolport_server::audit::{AuditKey, AuditLog, AuditOptions};
use toolport_server::policy::{PolicyConfig, ToolPolicyConfig};
use toolport_server::{NoArgs, RequestContext, Server, TaskEngine, TaskSupport, ToolError, tool};
use toolport_tasks::{SqliteStore, TaskStore};

const EXTENSION: &str = "io.modelcontextprotocol/tasks";

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    /// Milliseconds to work.
    ms: u64,
}

fn form(message: &str) -> ElicitRequestParams {
    let Value::Object(schema) = json!({"type": "object", "properties": {"name": {"type": "string"}}}) else {
        unreachable!()
    };
    ElicitRequestParams::form(message, schema)
}

/// Counts handlers dropped before they finished.
#[derive(Default)]
struct Stopped(AtomicUsize);

struct CountOnDrop(Arc<Stopped>, bool);

impl Drop for CountOnDrop {
    fn drop(&mut self) {
        if !self.1 {
            self.0.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

struct Fixture {
    server: Server,
    stopped: Arc<Stopped>,
    release: Arc<Notify>,
    _dir: tempfile::TempDir,
}

async fn sqlite() -> (Arc<dyn TaskStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in(dir.path()).await.unwrap();
    (Arc::new(store), dir)
}

fn server_on(
    store: Arc<dyn TaskStore>,
    dir: tempfile::TempDir,
    policies: PolicyConfig,
    audit: Option<AuditLog>,
) -> Fixture {
    let stopped = Arc::new(Stopped::default());
    let release = Arc::new(Notify::new());
    let (stop, held) = (stopped.clone(), release.clone());
    let mut builder = Server::builder("tasks", "0.0.1")
        .tasks(TaskEngine::new(store))
        .policies(policies)
        .tool(
            tool("sleep")
                .task_support(TaskSupport::Optional)
                .handler(move |cx: RequestContext, args: Sleep| {
                    let stop = stop.clone();
                    async move {
                        let mut guard = CountOnDrop(stop, false);
                        cx.progress(1.0, Some(2.0), Some("halfway".into())).await;
                        tokio::time::sleep(Duration::from_millis(args.ms)).await;
                        guard.1 = true;
                        format!("slept {} ms", args.ms)
                    }
                }),
        )
        .tool(
            tool("held")
                .task_support(TaskSupport::Required)
                .handler(move |_: NoArgs| {
                    let held = held.clone();
                    async move {
                        held.notified().await;
                        "released"
                    }
                }),
        )
        .tool(
            tool("ask")
                .task_support(TaskSupport::Optional)
                .handler(|cx: RequestContext, _: NoArgs| async move {
                    let requests: InputRequests = [
                        ("a".to_owned(), InputRequest::Elicit(form("A?"))),
                        ("b".to_owned(), InputRequest::Elicit(form("B?"))),
                    ]
                    .into_iter()
                    .collect();
                    let answers = cx.input(requests).await?;
                    Ok::<_, ToolError>(format!(
                        "{} {}",
                        answers["a"]["content"]["name"], answers["b"]["content"]["name"]
                    ))
                }),
        )
        .tool(
            tool("oops")
                .task_support(TaskSupport::Optional)
                .handler(|_: NoArgs| async { Err::<String, _>(ToolError::failed("it went wrong")) }),
        )
        .tool(tool("plain").handler(|_: NoArgs| async { "plain" }));
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    Fixture {
        server: builder.build().unwrap(),
        stopped,
        release,
        _dir: dir,
    }
}

async fn fixture() -> Fixture {
    let (store, dir) = sqlite().await;
    server_on(store, dir, PolicyConfig::none(), None)
}

struct Client {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
    next_id: i64,
    /// Answers to the server's elicitation requests, by message.
    answers: Vec<(String, Value)>,
    /// Requests the server sent us.
    asked: Vec<Value>,
    /// Notifications that arrived.
    notes: Vec<Value>,
}

impl Client {
    fn connect(server: &Server) -> Client {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let transport = from_async(BufReader::new(server_in), server_out, 1 << 20);
        tokio::spawn(server.clone().serve_transport(transport, PeerOptions::default()));
        Client {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            next_id: 0,
            answers: Vec::new(),
            asked: Vec::new(),
            notes: Vec::new(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.from_server.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request and returns its answer, answering the server's
    /// requests on the way.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let m = self.recv().await;
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
            if m.get("id").is_some() && m.get("method").is_some() {
                let message = m["params"]["message"].as_str().unwrap_or_default().to_owned();
                let answer = self
                    .answers
                    .iter()
                    .find(|(q, _)| *q == message)
                    .map(|(_, a)| a.clone())
                    .unwrap_or(json!({"action": "decline"}));
                self.asked.push(m.clone());
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": answer}))
                    .await;
            } else {
                self.notes.push(m);
            }
        }
    }

    async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let answer = self
            .request("initialize", json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}))
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }
}

/// 2026-07-28 params: `_meta` with the version and these capabilities.
fn modern(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    params
}

fn with_tasks() -> Value {
    json!({"extensions": {EXTENSION: {}}})
}

/// Polls `tasks/get` (bounded) until `done` holds.
async fn poll_until(
    client: &mut Client,
    get: impl Fn(&str) -> Value,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..400 {
        let answer = client.request("tasks/get", get(id)).await;
        if done(&answer["result"]) {
            return answer["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} did not get there");
}

#[tokio::test]
async fn a_2025_task_is_created_polled_listed_and_its_result_fetched() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    let init = client.initialize("2025-11-25", json!({})).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    let tools = client.request("tools/list", json!({})).await;
    let sleep = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "sleep")
        .unwrap()
        .clone();
    assert_eq!(sleep["execution"], json!({"taskSupport": "optional"}));

    let created = client
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 50}, "task": {"ttl": 60000}}),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);

    let got = client.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["taskId"], id.as_str());
    // Blocks until the end; exactly the call's result, tied to the task.
    let result = client.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "slept 50 ms");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let listed = client.request("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], id.as_str());
    assert_eq!(listed["result"]["tasks"][0]["status"], "completed");
    // A terminal task cannot be cancelled; unknown ids and cursors are -32602.
    let cancel = client.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel["error"]["code"], -32602);
    assert!(cancel["error"]["message"].as_str().unwrap().contains("'completed'"));
    for (method, params) in [
        ("tasks/get", json!({"taskId": "0".repeat(32)})),
        ("tasks/result", json!({"taskId": "no-such-task"})),
        ("tasks/cancel", json!({"taskId": "x".repeat(100_000)})),
        ("tasks/get", json!({"taskId": 7})),
        ("tasks/get", json!({})),
        ("tasks/list", json!({"cursor": "garbage"})),
    ] {
        let answer = client.request(method, params.clone()).await;
        assert_eq!(answer["error"]["code"], -32602, "{method} {params}");
    }
    // A cursor of the right shape that names nothing is an empty page, and
    // its text is only ever a bound parameter.
    let injected = client
        .request("tasks/list", json!({"cursor": "1.'; DROP TABLE tasks; --"}))
        .await;
    assert_eq!(injected["result"]["tasks"], json!([]));
    // The task is still there after all that.
    assert_eq!(
        client.request("tasks/get", json!({"taskId": id})).await["result"]["status"],
        "completed"
    );
}

#[tokio::test]
async fn task_support_is_enforced_in_2025_and_ignored_before() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    client.initialize("2025-11-25", json!({})).await;
    let forbidden = client.request("tools/call", json!({"name": "plain", "task": {}})).await;
    assert_eq!(forbidden["error"]["code"], -32601);
    let required = client.request("tools/call", json!({"name": "held"})).await;
    assert_eq!(required["error"]["code"], -32601);
    assert!(required["error"]["message"].as_str().unwrap().contains("params.task"));
    let malformed = client
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {"ttl": "soon"}}),
        )
        .await;
    assert_eq!(malformed["error"]["code"], -32602);
    // A tool error is `failed` in 2025-11-25, and tasks/result returns the
    // isError result itself.
    let created = client.request("tools/call", json!({"name": "oops", "task": {}})).await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let result = client.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["isError"], true);
    assert_eq!(
        client.request("tasks/get", json!({"taskId": id})).await["result"]["status"],
        "failed"
    );

    // 2025-06-18 knows no tasks: `task` is ignored and the methods do not exist.
    let mut old = Client::connect(&f.server);
    let init = old.initialize("2025-06-18", json!({})).await;
    assert!(init["result"]["capabilities"].get("tasks").is_none());
    let plain = old
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {}}),
        )
        .await;
    assert_eq!(plain["result"]["content"][0]["text"], "slept 1 ms");
    let tools = old.request("tools/list", json!({})).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("execution").is_none())
    );
    assert_eq!(
        old.request("tasks/get", json!({"taskId": "x"})).await["error"]["code"],
        -32601
    );
}

#[tokio::test]
async fn a_2025_task_asks_for_input_on_its_tasks_result_stream() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    client.initialize("2025-11-25", json!({"elicitation": {}})).await;
    client.answers = vec![
        ("A?".into(), json!({"action": "accept", "content": {"name": "Ada"}})),
        ("B?".into(), json!({"action": "accept", "content": {"name": "Bob"}})),
    ];
    let created = client.request("tools/call", json!({"name": "ask", "task": {}})).await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let waiting = poll_until(
        &mut client,
        |id| json!({"taskId": id}),
        &id,
        |t| t["status"] == "input_required",
    )
    .await;
    assert_eq!(waiting["statusMessage"], "waiting for input");
    let result = client.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "\"Ada\" \"Bob\"");
    assert_eq!(client.asked.len(), 2);
    for asked in &client.asked {
        assert_eq!(asked["method"], "elicitation/create");
        assert_eq!(
            asked["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            id.as_str()
        );
    }
}

#[tokio::test]
async fn cancelling_a_task_stops_its_handler_and_ends_it_cancelled() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    client.initialize("2025-11-25", json!({})).await;
    let created = client
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60000}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    // Progress shows in the status message while it runs.
    let working = poll_until(
        &mut client,
        |id| json!({"taskId": id}),
        &id,
        |t| t.get("statusMessage").is_some(),
    )
    .await;
    assert_eq!(working["statusMessage"], "halfway (1/2)");
    let cancelled = client.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled");
    for _ in 0..200 {
        if f.stopped.0.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(f.stopped.0.load(Ordering::SeqCst), 1, "the handler was dropped");
    let result = client.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["error"]["code"], -32001);
    assert_eq!(
        client.request("tasks/get", json!({"taskId": id})).await["result"]["status"],
        "cancelled"
    );
}

#[tokio::test]
async fn the_2026_extension_is_negotiated_per_request() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    let discover = client.request("server/discover", modern(json!({}), json!({}))).await;
    assert_eq!(discover["result"]["capabilities"]["extensions"][EXTENSION], json!({}));
    assert!(discover["result"]["capabilities"].get("tasks").is_none());
    // Without the extension: plain calls, -32021 for a required task and the methods.
    let plain = client
        .request(
            "tools/call",
            modern(json!({"name": "sleep", "arguments": {"ms": 1}}), json!({})),
        )
        .await;
    assert_eq!(plain["result"]["resultType"], "complete");
    let required = client
        .request("tools/call", modern(json!({"name": "held"}), json!({})))
        .await;
    assert_eq!(required["error"]["code"], -32021);
    assert_eq!(
        required["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION],
        json!({})
    );
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let answer = client
            .request(method, modern(json!({"taskId": "x", "inputResponses": {}}), json!({})))
            .await;
        assert_eq!(answer["error"]["code"], -32021, "{method}");
    }
    for method in ["tasks/result", "tasks/list"] {
        let answer = client
            .request(method, modern(json!({"taskId": "x"}), with_tasks()))
            .await;
        assert_eq!(answer["error"]["code"], -32601, "{method}");
    }
    // With it: a flat CreateTaskResult, then the result inline.
    let created = client
        .request(
            "tools/call",
            modern(json!({"name": "sleep", "arguments": {"ms": 20}}), with_tasks()),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task");
    assert!(created["result"]["ttlMs"].is_u64());
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = |id: &str| modern(json!({"taskId": id}), with_tasks());
    let done = poll_until(&mut client, get, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 20 ms");
    assert_eq!(done["resultType"], "complete");
    // Cancel is an idempotent ack, even on a terminal task.
    let ack = client.request("tasks/cancel", get(&id)).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    assert!(ack["result"].get("status").is_none());
    // A tool error is `completed` in 2026-07-28.
    let created = client
        .request("tools/call", modern(json!({"name": "oops"}), with_tasks()))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = poll_until(&mut client, get, &id, |t| t["status"] != "working").await;
    assert_eq!(
        (done["status"].clone(), done["result"]["isError"].clone()),
        (json!("completed"), json!(true))
    );
    // Hostile params.
    for (method, params) in [
        ("tasks/update", json!({"taskId": id, "inputResponses": [1, 2]})),
        ("tasks/update", json!({"taskId": id})),
        ("tasks/get", json!({"taskId": null})),
        ("tasks/cancel", json!({"taskId": "\u{0}".repeat(5000)})),
    ] {
        let answer = client.request(method, modern(params.clone(), with_tasks())).await;
        assert_eq!(answer["error"]["code"], -32602, "{method} {params}");
    }
}

#[tokio::test]
async fn a_partial_update_leaves_the_task_waiting_for_the_rest() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    let caps = json!({"elicitation": {}, "extensions": {EXTENSION: {}}});
    let get = |id: &str| {
        modern(
            json!({"taskId": id}),
            json!({"elicitation": {}, "extensions": {EXTENSION: {}}}),
        )
    };
    let created = client
        .request("tools/call", modern(json!({"name": "ask"}), caps.clone()))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = poll_until(&mut client, get, &id, |t| t["status"] == "input_required").await;
    assert_eq!(waiting["inputRequests"]["a"]["method"], "elicitation/create");
    assert_eq!(waiting["inputRequests"]["b"]["params"]["message"], "B?");
    let answer = |name: &str| json!({"action": "accept", "content": {"name": name}});
    let ack = client
        .request(
            "tasks/update",
            modern(
                json!({"taskId": id, "inputResponses": {"a": answer("Ada"), "nope": answer("x")}}),
                caps.clone(),
            ),
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let still = client.request("tasks/get", get(&id)).await["result"].clone();
    assert_eq!(still["status"], "input_required");
    assert_eq!(
        still["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["b"]
    );
    client
        .request(
            "tasks/update",
            modern(json!({"taskId": id, "inputResponses": {"b": answer("Bob")}}), caps),
        )
        .await;
    let done = poll_until(&mut client, get, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "\"Ada\" \"Bob\"");
}

#[tokio::test]
async fn a_listener_hears_of_the_tasks_it_follows() {
    let f = fixture().await;
    let mut client = Client::connect(&f.server);
    let created = client
        .request("tools/call", modern(json!({"name": "held"}), with_tasks()))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    client
        .send(
            json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
            "params": modern(json!({"notifications": {"taskIds": [id, "not-a-task"]}}), with_tasks())}),
        )
        .await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    f.release.notify_one();
    let note = client.recv().await;
    assert_eq!(note["method"], "notifications/tasks");
    assert_eq!(note["params"]["taskId"], id.as_str());
    assert_eq!(note["params"]["status"], "completed");
    assert_eq!(note["params"]["result"]["content"][0]["text"], "released");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen"
    );
    // Following tasks needs the extension.
    let refused = client
        .request(
            "subscriptions/listen",
            modern(json!({"notifications": {"taskIds": [id]}}), json!({})),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021);
}

/// Collects what the audit writes.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_running_task_holds_its_place_at_the_gate_and_is_audited() {
    let (store, dir) = sqlite().await;
    let mut policies = PolicyConfig::none();
    policies.queue = 0;
    policies.tools.insert(
        "held".into(),
        ToolPolicyConfig {
            max_concurrent: Some(1),
            ..Default::default()
        },
    );
    let sink = Sink::default();
    let f = server_on(
        store,
        dir,
        policies,
        Some(AuditLog::to_writer(
            Box::new(sink.clone()),
            AuditKey::generate(),
            AuditOptions::default(),
        )),
    );
    let mut client = Client::connect(&f.server);
    let get = |id: &str| modern(json!({"taskId": id}), with_tasks());
    let first = client
        .request("tools/call", modern(json!({"name": "held"}), with_tasks()))
        .await;
    let first = first["result"]["taskId"].as_str().unwrap().to_owned();
    // The second finds the gate taken by the first, still running: its task
    // fails with the overload error.
    let second = client
        .request("tools/call", modern(json!({"name": "held"}), with_tasks()))
        .await;
    let second = second["result"]["taskId"].as_str().unwrap().to_owned();
    let refused = poll_until(&mut client, get, &second, |t| t["status"] == "failed").await;
    assert_eq!(refused["error"]["code"], -32010);
    f.release.notify_one();
    poll_until(&mut client, get, &first, |t| t["status"] == "completed").await;
    f.server.flush_audit();
    let written = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    // Call records carry an outcome; the chain's opening and checkpoint
    // records do not.
    let outcomes: Vec<String> = written
        .lines()
        .filter_map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["outcome"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert!(outcomes.contains(&format!("task_created {first}")), "{outcomes:?}");
    assert!(outcomes.contains(&format!("task_created {second}")), "{outcomes:?}");
    assert!(outcomes.iter().any(|o| o == "ok"), "{outcomes:?}");
    assert!(outcomes.iter().any(|o| o == "error -32010"), "{outcomes:?}");
}

/// 50 `tasks/cancel`s race the handler's completion: exactly one end wins;
/// every losing cancel gets -32602 naming the winner's status, and the
/// losing completion changes nothing.
async fn cancels_race_a_completion(store: Arc<dyn TaskStore>, dir: tempfile::TempDir) {
    let f = server_on(store, dir, PolicyConfig::none(), None);
    let mut client = Client::connect(&f.server);
    client.initialize("2025-11-25", json!({})).await;
    let created = client.request("tools/call", json!({"name": "held", "task": {}})).await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    for i in 0..50 {
        client
            .send(json!({"jsonrpc": "2.0", "id": format!("c{i}"), "method": "tasks/cancel", "params": {"taskId": id}}))
            .await;
        if i == 25 {
            f.release.notify_one();
        }
    }
    let mut won = Vec::new();
    let mut lost = Vec::new();
    while won.len() + lost.len() < 50 {
        let m = client.recv().await;
        if m["id"].as_str().is_some_and(|i| i.starts_with('c')) {
            if m.get("result").is_some() {
                won.push(m);
            } else {
                lost.push(m);
            }
        }
    }
    let end = client.request("tasks/get", json!({"taskId": id})).await["result"]["status"].clone();
    assert!(won.len() <= 1, "{won:?}");
    if won.len() == 1 {
        assert_eq!(end, "cancelled");
        assert_eq!(won[0]["result"]["status"], "cancelled");
    } else {
        assert_eq!(end, "completed");
    }
    for loser in &lost {
        assert_eq!(loser["error"]["code"], -32602);
        let message = loser["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("'{}'", end.as_str().unwrap())), "{message}");
    }
}

#[tokio::test]
async fn fifty_cancels_race_a_completion_on_sqlite() {
    let (store, dir) = sqlite().await;
    cancels_race_a_completion(store, dir).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (.ci/run starts it and creates the toolport_tasks database)"]
async fn fifty_cancels_race_a_completion_on_postgresql() {
    let url = std::env::var("TOOLPORT_TEST_TASKS_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://toolport_tasks:toolport_tasks@127.0.0.1:5432/toolport_tasks".into());
    let schema = format!("server_race_{}", std::process::id());
    let store = toolport_tasks::PostgresStore::connect_in(&url, Some(&schema), 8)
        .await
        .unwrap();
    cancels_race_a_completion(Arc::new(store), tempfile::tempdir().unwrap()).await;
}
