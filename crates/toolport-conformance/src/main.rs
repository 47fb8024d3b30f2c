//! The conformance fixture served over Streamable HTTP, for the official
//! MCP conformance suite:
//!
//! ```sh
//! toolport-conformance 127.0.0.1:3000 [DATA_DIR] &
//! conformance server --url http://127.0.0.1:3000/mcp --suite all
//! ```

use std::sync::Arc;

use toolport_conformance::{
    FixtureOptions, WATCHED_RESOURCE_INTERVAL, fixture_server_with, spawn_watched_resource_updates,
};
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::TaskEngine;
use toolport_tasks::SqliteStore;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3000".into());
    let bind = bind
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{bind:?}: {e}")))?;
    // Tasks live in a SQLite file in the directory given second, or in one
    // of this run's own, removed at the end.
    let given = std::env::args().nth(2).map(std::path::PathBuf::from);
    let data_dir = given
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("toolport-conformance-{}", std::process::id())));
    std::fs::create_dir_all(&data_dir)?;
    let store = SqliteStore::open_in(&data_dir)
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let server = fixture_server_with(FixtureOptions {
        tasks: Some(TaskEngine::new(Arc::new(store))),
        ..FixtureOptions::default()
    });
    let maintenance = {
        let server = server.clone();
        tokio::spawn(async move { server.maintain_tasks(std::time::Duration::from_secs(10)).await })
    };
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
    maintenance.abort();
    if given.is_none() {
        let _ = std::fs::remove_dir_all(&data_dir);
    }
    Ok(())
}
