//! The client side of stdio: spawn `toolport serve --stdio` as a child and
//! talk to it through the Peer engine, as an MCP client or gateway does.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;
use toolport_rpc::framing::DEFAULT_MAX_LINE;
use toolport_rpc::peer::{PeerOptions, RequestContext, Service};
use toolport_rpc::stdio::spawn_child;
use toolport_rpc::{RpcError, connect};

/// A client answers no requests in this test.
struct NoHandler;

impl Service for NoHandler {
    async fn call(
        &self,
        request: toolport_protocol::Request,
        _cx: RequestContext,
    ) -> Result<Box<serde_json::value::RawValue>, toolport_protocol::ErrorObject> {
        Err(toolport_protocol::ErrorObject::method_not_found(&request.method))
    }
}

#[tokio::test]
async fn a_spawned_child_answers_concurrent_requests_each_to_its_caller() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolport"));
    command.args(["serve", "--demo", "--stdio"]);
    let (transport, mut child) = spawn_child(command, DEFAULT_MAX_LINE).expect("spawn the server");
    let (peer, connection) = connect(
        transport,
        PeerOptions {
            request_timeout: Duration::from_secs(10),
            ..PeerOptions::default()
        },
    );
    let serving = tokio::spawn(connection.serve(NoHandler));

    let init = peer
        .request("initialize", Some(json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "child-test", "version": "1"}})))
        .await
        .unwrap();
    let init: Value = serde_json::from_str(init.get()).unwrap();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    peer.notify("notifications/initialized", None).await.unwrap();

    // 50 calls in flight at once, each with its own message: every answer
    // must reach the caller that asked.
    let calls = (0..50).map(|i| {
        let peer = peer.clone();
        tokio::spawn(async move {
            let params = json!({"name": "echo", "arguments": {"message": format!("call {i}")}});
            let result = peer.request("tools/call", Some(params)).await.unwrap();
            let result: Value = serde_json::from_str(result.get()).unwrap();
            (i, result["content"][0]["text"].as_str().unwrap().to_owned())
        })
    });
    for call in calls {
        let (i, text) = call.await.unwrap();
        assert_eq!(text, format!("call {i}"));
    }

    // A JSON-RPC error comes back as a remote error.
    let err = peer.request("no/such/method", None).await.unwrap_err();
    assert!(matches!(err, RpcError::Remote(e) if e.code == -32601));

    // Killing the child fails what is pending and ends the connection.
    let pending = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request(
                "tools/call",
                Some(json!({"name": "long_task", "arguments": {"steps": 1000}})),
            )
            .await
        }
    });
    while peer.pending_requests() == 0 {
        tokio::task::yield_now().await;
    }
    child.kill().await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(10), pending)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.unwrap_err(), RpcError::Closed);
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .unwrap()
        .unwrap();
}
