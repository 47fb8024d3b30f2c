//! A tool run as an A2A skill goes through the same policy layers and audit
//! stream as an MCP call: a per-tool rate limit refuses the second call (the
//! task fails saying so), and both calls are in the audit file, with the
//! same outcome words as MCP's.

mod support;

use std::process::Command;

use serde_json::{Value, json};
use support::spawn_serve;
use toolport_a2a::{A2aClient, Binding, Message, Part, SendMessageRequest, StreamResponse, TaskState};

fn echo(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user(vec![Part::data(
        json!({"tool": "echo", "arguments": {"message": text}}),
    )]))
}

fn state_and_text(answer: StreamResponse) -> (TaskState, String) {
    let StreamResponse::Task(task) = answer else {
        panic!("a task")
    };
    let text = match task.status.state {
        TaskState::Completed => task.artifacts.unwrap()[0].parts[0].text.clone().unwrap(),
        _ => task.status.message.map(|m| m.text()).unwrap_or_default(),
    };
    (task.status.state, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_rate_limited_and_audited_like_tools() {
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("toolport.toml");
    std::fs::write(
        &config,
        "[http]\ndrain_delay_seconds = 0\n\n[limits.tools.echo]\nrate = { per_second = 0.001, burst = 1 }\n",
    )
    .unwrap();
    let (mut served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--a2a", "--config"])
            .arg(&config)
            .env("TOOLPORT_DATA_DIR", data.path()),
    );
    let base = url.trim_end_matches("/mcp");
    let (client, _) = A2aClient::discover(base, Some(Binding::JsonRpc)).await.unwrap();
    assert_eq!(
        state_and_text(client.send(echo("first")).await.unwrap()),
        (TaskState::Completed, "first".to_owned())
    );
    let (state, why) = state_and_text(client.send(echo("second")).await.unwrap());
    assert_eq!(state, TaskState::Failed);
    assert!(why.contains("rate limit of tool echo reached"), "{why}");

    // A clean stop writes the audit file out and closes its chain.
    let stopped = Command::new("kill")
        .args(["-TERM", &served.0.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert!(served.0.wait().unwrap().success());
    let audit = std::fs::read_to_string(data.path().join("audit.jsonl")).unwrap();
    let calls: Vec<Value> = audit
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record["tool"] == "echo")
        .collect();
    let outcomes: Vec<&str> = calls.iter().map(|c| c["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes.len(), 2, "{audit}");
    assert_eq!(outcomes[0], "ok", "{audit}");
    assert_ne!(outcomes[1], "ok", "{audit}");
    assert_eq!(calls[0]["arguments"], json!({"message": "first"}), "{audit}");
}
