//! `toolport`: serve MCP, and talk to MCP servers.

use toolport::demo;

use anyhow::Result;
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "toolport",
    version,
    about = "A production runtime for the Model Context Protocol"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the demo tools, resources and prompts.
    Serve {
        /// Serve on stdin/stdout (one JSON-RPC message per line) instead of HTTP.
        #[arg(long)]
        stdio: bool,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    // Logs go to stderr: on stdio, stdout carries nothing but MCP messages.
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_env("TOOLPORT_LOG").unwrap_or_else(|_| EnvFilter::new("warn")))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        Command::Serve { stdio } => runtime.block_on(serve(stdio)),
    }
}

async fn serve(stdio: bool) -> Result<()> {
    let server = demo::server();
    if stdio {
        server.serve_stdio().await;
        return Ok(());
    }
    anyhow::bail!("the HTTP transport is not built yet; run `toolport serve --stdio`")
}
