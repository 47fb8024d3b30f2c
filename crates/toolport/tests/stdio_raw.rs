//! `toolport serve --stdio` spoken to in raw bytes: exact lines in, exact
//! answers out, for every kind of bad input and for both eras.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["serve", "--demo", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start toolport");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Server { child, stdin, stdout }
    }

    async fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn line(&mut self, line: &str) {
        self.send(format!("{line}\n").as_bytes()).await;
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.stdout.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }

    /// The next answer, skipping notifications (log messages, progress).
    async fn answer(&mut self) -> Value {
        loop {
            let message = self.recv().await;
            if message.get("method").is_none() || message.get("id").is_some() {
                return message;
            }
        }
    }

    async fn ask(&mut self, line: &str) -> Value {
        self.line(line).await;
        self.answer().await
    }

    async fn initialize(&mut self, version: &str) -> Value {
        let answer = self
            .ask(&format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
            ))
            .await;
        self.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        answer
    }
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_with_a_null_id() {
    let mut s = Server::start();
    let answer = s.ask(r#"{"jsonrpc":"2.0","id":1,"method":"#).await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(code(&answer), -32700);
    // The connection goes on.
    assert_eq!(
        s.initialize("2025-11-25").await["result"]["protocolVersion"],
        "2025-11-25"
    );
}

#[tokio::test]
async fn json_that_is_not_a_request_is_an_invalid_request() {
    let mut s = Server::start();
    for (line, id) in [
        (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, json!(3)),
        (r#"{"jsonrpc":"2.0","id":4,"method":17}"#, json!(4)),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Value::Null),
        (r#"[1,2]"#, Value::Null),
        (r#""just a string""#, Value::Null),
    ] {
        let answer = s.ask(line).await;
        assert_eq!((code(&answer), answer["id"].clone()), (-32600, id), "{line}");
    }
}

#[tokio::test]
async fn unknown_methods_and_bad_params_get_their_codes() {
    let mut s = Server::start();
    s.initialize("2025-11-25").await;
    let answer = s.ask(r#"{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate"}"#).await;
    assert_eq!(
        answer,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: tools/frobnicate"}})
    );
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#)
        .await;
    assert_eq!(code(&answer), -32602);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `name`"),
        "{answer}"
    );
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool"}}"#)
        .await;
    assert_eq!(
        answer["error"],
        json!({"code":-32602,"message":"Invalid params: Unknown tool: no_such_tool"})
    );
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":"oops"}"#)
        .await;
    assert_eq!((code(&answer), answer["id"].clone()), (-32600, json!(4)));
    // Arguments that do not fit the schema are the tool's failure, for the model to fix.
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":7}}}"#)
        .await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("arguments/city"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_legacy_request_before_initialize_is_refused_clearly() {
    let mut s = Server::start();
    let answer = s.ask(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    assert_eq!(code(&answer), -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send `initialize` first"),
        "{answer}"
    );
    // ping is allowed before initialize.
    assert_eq!(
        s.ask(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
}

#[tokio::test]
async fn stateless_requests_need_their_meta_and_a_supported_version() {
    let mut s = Server::start();
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#)
        .await;
    assert_eq!(code(&answer), -32602);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("io.modelcontextprotocol/protocolVersion")
    );
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}"#)
        .await;
    assert_eq!(code(&answer), -32602);
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#)
        .await;
    assert_eq!(code(&answer), -32602);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    let answer = s
        .ask(r#"{"jsonrpc":"2.0","id":"v","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#)
        .await;
    assert_eq!(answer["id"], "v");
    assert_eq!(code(&answer), -32022);
    assert_eq!(
        answer["error"]["data"],
        json!({"supported":["2026-07-28"],"requested":"1999-01-01"})
    );
    // Methods 2026-07-28 removed are not found there.
    let answer = s
        .ask(&format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{{MODERN_META}}}}}"#
        ))
        .await;
    assert_eq!(code(&answer), -32601);
    // A good one: every result says resultType and who answered.
    let answer = s
        .ask(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{{MODERN_META}}}}}"#
        ))
        .await;
    let result = &answer["result"];
    assert_eq!(
        (
            result["resultType"].clone(),
            result["ttlMs"].clone(),
            result["cacheScope"].clone()
        ),
        (json!("complete"), json!(0), json!("private"))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolport-demo"
    );
}

#[tokio::test]
async fn a_2024_11_05_handshake_is_answered_in_kind() {
    let mut s = Server::start();
    let answer = s.initialize("2024-11-05").await;
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
    let tools = s.ask(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    let tools = tools["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 5);
    assert!(
        tools.iter().all(|t| t.get("outputSchema").is_none()),
        "no structured output before 2025-06-18"
    );
    assert!(tools.iter().all(|t| t.get("resultType").is_none()));
    let stats = s.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"compute_stats","arguments":{"numbers":[2]}}}"#).await;
    assert!(stats["result"].get("structuredContent").is_none());
    assert!(stats["result"].get("resultType").is_none());
    // An unknown version gets our newest handshake version.
    let mut s = Server::start();
    assert_eq!(
        s.initialize("2023-01-01").await["result"]["protocolVersion"],
        "2025-11-25"
    );
    // A second initialize on one connection is refused.
    let again = s.initialize("2025-11-25").await;
    assert_eq!(code(&again), -32600);
}

#[tokio::test]
async fn duplicate_in_flight_ids_are_refused_and_cancellation_works() {
    let mut s = Server::start();
    s.initialize("2025-11-25").await;
    s.line(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"long_task","arguments":{"steps":1000,"step_ms":20},"_meta":{"progressToken":"p9"}}}"#).await;
    // Its first progress notification proves the tool body runs (a cancel
    // that wins the race against its start would count nothing).
    // Only the start log comes before it; a few messages at most.
    let mut progressed = false;
    for _ in 0..10 {
        let message = s.recv().await;
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "p9");
            progressed = true;
            break;
        }
    }
    assert!(progressed, "long_task sent no progress among its first messages");
    let answer = s.ask(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#).await;
    assert_eq!(code(&answer), -32600);
    assert_eq!(answer["id"], 9);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in flight")
    );
    s.line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}"#)
        .await;
    // No answer comes for the cancelled request; once it is gone, its id is free again.
    let mut freed = false;
    for attempt in 0..100 {
        let answer = s
            .ask(&format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"ping","attempt":{attempt}}}"#
            ))
            .await;
        if answer.get("result").is_some() {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "the cancelled request's id never became free");
    let jobs = s
        .ask(r#"{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"demo://jobs"}}"#)
        .await;
    let jobs: Value = serde_json::from_str(jobs["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(jobs, json!({"started":1,"completed":0,"cancelled":1}));
}

#[tokio::test]
async fn a_10_mb_line_gets_a_clear_error_and_the_server_keeps_serving() {
    let mut s = Server::start();
    s.initialize("2025-11-25").await;
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "x".repeat(10 * 1024 * 1024)
    );
    s.line(&huge).await;
    let answer = s.answer().await;
    assert_eq!((code(&answer), answer["id"].clone()), (-32600, json!(77)));
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("over the 4194304-byte limit"), "{message}");
    let echo = s.ask(r#"{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}}}"#).await;
    assert_eq!(echo["result"]["content"][0]["text"], "still here");
}

#[tokio::test]
async fn batches_only_in_2025_03_26() {
    let mut s = Server::start();
    s.initialize("2025-03-26").await;
    s.line(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"b"}}}]"#).await;
    let answer = s.answer().await;
    let mut items = answer.as_array().expect("a batch answer is an array").clone();
    items.sort_by_key(|i| i["id"].as_i64());
    assert_eq!(items[0], json!({"jsonrpc":"2.0","id":1,"result":{}}));
    assert_eq!(items[1]["result"]["content"][0]["text"], "b");
    assert_eq!(items.len(), 2);

    let mut s = Server::start();
    s.initialize("2025-11-25").await;
    let answer = s.ask(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
    assert_eq!(code(&answer), -32600);
    assert!(answer["error"]["message"].as_str().unwrap().contains("2025-03-26"));
}

#[tokio::test]
async fn eof_is_a_clean_exit_without_losing_an_answer() {
    let mut s = Server::start();
    s.initialize("2025-11-25").await;
    s.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long_task","arguments":{"steps":3,"step_ms":50}}}"#).await;
    drop(s.stdin.take());
    let answer = s.answer().await;
    assert_eq!(
        answer,
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"finished 3 steps"}]}})
    );
    let status = tokio::time::timeout(Duration::from_secs(10), s.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(
        s.stdout.next_line().await.unwrap().is_none(),
        "nothing after the last answer"
    );
}

#[tokio::test]
async fn mrtr_round_trip_over_stdio() {
    let mut s = Server::start();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let first = s
        .ask(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"book_table","arguments":{{"restaurant":"R"}},{meta}}}}}"#))
        .await;
    assert_eq!(first["result"]["resultType"], "input_required");
    assert_eq!(
        first["result"]["inputRequests"]["booking"]["method"],
        "elicitation/create"
    );
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = |state: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"book_table","arguments":{{"restaurant":"R"}},"inputResponses":{{"booking":{{"action":"accept","content":{{"name":"Bo","guests":2}}}}}},"requestState":"{state}",{meta}}}}}"#
        )
    };
    let done = s.ask(&retry(&state)).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Booked a table for 2 at R under the name Bo."
    );
    assert_eq!(done["result"]["resultType"], "complete");
    // A tampered state is refused.
    let mut tampered = state.clone().into_bytes();
    tampered[5] = if tampered[5] == b'A' { b'B' } else { b'A' };
    let refused = s.ask(&retry(&String::from_utf8(tampered).unwrap())).await;
    assert_eq!(code(&refused), -32602);
    // Without the capability, the server does not ask.
    let no_cap = s
        .ask(&format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"book_table","arguments":{{"restaurant":"R"}},{MODERN_META}}}}}"#))
        .await;
    assert_eq!(code(&no_cap), -32021);
    assert_eq!(
        no_cap["error"]["data"],
        json!({"requiredCapabilities":{"elicitation":{"form":{}}}})
    );
}

#[tokio::test]
async fn statistics_beyond_a_64_bit_float_are_an_error_result_not_nulls_in_both_eras() {
    // [1e308, 1e308] sums to infinity, which JSON cannot say: the answer
    // must not be `sum: null` where the outputSchema promises a number.
    let mut s = Server::start();
    s.initialize("2025-11-25").await;
    let call = r#""name":"compute_stats","arguments":{"numbers":[1e308,1e308]}"#;
    let legacy = s
        .ask(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{call}}}}}"#
        ))
        .await;
    let modern = s
        .ask(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{{call},{MODERN_META}}}}}"#
        ))
        .await;
    for (era, answer) in [("handshake", legacy), ("2026-07-28", modern)] {
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{era}: {answer}");
        assert!(result.get("structuredContent").is_none(), "{era}: {answer}");
        assert!(!answer.to_string().contains("null"), "{era}: {answer}");
        assert!(
            result["content"][0]["text"].as_str().unwrap().contains("64-bit float"),
            "{era}: {answer}"
        );
    }
}
