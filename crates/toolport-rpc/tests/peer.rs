//! The Peer engine over an in-memory pipe: ids, routing, cancellation,
//! timeouts, duplicates and draining at EOF, asserted on the raw lines.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::Notify;
use toolport_protocol::{ErrorObject, Request};
use toolport_rpc::peer::{PeerOptions, RequestContext, RpcError, Service, connect};
use toolport_rpc::stdio::from_async;

/// `sleep` waits until cancelled (and counts the cancellation); `ask` sends a
/// request back to us and returns what we answered; anything else echoes.
#[derive(Clone, Default)]
struct TestService {
    cancelled: Arc<AtomicUsize>,
    started: Arc<Notify>,
    gate: Arc<Notify>,
}

impl Service for TestService {
    async fn call(&self, request: Request, cx: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
        match request.method.as_str() {
            "sleep" => {
                self.started.notify_one();
                cx.cancel.cancelled().await;
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                Err(ErrorObject::internal("cancelled"))
            }
            "gated" => {
                self.gate.notified().await;
                Ok(RawValue::from_string("\"gated done\"".into()).unwrap())
            }
            "slow" => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(RawValue::from_string("\"slow done\"".into()).unwrap())
            }
            "ask" => match cx.peer.request("question", None).await {
                Ok(answer) => Ok(answer),
                Err(e) => Err(ErrorObject::internal(e)),
            },
            _ => Ok(serde_json::value::to_raw_value(&request.params).unwrap()),
        }
    }
}

struct Harness {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
    service: TestService,
    done: tokio::task::JoinHandle<()>,
}

fn start_pipes(options: PeerOptions) -> Harness {
    let (to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let transport = from_async(BufReader::new(server_in), server_out, 1024);
    let (_peer, connection) = connect(transport, options);
    let service = TestService::default();
    let done = tokio::spawn(connection.serve(service.clone()));
    Harness {
        to_server,
        from_server: BufReader::new(from_server).lines(),
        service,
        done,
    }
}

impl Harness {
    async fn send(&mut self, line: &str) {
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
    }
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.from_server.next_line())
            .await
            .expect("an answer within 5 s")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test]
async fn answers_are_routed_by_id() {
    let mut h = start_pipes(PeerOptions::default());
    h.send(r#"{"jsonrpc":"2.0","id":"a","method":"gated"}"#).await;
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":1}}"#)
        .await;
    // The second overtakes the first, which waits for the gate; each answer
    // carries its own id.
    assert_eq!(h.recv().await, json!({"jsonrpc":"2.0","id":1,"result":{"x":1}}));
    h.service.gate.notify_one();
    assert_eq!(h.recv().await, json!({"jsonrpc":"2.0","id":"a","result":"gated done"}));
}

#[tokio::test]
async fn cancellation_fires_the_handlers_token_and_suppresses_the_answer() {
    let mut h = start_pipes(PeerOptions::default());
    h.send(r#"{"jsonrpc":"2.0","id":7,"method":"sleep"}"#).await;
    h.service.started.notified().await;
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#)
        .await;
    h.send(r#"{"jsonrpc":"2.0","id":8,"method":"echo","params":{}}"#).await;
    // The next line is the answer to 8: nothing is sent for the cancelled 7.
    assert_eq!(h.recv().await, json!({"jsonrpc":"2.0","id":8,"result":{}}));
    assert_eq!(h.service.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn duplicate_in_flight_ids_are_refused() {
    let mut h = start_pipes(PeerOptions::default());
    h.send(r#"{"jsonrpc":"2.0","id":5,"method":"sleep"}"#).await;
    h.service.started.notified().await;
    h.send(r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{}}"#).await;
    let answer = h.recv().await;
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in flight")
    );
}

#[tokio::test]
async fn overload_is_refused_with_a_retry_hint() {
    let mut h = start_pipes(PeerOptions {
        max_in_flight: 1,
        ..PeerOptions::default()
    });
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"sleep"}"#).await;
    h.service.started.notified().await;
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo"}"#).await;
    let answer = h.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(2), json!(-32010))
    );
    assert!(answer["error"]["data"]["retryAfterMs"].is_u64());
}

#[tokio::test]
async fn requests_back_to_the_client_are_answered_by_id() {
    let mut h = start_pipes(PeerOptions::default());
    h.send(r#"{"jsonrpc":"2.0","id":"outer","method":"ask"}"#).await;
    let question = h.recv().await;
    assert_eq!(question["method"], "question");
    let id = question["id"].clone();
    h.send(&json!({"jsonrpc":"2.0","id":id,"result":{"answer":42}}).to_string())
        .await;
    assert_eq!(
        h.recv().await,
        json!({"jsonrpc":"2.0","id":"outer","result":{"answer":42}})
    );
}

#[tokio::test(start_paused = true)]
async fn our_requests_time_out_and_are_cancelled() {
    let mut h = start_pipes(PeerOptions {
        request_timeout: Duration::from_secs(2),
        ..PeerOptions::default()
    });
    h.send(r#"{"jsonrpc":"2.0","id":"outer","method":"ask"}"#).await;
    let question = h.recv().await;
    // We never answer: the handler's request times out, a cancellation is
    // sent for it, and the handler's failure comes back as an error.
    let cancelled = h.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], question["id"]);
    let answer = h.recv().await;
    assert_eq!(answer["id"], "outer");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no answer within 2s")
    );
}

#[tokio::test]
async fn eof_drains_in_flight_requests_before_closing() {
    let mut h = start_pipes(PeerOptions::default());
    h.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#).await;
    h.to_server.shutdown().await.unwrap();
    assert_eq!(h.recv().await, json!({"jsonrpc":"2.0","id":1,"result":"slow done"}));
    tokio::time::timeout(Duration::from_secs(5), h.done)
        .await
        .unwrap()
        .unwrap();
    assert!(
        h.from_server.next_line().await.unwrap().is_none(),
        "the output closes after the last answer"
    );
}

#[tokio::test]
async fn malformed_and_oversized_lines_get_errors_and_the_connection_goes_on() {
    let mut h = start_pipes(PeerOptions::default());
    h.send("{oops").await;
    assert_eq!(h.recv().await["error"]["code"], -32700);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"echo","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    );
    h.send(&big).await;
    let answer = h.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(99), json!(-32600))
    );
    h.send(r#"[{"jsonrpc":"2.0","id":1,"method":"echo"}]"#).await;
    assert!(
        h.recv().await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-03-26")
    );
    h.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}"#).await;
    assert_eq!(h.recv().await, json!({"jsonrpc":"2.0","id":2,"result":[1]}));
}

#[tokio::test]
async fn a_closed_connection_fails_waiting_requests() {
    let (to_server, server_in) = tokio::io::duplex(1024);
    let (server_out, _from_server) = tokio::io::duplex(1024);
    let transport = from_async(BufReader::new(server_in), server_out, 1024);
    let (peer, connection) = connect(transport, PeerOptions::default());
    let serving = tokio::spawn(connection.serve(TestService::default()));
    let waiting = tokio::spawn(async move { peer.request("never", None).await });
    drop(to_server);
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.unwrap_err(), RpcError::Closed);
    serving.await.unwrap();
}
