//! The floor for HTTP benchmarks: a minimal hyper + serde_json server that
//! answers a `tools/call` of an echo tool with no MCP machinery at all. Same
//! runtime, same TCP_NODELAY, same JSON library as Toolport; whatever Toolport
//! costs above this is the price of MCP.
//!
//! `cargo run --release -p toolport-http --example echo_floor -- 127.0.0.1:9000`

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

// The same allocator as the `toolport` binary (and as Toolport's echo server).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

async fn echo(request: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = message["params"]["arguments"]["message"].as_str().unwrap_or_default();
    let answer =
        json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": text}]}});
    let mut response = Response::new(Full::new(Bytes::from(serde_json::to_vec(&answer).unwrap_or_default())));
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:9000".into());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    eprintln!("echo floor at http://{}/mcp", listener.local_addr()?);
    loop {
        // Ends on Ctrl-C with a normal exit, so an instrumented (PGO) build
        // writes its profile.
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(echo))
                .await;
        });
    }
}
