//! What a bare `toolport serve` offers: the filesystem and SQL packs on
//! their embedded defaults (the current directory read-only, the demo SQLite
//! database), or as a JSON settings file says.

use std::path::Path;

use anyhow::{Context, Result};
use toolport_packs::{Packs, PacksConfig, PacksRuntime};
use toolport_server::{Server, ServerBuilder};

/// Reads the packs' settings: the file's, or the defaults.
pub fn config(file: Option<&Path>) -> Result<PacksConfig> {
    let Some(file) = file else {
        return Ok(PacksConfig::default());
    };
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid packs settings", file.display()))
}

/// The server builder the packs go into: Toolport's name and the model's instructions.
pub fn builder() -> ServerBuilder {
    Server::builder("toolport", env!("CARGO_PKG_VERSION"))
        .title("Toolport packs")
        .instructions(
            "Files: list_roots shows the directories you may read; paths are relative to a root. \
         SQL: list_tables and describe_table show the schema; query runs one read-only statement.",
        )
}

/// The packs server, what must live beside it, and lines saying what it serves.
pub async fn server(file: Option<&Path>) -> Result<(Server, PacksRuntime, Vec<String>)> {
    let packs = Packs::open(&config(file)?).await?;
    let server = packs.install(builder()).build()?;
    let running = packs.start(&server)?;
    Ok((server, running, packs.summary()))
}
