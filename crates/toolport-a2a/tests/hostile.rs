//! Malformed, oversized, hostile and out-of-order requests to both bindings:
//! each gets the A2A error that names what is wrong, and changes nothing.

mod common;

use std::sync::Arc;

use common::{RPC, asker, raw, rpc, serve};
use serde_json::{Value, json};
use toolport_a2a::{Agent, Artifact, Part, PushPolicy, TaskContext, agent_fn};

fn echo() -> Arc<dyn Agent> {
    Arc::new(agent_fn("echo", "says it back", |cx: TaskContext| async move {
        let text = cx.message().text();
        cx.artifact(Artifact::new("echo", vec![Part::text(text)])).await?;
        Ok(())
    }))
}

fn message(text: &str) -> Value {
    json!({"message": {"messageId": toolport_a2a::fresh_id(), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}

#[tokio::test]
async fn malformed_json_rpc_gets_the_json_rpc_errors() {
    let agent = serve(echo(), None, 64 * 1024).await;
    let cases: [(&str, i64); 6] = [
        ("{not json", -32700),
        ("[]", -32600),
        (r#"{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}"#, -32600),
        (r#"{"jsonrpc": "2.0", "id": {"x": 1}, "method": "GetTask"}"#, -32600),
        (
            r#"{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}"#,
            -32601,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"identifier": "x"}}"#,
            -32602,
        ),
    ];
    for (body, expected) in cases {
        let (status, answer) = raw(agent.addr, "POST", "/a2a/jsonrpc", RPC, body).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(code(&answer), expected, "{body}: {answer}");
        assert_eq!(
            answer["error"]["data"][0]["@type"],
            "type.googleapis.com/google.rpc.ErrorInfo"
        );
    }
}

#[tokio::test]
async fn the_version_and_content_type_are_checked_before_anything_runs() {
    let agent = serve(echo(), None, 64 * 1024).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message("hi")}).to_string();
    for (headers, expected) in [
        (vec![("content-type", "application/json")], -32009),
        (
            vec![("content-type", "application/json"), ("a2a-version", "0.3")],
            -32009,
        ),
        (
            vec![("content-type", "application/json"), ("a2a-version", "9.9")],
            -32009,
        ),
        (vec![("content-type", "text/plain"), ("a2a-version", "1.0")], -32005),
    ] {
        let (_, answer) = raw(agent.addr, "POST", "/a2a/jsonrpc", &headers, body.clone()).await;
        assert_eq!(code(&answer), expected, "{headers:?}: {answer}");
        assert_eq!(answer["id"], 1);
    }
    // Nothing ran: the caller has no tasks.
    let (_, listed) = rpc(agent.addr, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 0, "{listed}");
    // REST: the same, as HTTP statuses.
    let (status, answer) = raw(agent.addr, "GET", "/a2a/rest/tasks", &[], "").await;
    assert_eq!(
        (status, answer["error"]["details"][0]["reason"].as_str()),
        (400, Some("VERSION_NOT_SUPPORTED"))
    );
    let (status, answer) = raw(agent.addr, "GET", "/a2a/rest/tasks?A2A-Version=1.0", &[], "").await;
    assert_eq!((status, answer["totalSize"].as_i64()), (200, Some(0)), "{answer}");
}

#[tokio::test]
async fn messages_an_agent_cannot_take_are_refused_with_the_field_named() {
    let agent = serve(echo(), None, 64 * 1024).await;
    let id = || toolport_a2a::fresh_id();
    let cases = [
        (
            json!({"message": {"messageId": id(), "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}),
            "ROLE_USER",
        ),
        (
            json!({"message": {"messageId": id(), "role": "ROLE_USER", "parts": []}}),
            "at least one part",
        ),
        (
            json!({"message": {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
            "messageId",
        ),
        (
            json!({"message": {"messageId": id(), "role": "ROLE_USER", "parts": [{"text": "x", "data": {}}]}}),
            "exactly one of",
        ),
        (
            json!({"message": {"messageId": id(), "role": "ROLE_USER", "parts": [{}]}}),
            "exactly one of",
        ),
        (
            json!({"message": {"messageId": id(), "role": "ROLE_BOSS", "parts": [{"text": "x"}]}}),
            "ROLE_BOSS",
        ),
        (
            json!({"message": {"messageId": id(), "role": "ROLE_USER", "parts": [{"text": "x"}], "taskId": "nope"}}),
            "not found",
        ),
    ];
    for (params, why) in cases {
        let (_, answer) = rpc(agent.addr, "SendMessage", params.clone()).await;
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{params}: {answer}");
    }
    let (_, listed) = rpc(agent.addr, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 0, "nothing was created: {listed}");
}

#[tokio::test]
async fn an_oversized_body_is_refused_before_it_is_read_whole() {
    let agent = serve(echo(), None, 4096).await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message(&"x".repeat(8192))});
    let (status, _) = raw(agent.addr, "POST", "/a2a/jsonrpc", RPC, big.to_string()).await;
    assert_eq!(status, 413);
    let (_, listed) = rpc(agent.addr, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 0);
}

#[tokio::test]
async fn out_of_order_requests_get_the_task_errors() {
    let agent = serve(asker(), None, 64 * 1024).await;
    let (_, asked) = rpc(agent.addr, "SendMessage", message("start")).await;
    let task = &asked["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{asked}");
    let (task_id, context_id) = (task["id"].as_str().unwrap(), task["contextId"].as_str().unwrap());
    // The answer in another conversation is refused.
    let mut wrong_context = message("this");
    wrong_context["message"]["taskId"] = json!(task_id);
    wrong_context["message"]["contextId"] = json!("another-context");
    let (_, refused) = rpc(agent.addr, "SendMessage", wrong_context).await;
    assert_eq!(code(&refused), -32602, "{refused}");
    // The answer in its conversation completes it.
    let mut answer = message("this one");
    answer["message"]["taskId"] = json!(task_id);
    answer["message"]["contextId"] = json!(context_id);
    let (_, done) = rpc(agent.addr, "SendMessage", answer.clone()).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    // An ended task takes no message, no subscription and no cancel.
    let (_, late) = rpc(agent.addr, "SendMessage", answer).await;
    assert_eq!(code(&late), -32004, "{late}");
    let (_, subscribed) = rpc(agent.addr, "SubscribeToTask", json!({"id": task_id})).await;
    assert_eq!(code(&subscribed), -32004, "{subscribed}");
    let (_, cancelled) = rpc(agent.addr, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(code(&cancelled), -32002, "{cancelled}");
    // History: the question, the refused answer left no trace, the answer.
    let (_, got) = rpc(agent.addr, "GetTask", json!({"id": task_id})).await;
    let texts: Vec<&str> = got["result"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["start", "which one?", "this one"]);
    // Unknown tasks, over both bindings.
    let (_, missing) = rpc(agent.addr, "GetTask", json!({"id": "0".repeat(32)})).await;
    assert_eq!(code(&missing), -32001);
    let (status, missing) = raw(agent.addr, "GET", "/a2a/rest/tasks/nope?A2A-Version=1.0", &[], "").await;
    assert_eq!(
        (status, missing["error"]["details"][0]["reason"].as_str()),
        (404, Some("TASK_NOT_FOUND"))
    );
}

#[tokio::test]
async fn list_parameters_out_of_range_are_refused() {
    let agent = serve(echo(), None, 64 * 1024).await;
    for params in [
        json!({"pageSize": 0}),
        json!({"historyLength": -1}),
        json!({"statusTimestampAfter": "yesterday"}),
        json!({"pageToken": "not-a-token"}),
        json!({"status": "TASK_STATE_BORED"}),
    ] {
        let (_, answer) = rpc(agent.addr, "ListTasks", params.clone()).await;
        assert_eq!(code(&answer), -32602, "{params}: {answer}");
    }
}

#[tokio::test]
async fn webhooks_on_internal_addresses_are_refused_and_push_can_be_off() {
    let agent = serve(echo(), Some(PushPolicy::default()), 64 * 1024).await;
    let (_, sent) = rpc(agent.addr, "SendMessage", message("hi")).await;
    let task_id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    for url in [
        "http://127.0.0.1:9/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/hook",
        "http://localhost:9/hook",
        "http://[::1]:9/hook",
        "file:///etc/passwd",
    ] {
        let config = json!({"taskId": task_id, "url": url, "token": "t"});
        let (_, answer) = rpc(agent.addr, "CreateTaskPushNotificationConfig", config).await;
        assert_eq!(code(&answer), -32602, "{url}: {answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains("refused"),
            "{answer}"
        );
        // Also refused when given with the message itself, before any task exists.
        let mut with_push = message("hi");
        with_push["configuration"] = json!({"taskPushNotificationConfig": {"url": url}});
        let (_, answer) = rpc(agent.addr, "SendMessage", with_push).await;
        assert_eq!(code(&answer), -32602, "{url}: {answer}");
    }
    let (_, configs) = rpc(
        agent.addr,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(configs["result"]["configs"], json!([]), "{configs}");
    let (_, listed) = rpc(agent.addr, "ListTasks", json!({})).await;
    assert_eq!(
        listed["result"]["totalSize"], 1,
        "only the first message made a task: {listed}"
    );

    let no_push = serve(echo(), None, 64 * 1024).await;
    let (_, answer) = rpc(
        no_push.addr,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(code(&answer), -32003, "{answer}");
    let card: Value = toolport_a2a::A2aClient::card(&no_push.base())
        .await
        .map(|c| serde_json::to_value(c).unwrap())
        .unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    // No authentication here: no extended card.
    let (_, answer) = rpc(no_push.addr, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(code(&answer), -32004, "{answer}");
}
