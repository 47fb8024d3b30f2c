//! The client library over stdio against `toolport serve --stdio`, in both
//! eras: concurrency, a server killed mid-call, and a server that never answers.

use std::time::{Duration, Instant};

use serde_json::json;
use toolport_client::{Client, ClientError, ClientOptions, ServerCommand, VersionPolicy};
use toolport_protocol::ProtocolVersion;

fn serve_stdio() -> ServerCommand {
    ServerCommand::new(env!("CARGO_BIN_EXE_toolport"), ["serve", "--demo", "--stdio"])
}

fn options(version: VersionPolicy) -> ClientOptions {
    ClientOptions {
        version,
        request_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

fn text(result: &toolport_protocol::tools::CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_calls_over_stdio_each_get_their_own_answer() {
    for (version, expected) in [
        (VersionPolicy::Auto, ProtocolVersion::V2026_07_28),
        (
            VersionPolicy::Pinned(ProtocolVersion::V2025_11_25),
            ProtocolVersion::V2025_11_25,
        ),
    ] {
        let client = Client::stdio(serve_stdio())
            .options(options(version))
            .connect()
            .await
            .unwrap();
        assert_eq!(client.server().await.unwrap().protocol_version, expected);
        let calls: Vec<_> = (0..100)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move { (i, client.call_tool("echo", json!({"message": format!("n{i}")})).await) })
            })
            .collect();
        for call in calls {
            let (i, result) = call.await.unwrap();
            assert_eq!(text(&result.unwrap()), format!("n{i}"));
        }
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_fails_its_calls_fast_and_is_started_again() {
    // The shell records its pid, then becomes the server.
    let dir = std::env::temp_dir().join(format!("toolport-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let script = format!(
        "echo $$ > {}; exec {} serve --demo --stdio",
        pid_file.display(),
        env!("CARGO_BIN_EXE_toolport")
    );
    let command = ServerCommand::new("sh", ["-c", script.as_str()]);
    for version in [VersionPolicy::Auto, VersionPolicy::Pinned(ProtocolVersion::V2025_06_18)] {
        let _ = std::fs::remove_file(&pid_file);
        let client = Client::stdio(command.clone())
            .options(options(version))
            .connect()
            .await
            .unwrap();
        let calls: Vec<_> = (0..5)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move {
                    client
                        .call_tool("long_task", json!({"steps": 1000, "step_ms": 100}))
                        .await
                })
            })
            .collect();
        // Wait (bounded) until the server runs all five.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let jobs = client.read_resource("demo://jobs").await.unwrap();
            let jobs: serde_json::Value = serde_json::from_str(jobs.contents[0].text.as_deref().unwrap()).unwrap();
            if jobs["started"] == 5 {
                break;
            }
            assert!(Instant::now() < deadline, "the calls did not start: {jobs}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let killed = Instant::now();
        let status = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .unwrap();
        assert!(status.success());
        for call in calls {
            let err = call.await.unwrap().unwrap_err();
            assert!(matches!(err, ClientError::Disconnected(_)), "{version:?}: {err}");
        }
        assert!(killed.elapsed() < Duration::from_secs(5), "{:?}", killed.elapsed());
        // The next call starts the server again.
        let result = client.call_tool("echo", json!({"message": "back"})).await.unwrap();
        assert_eq!(text(&result), "back");
        let new_pid = std::fs::read_to_string(&pid_file).unwrap();
        assert_ne!(pid, new_pid, "a new server process answered");
        client.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_server_that_never_answers_over_stdio_is_a_timeout() {
    // `sleep` reads nothing and writes nothing.
    let client = Client::stdio(ServerCommand::new("sleep", ["60"]))
        .options(ClientOptions {
            request_timeout: Duration::from_millis(400),
            probe_timeout: Duration::from_millis(100),
            ..ClientOptions::default()
        })
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(err, ClientError::Timeout(Duration::from_millis(400)));
    assert!(started.elapsed() < Duration::from_secs(3));
    client.close().await;
}

#[tokio::test]
async fn a_command_that_does_not_exist_is_a_clear_error() {
    let client = Client::stdio(ServerCommand::new("/nonexistent/toolport-test", Vec::<String>::new()))
        .build()
        .unwrap();
    let err = client.list_tools().await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Spawn(why) if why.contains("/nonexistent/toolport-test")),
        "{err}"
    );
}
