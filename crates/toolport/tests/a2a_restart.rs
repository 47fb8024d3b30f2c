//! `toolport serve --a2a` killed with SIGKILL mid-task and started again on
//! the same data directory: every task and its history are there; a task
//! that waited for input still waits and takes its answer; the task that was
//! running when the process died ends failed, saying so, once its lease runs
//! out (docs/a2a.md, "Restarts").

mod support;

use std::process::Command;

use serde_json::json;
use support::{Served, spawn_serve};
use toolport_a2a::{
    A2aClient, Binding, Message, Part, SendMessageConfiguration, SendMessageRequest, StreamResponse, Task, TaskState,
};

/// A seal key, so that a question's `requestState` opens after the restart.
const SEAL_KEY: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

fn serve(data: &std::path::Path) -> (Served, String) {
    let config = data.join("toolport.toml");
    std::fs::write(&config, "[tasks]\nlease_seconds = 1\nmaintenance_seconds = 1\n").unwrap();
    let (served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--a2a", "--config"])
            .arg(&config)
            .env("TOOLPORT_DATA_DIR", data)
            .env("TOOLPORT_SEAL_KEYS", SEAL_KEY),
    );
    // The MCP endpoint's URL: the agent is at its origin.
    let base = url.trim_end_matches("/mcp").to_owned();
    (served, base)
}

fn tool(name: &str, arguments: serde_json::Value, return_immediately: bool) -> SendMessageRequest {
    let mut request = SendMessageRequest::new(Message::user(vec![Part::data(
        json!({"tool": name, "arguments": arguments}),
    )]));
    request.configuration = Some(SendMessageConfiguration {
        return_immediately,
        ..SendMessageConfiguration::default()
    });
    request
}

fn task(answer: StreamResponse) -> Task {
    match answer {
        StreamResponse::Task(task) => task,
        other => panic!("a task, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_loses_no_task_and_ends_the_interrupted_one_clearly() {
    let data = tempfile::tempdir().unwrap();
    let (mut first, base) = serve(data.path());
    let (client, _) = A2aClient::discover(&base, Some(Binding::JsonRpc)).await.unwrap();
    let echoed = task(
        client
            .send(tool("echo", json!({"message": "before"}), false))
            .await
            .unwrap(),
    );
    assert_eq!(echoed.status.state, TaskState::Completed);
    let asked = task(
        client
            .send(tool("book_table", json!({"restaurant": "Chez Kill"}), false))
            .await
            .unwrap(),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let running = task(
        client
            .send(tool("long_task", json!({"steps": 600, "step_ms": 50}), true))
            .await
            .unwrap(),
    );
    // Killed once it is surely running: after its first progress update.
    let mut updates = client.subscribe(&running.id).await.unwrap();
    loop {
        match updates.next().await.expect("the task runs").unwrap() {
            StreamResponse::StatusUpdate(update) if update.status.message.is_some() => break,
            _ => {}
        }
    }
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    drop(updates);

    let (_second, base) = serve(data.path());
    let (client, _) = A2aClient::discover(&base, Some(Binding::Rest)).await.unwrap();
    let echoed_again = client.get(&echoed.id, None).await.unwrap();
    assert_eq!(echoed_again, echoed, "a finished task reads back whole");
    let waiting = client.get(&asked.id, None).await.unwrap();
    assert_eq!(waiting.status.state, TaskState::InputRequired);
    assert_eq!(
        waiting.history.as_ref().map(Vec::len),
        Some(2),
        "the request and the question"
    );
    // The question is answered after the restart.
    let mut answer = SendMessageRequest::new(Message::user(vec![Part::data(json!({
        "inputResponses": {"booking": {"action": "accept", "content": {"name": "Ada", "guests": 2}}}
    }))]));
    answer.message.task_id = Some(asked.id.clone());
    let booked = task(client.send(answer).await.unwrap());
    assert_eq!(booked.status.state, TaskState::Completed, "{booked:?}");
    let text = booked.artifacts.unwrap()[0].parts[0].text.clone().unwrap();
    assert_eq!(text, "Booked a table for 2 at Chez Kill under the name Ada.");
    // The task that was running is failed by recovery once its lease ran out.
    let interrupted = client.get(&running.id, None).await.unwrap();
    let interrupted = if interrupted.status.state.is_terminal() {
        interrupted
    } else {
        let mut updates = client.subscribe(&running.id).await.unwrap();
        let mut last = None;
        while let Some(item) = updates.next().await {
            last = Some(item.unwrap());
        }
        assert!(matches!(last, Some(StreamResponse::StatusUpdate(_))), "{last:?}");
        client.get(&running.id, None).await.unwrap()
    };
    assert_eq!(interrupted.status.state, TaskState::Failed);
    let why = interrupted.status.message.map(|m| m.text()).unwrap_or_default();
    assert!(why.contains("stopped before it finished"), "{why}");
    assert_eq!(
        interrupted.history.unwrap()[0].data(),
        Some(&json!({"tool": "long_task", "arguments": {"steps": 600, "step_ms": 50}}))
    );
    // And the list has all three, newest first.
    let listed = client.list(&Default::default()).await.unwrap();
    let ids: Vec<&str> = listed.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, [running.id.as_str(), asked.id.as_str(), echoed.id.as_str()]);
}
