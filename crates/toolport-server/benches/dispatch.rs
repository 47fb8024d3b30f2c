//! decode → dispatch → encode of one `tools/call`, the server's hot path
//! without a transport, beside a floor that only decodes and encodes.
//!
//! `cargo bench -p toolport-server --bench dispatch`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{Frame, Message, Notification, Response, decode, encode};
use toolport_rpc::peer::BoxFuture;
use toolport_rpc::{PeerChannel, RpcError};
use toolport_server::{CallContext, Negotiated, Server, Session, tool};

#[derive(Debug)]
struct NullChannel;

impl PeerChannel for NullChannel {
    fn notify(&self, _: Notification) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }
    fn request(&self, _: String, _: Option<Value>, _: Duration) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>> {
        Box::pin(async { Err(RpcError::Closed) })
    }
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

const MODERN: &[u8] = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello from the mcp peer benchmark"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}"#;
const LEGACY: &[u8] =
    br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello from the mcp peer benchmark"}}}"#;

fn one_call(rt: &tokio::runtime::Runtime, server: &Server, call: &CallContext, line: &[u8]) -> Vec<u8> {
    let Ok(Frame::Single(Message::Request(request))) = decode(line) else {
        unreachable!()
    };
    let id = request.id.clone();
    let result = rt
        .block_on(server.handle(request, call.clone()))
        .expect("the call succeeds");
    encode(&Message::Response(Response { id, result }))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let server = Server::builder("bench", "1")
        .tool(tool("echo").handler(|args: EchoArgs| async move { args.text }))
        .build()
        .unwrap();
    let session = Arc::new(Session::new());
    session.set_negotiated(Negotiated {
        version: toolport_protocol::ProtocolVersion::V2025_11_25,
        client_capabilities: Default::default(),
        client_info: toolport_protocol::capabilities::Implementation::new("bench", "1"),
    });
    let call = CallContext {
        session,
        channel: Arc::new(NullChannel),
        cancel: CancellationToken::new(),
        principal: None,
        session_id: None,
    };
    let mut group = c.benchmark_group("tools_call");
    group.bench_function("floor: decode + encode only", |b| {
        b.iter(|| {
            let Ok(Frame::Single(Message::Request(request))) = decode(black_box(MODERN)) else {
                unreachable!()
            };
            let result = serde_json::value::to_raw_value(&request.params).unwrap();
            black_box(encode(&Message::Response(Response { id: request.id, result })))
        })
    });
    group.bench_function("2026-07-28 stateless", |b| {
        b.iter(|| black_box(one_call(&rt, &server, &call, black_box(MODERN))))
    });
    group.bench_function("2025-11-25 session", |b| {
        b.iter(|| black_box(one_call(&rt, &server, &call, black_box(LEGACY))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
