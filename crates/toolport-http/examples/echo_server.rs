//! Toolport serving one `echo` tool over Streamable HTTP, for benchmarks
//! against the floor and against other SDKs' servers (same tool, same
//! arguments).
//!
//! `cargo run --release -p toolport-http --example echo_server -- 127.0.0.1:9001`

use schemars::JsonSchema;
use serde::Deserialize;
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::{Server, tool};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:9001".into());
    let server = Server::builder("echo", "1.0.0")
        .tool(
            tool("echo")
                .description("Returns the text")
                .handler(|args: EchoArgs| async move { args.text }),
        )
        .build()
        .expect("valid definitions");
    let config = HttpConfig {
        bind: bind.parse().expect("an address like 127.0.0.1:9001"),
        ..HttpConfig::default()
    };
    let bound = HttpServer::new(server, config).bind().await?;
    eprintln!("toolport echo at http://{}/mcp", bound.local_addr());
    bound
        .serve(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
