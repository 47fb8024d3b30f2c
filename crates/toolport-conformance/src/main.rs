//! The conformance fixture served over Streamable HTTP, for the official
//! MCP conformance suite:
//!
//! ```sh
//! toolport-conformance 127.0.0.1:3000 &
//! conformance server --url http://127.0.0.1:3000/mcp --suite all
//! ```

use toolport_conformance::{WATCHED_RESOURCE_INTERVAL, fixture_server, spawn_watched_resource_updates};
use toolport_http::{HttpConfig, HttpServer};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3000".into());
    let bind = bind
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{bind:?}: {e}")))?;
    let server = fixture_server();
    let updates = spawn_watched_resource_updates(server.clone(), WATCHED_RESOURCE_INTERVAL);
    let bound = HttpServer::new(
        server,
        HttpConfig {
            bind,
            ..HttpConfig::default()
        },
    )
    .bind()
    .await?;
    eprintln!("conformance fixture at http://{}/mcp", bound.local_addr());
    bound
        .serve(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    updates.abort();
    Ok(())
}
