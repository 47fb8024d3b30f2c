//! Calls a server the way a 2026-07-28 client does, in process: every
//! request stands alone, with its version and capabilities in `_meta`.

#![allow(dead_code, unreachable_pub)]

pub mod sql;

use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{Notification, Request};
use toolport_rpc::peer::BoxFuture;
use toolport_rpc::{PeerChannel, RpcError};
use toolport_server::{CallContext, Server, Session};

/// Drops notifications; refuses requests (2026-07-28 has none to the client).
#[derive(Debug)]
struct Nowhere;

impl PeerChannel for Nowhere {
    fn notify(&self, _: Notification) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }
    fn request(&self, _: String, _: Option<Value>, _: Duration) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>> {
        Box::pin(async { Err(RpcError::Closed) })
    }
}

/// A 2026-07-28 client of `server` with the given capabilities.
pub struct Client {
    pub server: Server,
    pub capabilities: Value,
}

impl Client {
    pub fn new(server: Server) -> Client {
        Client {
            server,
            capabilities: json!({}),
        }
    }

    /// Sends one request; the result, or the JSON-RPC error object.
    pub async fn request(&self, method: &str, mut params: Value) -> Result<Value, Value> {
        let meta = params
            .as_object_mut()
            .expect("params are an object")
            .entry("_meta")
            .or_insert_with(|| json!({}));
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        meta["io.modelcontextprotocol/clientCapabilities"] = self.capabilities.clone();
        let call = CallContext {
            session: std::sync::Arc::new(Session::new()),
            channel: std::sync::Arc::new(Nowhere),
            cancel: CancellationToken::new(),
            principal: None,
            session_id: None,
        };
        let request = Request::new(1, method, Some(params));
        match self.server.handle(request, call).await {
            Ok(raw) => Ok(serde_json::from_str(raw.get()).unwrap()),
            Err(error) => Err(serde_json::to_value(error).unwrap()),
        }
    }

    /// Calls a tool; its result (which may have `isError`).
    pub async fn tool(&self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
            .unwrap_or_else(|e| panic!("tools/call {name} failed at the protocol level: {e}"))
    }

    /// Calls a tool that must succeed; its structured content.
    pub async fn ok(&self, name: &str, arguments: Value) -> Value {
        let result = self.tool(name, arguments.clone()).await;
        assert_ne!(result["isError"], true, "{name} {arguments}: {result}");
        result["structuredContent"].clone()
    }

    /// Calls a tool that must fail; its message.
    pub async fn refused(&self, name: &str, arguments: Value) -> String {
        let result = self.tool(name, arguments.clone()).await;
        assert_eq!(result["isError"], true, "{name} {arguments} should fail: {result}");
        result["content"][0]["text"].as_str().unwrap().to_owned()
    }
}
