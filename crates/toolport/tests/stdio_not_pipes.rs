//! `toolport serve --stdio` when stdin or stdout is not a pipe (a file, as
//! in `toolport serve --stdio < requests > answers`): served by blocking
//! threads instead of the runtime's non-blocking pipes, with the same answers.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn requests(calls: u64) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    writeln!(
        file,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"files","version":"1"}}}}}}"#
    )
    .unwrap();
    writeln!(file, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    for id in 1..=calls {
        writeln!(
            file,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"call {id}"}}}}}}"#
        )
        .unwrap();
    }
    file.flush().unwrap();
    file
}

/// Waits (at most 20 s) for the server to exit on its own.
fn exits_cleanly(child: &mut Child) {
    for _ in 0..2000 {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    panic!("the server did not exit at the end of its input");
}

/// One answer per request, each the right one (in any order).
fn check_answers(lines: Vec<String>, calls: u64) {
    let mut answers: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("not JSON {l:?}: {e}")))
        .filter(|m| m.get("id").is_some()) // not notifications
        .collect();
    assert_eq!(answers.len() as u64, calls + 1, "one answer per request");
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(answers[0]["id"], 0);
    assert!(answers[0]["result"]["serverInfo"].is_object(), "{}", answers[0]);
    for (id, answer) in (1..=calls).zip(&answers[1..]) {
        assert_eq!(
            answer,
            &json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":format!("call {id}")}]}})
        );
    }
}

#[test]
fn requests_from_a_file_answers_to_a_file() {
    let input = requests(3);
    let output = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--stdio"])
        .stdin(input.reopen().unwrap())
        .stdout(output.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    exits_cleanly(&mut child);
    let text = std::fs::read_to_string(output.path()).unwrap();
    check_answers(text.lines().map(str::to_owned).collect(), 3);
}

/// stdin a file, stdout a pipe: stdout must stay blocking for the writer
/// thread, or answers are lost once the pipe is full (far more than 64 KiB
/// of answers here).
#[test]
fn requests_from_a_file_answers_to_a_pipe() {
    let calls = 3000;
    let input = requests(calls);
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--stdio"])
        .stdin(input.reopen().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let lines: Vec<String> = stdout.lines().map(Result::unwrap).collect();
    exits_cleanly(&mut child);
    check_answers(lines, calls);
}
