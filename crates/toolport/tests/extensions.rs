//! Open routing: a method registered on the builder through an extension is
//! answered over stdio and over Streamable HTTP, in both eras, after the same
//! era checks as the core methods, and the extension is advertised under
//! `capabilities.extensions`.

mod support;

use std::time::Duration;

use http::StatusCode;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolport_http::HttpConfig;
use toolport_protocol::ErrorObject;
use toolport_rpc::PeerOptions;
use toolport_rpc::stdio::from_async;
use toolport_server::{Extension, RequestContext, Server};

use support::{ACCEPT, JSON, MODERN_META, TestServer, call, initialize, legacy_headers, modern_headers};

const EXTENSION: &str = "com.example/text";

/// `text/reverse` reverses `params.text` and says which protocol version the
/// request spoke; a missing `text` is the handler's own -32602. `text/broken`
/// answers a number where a result object belongs.
fn server() -> Server {
    let text = Extension::new(EXTENSION)
        .settings(json!({ "maxLength": 64 }))
        .method(
            "text/reverse",
            |cx: RequestContext, params: Map<String, Value>| async move {
                let Some(text) = params.get("text").and_then(Value::as_str) else {
                    return Err(ErrorObject::invalid_params("text/reverse needs params.text"));
                };
                let reversed: String = text.chars().rev().collect();
                Ok(json!({ "reversed": reversed, "version": cx.protocol_version().as_str() }))
            },
        )
        .method("text/broken", |_: RequestContext, _: Map<String, Value>| async {
            Ok(json!(42))
        });
    Server::builder("extensions", "1.0.0")
        .extension(text)
        .build()
        .expect("valid definitions")
}

fn advertised() -> Value {
    json!({ EXTENSION: { "maxLength": 64 } })
}

#[tokio::test]
async fn an_extension_method_over_http_in_the_stateless_era() {
    let s = TestServer::start(server(), HttpConfig::default()).await;

    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{MODERN_META}}}}}"#);
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("server/discover", None), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result"]["capabilities"]["extensions"], advertised());

    let body = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"text/reverse","params":{{"text":"abc",{MODERN_META}}}}}"#);
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("text/reverse", None), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let result = &answer["result"];
    assert_eq!(result["reversed"], "cba");
    assert_eq!(result["version"], "2026-07-28");
    assert_eq!(result["resultType"], "complete", "shaped like every 2026-07-28 result");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "extensions"
    );

    // The handler's own error keeps its code; the transport gives it its status.
    let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"text/reverse","params":{{{MODERN_META}}}}}"#);
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("text/reverse", None), &body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(
        answer["error"]["message"],
        "Invalid params: text/reverse needs params.text"
    );

    // The era checks come first: an extension method is no way around them.
    let body = r#"{"jsonrpc":"2.0","id":4,"method":"text/reverse","params":{"text":"abc","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("text/reverse", None), body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["error"]["code"], -32602,
        "clientCapabilities is required: {answer}"
    );

    // An unregistered method is still "not found".
    let body = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"text/other","params":{{{MODERN_META}}}}}"#);
    let (status, _, answer) = call(s.addr, "POST", &modern_headers("text/other", None), &body).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert_eq!(answer["error"]["code"], -32601);
}

#[tokio::test]
async fn an_extension_method_over_http_in_a_handshake_session() {
    let s = TestServer::start(server(), HttpConfig::default()).await;
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (status, _, answer) = call(s.addr, "POST", &[JSON, ACCEPT], body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result"]["capabilities"]["extensions"], advertised());

    let session = initialize(s.addr, "2025-11-25").await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"text/reverse","params":{"text":"héllo"}}"#;
    let (status, _, answer) = call(s.addr, "POST", &legacy_headers(&session), body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result"]["reversed"], "olléh");
    assert_eq!(answer["result"]["version"], "2025-11-25");
    assert!(
        answer["result"].get("resultType").is_none(),
        "the handshake era has no resultType: {answer}"
    );
}

/// A line-by-line JSON-RPC client on an in-memory stdio connection.
struct Stdio {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
}

impl Stdio {
    fn connect(server: &Server) -> Stdio {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let transport = from_async(BufReader::new(server_in), server_out, 1 << 20);
        tokio::spawn(server.clone().serve_transport(transport, PeerOptions::default()));
        Stdio {
            to_server,
            from_server: BufReader::new(from_server).lines(),
        }
    }

    async fn exchange(&mut self, message: Value) -> Value {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        let line = tokio::time::timeout(Duration::from_secs(10), self.from_server.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the connection is open");
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test]
async fn an_extension_method_over_stdio_in_both_eras() {
    let server = server();
    let mut stdio = Stdio::connect(&server);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });

    let answer = stdio
        .exchange(json!({"jsonrpc": "2.0", "id": 1, "method": "text/reverse", "params": {"text": "ab", "_meta": meta}}))
        .await;
    assert_eq!(answer["result"]["reversed"], "ba", "{answer}");
    assert_eq!(answer["result"]["version"], "2026-07-28");
    assert_eq!(answer["result"]["resultType"], "complete");

    // Handshake era on the same connection: refused before initialize, like a core method.
    let answer = stdio
        .exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "text/reverse", "params": {"text": "ab"}}))
        .await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");

    let answer = stdio
        .exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        .await;
    assert_eq!(answer["result"]["capabilities"]["extensions"], advertised(), "{answer}");
    let answer = stdio
        .exchange(json!({"jsonrpc": "2.0", "id": 4, "method": "text/reverse", "params": {"text": "xyz"}}))
        .await;
    assert_eq!(answer["result"]["reversed"], "zyx", "{answer}");
    assert_eq!(answer["result"]["version"], "2025-06-18");
    assert!(answer["result"].get("resultType").is_none(), "{answer}");

    // A result that is not an object is the server's fault, said plainly.
    let answer = stdio
        .exchange(json!({"jsonrpc": "2.0", "id": 5, "method": "text/broken", "params": {}}))
        .await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("text/broken"),
        "{answer}"
    );
}

#[test]
fn extensions_that_clash_with_the_protocol_are_refused_at_build() {
    let clash = Extension::new("com.example/bad")
        .method("tools/call", |_: RequestContext, _: Map<String, Value>| async {
            Ok(json!({}))
        });
    let error = Server::builder("x", "1").extension(clash).build().unwrap_err();
    assert!(error.0.contains("tools/call"), "{error}");
}
