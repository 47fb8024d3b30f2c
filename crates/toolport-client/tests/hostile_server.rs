//! The client against a server that answers badly: malformed, oversized,
//! misaddressed and out-of-place messages, wrong statuses. Each is a clear
//! error (never a hang, never a panic), and the client stays usable.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolport_client::handler::BoxFuture;
use toolport_client::{
    AuthChallenge, AuthDecision, Backoff, Client, ClientError, ClientOptions, StaticToken, TokenProvider, VersionPolicy,
};
use toolport_protocol::ProtocolVersion;

/// Builds the raw reply from the request head (lower case) and body.
type Respond = Arc<dyn Fn(&str, &Value) -> String + Send + Sync>;

/// A raw HTTP/1.1 server: `server/discover` gets a valid 2026-07-28 answer,
/// every other request what `respond` writes. Records the heads of the
/// requests it passes to `respond`.
async fn raw_server(respond: Respond) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let respond = respond.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, body) = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        while buf.len() < end + 4 + length {
                            let n = socket.read(&mut chunk).await.unwrap_or(0);
                            if n == 0 {
                                return;
                            }
                            buf.extend_from_slice(&chunk[..n]);
                        }
                        break (head, buf[end + 4..end + 4 + length].to_vec());
                    }
                };
                let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let reply = if request["method"] == "server/discover" {
                    let result = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                        "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                        "ttlMs": 0, "cacheScope": "private"}});
                    http("200 OK", "application/json", &result.to_string())
                } else {
                    seen.lock().unwrap().push(head.clone());
                    respond(&head, &request)
                };
                let _ = socket.write_all(reply.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (addr, heads)
}

fn http(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn client(addr: SocketAddr) -> Client {
    Client::http(format!("http://{addr}/mcp"))
        .options(ClientOptions {
            version: VersionPolicy::Pinned(ProtocolVersion::V2026_07_28),
            request_timeout: Duration::from_secs(5),
            max_message_bytes: 4096,
            backoff: Backoff {
                initial: Duration::from_millis(1),
                max: Duration::from_millis(5),
                max_attempts: 2,
            },
            ..ClientOptions::default()
        })
        .build()
        .unwrap()
}

async fn against(respond: impl Fn(&Value) -> String + Send + Sync + 'static) -> ClientError {
    let (addr, _) = raw_server(Arc::new(move |_: &str, request: &Value| respond(request))).await;
    let client = client(addr);
    client.call_tool("anything", json!({})).await.unwrap_err()
}

#[tokio::test]
async fn malformed_and_misaddressed_answers_are_protocol_errors() {
    let err = against(|_| http("200 OK", "application/json", "{not json")).await;
    assert!(
        matches!(&err, ClientError::Protocol(why) if why.contains("does not decode")),
        "{err}"
    );

    let err = against(|_| {
        http(
            "200 OK",
            "application/json",
            r#"{"jsonrpc":"2.0","id":999,"result":{}}"#,
        )
    })
    .await;
    assert!(
        matches!(&err, ClientError::Protocol(why) if why.contains("not the response")),
        "{err}"
    );

    let err = against(|r| {
        http(
            "200 OK",
            "application/json",
            &json!({"jsonrpc": "2.0", "id": r["id"], "result": 5}).to_string(),
        )
    })
    .await;
    assert!(matches!(&err, ClientError::Protocol(_)), "{err}");

    let err = against(|_| http("202 Accepted", "application/json", "")).await;
    assert!(
        matches!(&err, ClientError::Protocol(why) if why.contains("202")),
        "{err}"
    );

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"pad":"{}"}}}}"#,
        "x".repeat(10_000)
    );
    let err = against(move |_| http("200 OK", "application/json", &big)).await;
    assert!(
        matches!(&err, ClientError::Protocol(why) if why.contains("larger than 4096")),
        "{err}"
    );

    let big_event = format!("data: {}\n\n", "x".repeat(10_000));
    let err = against(move |_| http("200 OK", "text/event-stream", &big_event)).await;
    assert!(
        matches!(&err, ClientError::Protocol(why) if why.contains("over 4096")),
        "{err}"
    );
}

#[tokio::test]
async fn wrong_statuses_keep_their_meaning() {
    let err = against(|_| http("404 Not Found", "text/html", "<h1>nope</h1>")).await;
    assert_eq!(
        err,
        ClientError::Http {
            status: 404,
            body: "<h1>nope</h1>".into(),
            retry_after: None,
        }
    );
    assert!(err.hint().contains("/mcp"));

    let err = against(|r| {
        let body = json!({"jsonrpc": "2.0", "id": r["id"], "error": {"code": -32603, "message": "boom"}});
        http("500 Internal Server Error", "application/json", &body.to_string())
    })
    .await;
    assert_eq!(err.code(), Some(toolport_protocol::ErrorCode::INTERNAL_ERROR), "{err}");

    // 503 without a JSON-RPC error: the request was not run, so it is retried, then reported.
    let err = against(|_| http("503 Service Unavailable", "text/plain", "busy")).await;
    assert_eq!(
        err,
        ClientError::Http {
            status: 503,
            body: "busy".into(),
            retry_after: None,
        }
    );
}

#[tokio::test]
async fn streams_that_break_or_carry_forbidden_messages() {
    // Garbage, then the end of the stream without an answer.
    let err = against(|_| {
        http(
            "200 OK",
            "text/event-stream",
            "data: {oops\n\nevent: other\ndata: x\n\n",
        )
    })
    .await;
    assert!(
        matches!(&err, ClientError::Disconnected(why) if why.contains("ended before")),
        "{err}"
    );

    // A request from the server on a 2026-07-28 stream is ignored; the
    // response after it still answers the call.
    let err_or_ok = {
        let (addr, _) = raw_server(Arc::new(|_: &str, r: &Value| {
            let request = json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}});
            let response =
                json!({"jsonrpc": "2.0", "id": r["id"], "result": {"content": [{"type": "text", "text": "fine"}]}});
            http(
                "200 OK",
                "text/event-stream",
                &format!("data: {request}\n\ndata: {response}\n\n"),
            )
        }))
        .await;
        client(addr).call_tool("anything", json!({})).await
    };
    let result = err_or_ok.unwrap();
    assert_eq!(result.content[0].as_text(), Some("fine"));
}

#[tokio::test]
async fn a_401_is_reported_with_its_challenge_and_tokens_stay_secret() {
    let challenge = r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", scope="read""#;
    let respond: Respond = Arc::new(move |_, _| {
        format!(
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: {challenge}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    });
    let (addr, heads) = raw_server(respond).await;
    let client = Client::http(format!("http://{addr}/mcp"))
        .options(ClientOptions {
            version: VersionPolicy::Pinned(ProtocolVersion::V2026_07_28),
            ..ClientOptions::default()
        })
        .auth(StaticToken::new("s3cret-token"))
        .build()
        .unwrap();
    let err = client.list_tools().await.unwrap_err();
    match &err {
        ClientError::Unauthorized { www_authenticate } => assert_eq!(www_authenticate.as_deref(), Some(challenge)),
        other => panic!("{other}"),
    }
    assert!(!err.to_string().contains("s3cret"), "{err}");
    assert!(!format!("{err:?}").contains("s3cret"));
    // The request carried the token, once: a static token is not retried.
    let heads = heads.lock().unwrap();
    assert_eq!(heads.len(), 1);
    assert!(heads[0].contains("authorization: bearer s3cret-token"), "{heads:?}");
}

/// A provider that hands out `token-N` and moves to the next one on each
/// challenge, recording what it was told.
#[derive(Debug, Default)]
struct Rotating {
    issued: Mutex<u32>,
    challenges: Mutex<Vec<Seen>>,
}

/// Status, `error` and `scope` of a challenge.
type Seen = (u16, Option<String>, Option<String>);

impl TokenProvider for Rotating {
    fn token(&self) -> BoxFuture<'_, Option<String>> {
        let n = *self.issued.lock().unwrap();
        Box::pin(async move { Some(format!("token-{n}")) })
    }
    fn on_unauthorized<'a>(&'a self, c: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        let seen = (c.status, c.error().map(str::to_owned), c.scope().map(str::to_owned));
        self.challenges.lock().unwrap().push(seen);
        *self.issued.lock().unwrap() += 1;
        Box::pin(async { AuthDecision::Retry })
    }
    fn on_insufficient_scope<'a>(&'a self, c: &'a AuthChallenge) -> BoxFuture<'a, AuthDecision> {
        self.on_unauthorized(c)
    }
}

#[tokio::test]
async fn a_token_provider_answers_401_and_403_challenges_within_a_retry_bound() {
    for stubborn in [false, true] {
        // token-0 gets 401, token-1 gets 403 insufficient_scope, token-2 the
        // result; a stubborn server answers 401 whatever the token.
        let (addr, heads) = raw_server(Arc::new(move |head: &str, request: &Value| {
            if stubborn || head.contains("bearer token-0") {
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer error=\"invalid_token\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
            } else if head.contains("bearer token-1") {
                "HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"tools:read\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
            } else {
                http("200 OK", "application/json", &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}}).to_string())
            }
        }))
        .await;
        let provider = Arc::new(Rotating::default());
        let client = Client::http(format!("http://{addr}/mcp"))
            .options(ClientOptions {
                version: VersionPolicy::Pinned(ProtocolVersion::V2026_07_28),
                ..ClientOptions::default()
            })
            .auth(provider.clone())
            .build()
            .unwrap();
        let outcome = client.list_tools().await;
        let challenges = provider.challenges.lock().unwrap().clone();
        assert_eq!(
            heads.lock().unwrap().len(),
            3,
            "stubborn={stubborn}: sent at most three times"
        );
        if stubborn {
            assert!(matches!(outcome, Err(ClientError::Unauthorized { .. })), "{outcome:?}");
            assert_eq!(challenges.len(), 2);
        } else {
            assert_eq!(outcome.unwrap(), []);
            assert_eq!(
                challenges,
                [
                    (401, Some("invalid_token".into()), None),
                    (403, Some("insufficient_scope".into()), Some("tools:read".into()))
                ]
            );
        }
    }
}
