//! `toolport`: serve MCP, and talk to MCP servers.

use toolport::demo;

mod oauth;
mod scan;

use anyhow::Result;
use clap::{Parser, Subcommand};
use toolport_http::{HttpConfig, HttpServer};
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
        /// Where to listen for HTTP.
        #[arg(long, default_value = "127.0.0.1:8080", env = "TOOLPORT_BIND")]
        bind: std::net::SocketAddr,
        /// The path of the MCP endpoint.
        #[arg(long, default_value = "/mcp")]
        path: String,
        /// Serve handshake-era requests without sessions, so any replica can answer any request.
        #[arg(long)]
        stateless: bool,
        #[command(flatten)]
        oauth: oauth::OAuthArgs,
    },
    /// Scan MCP servers' tool definitions for hidden instructions (exit 1 on findings, 2 on errors).
    Scan(scan::ScanArgs),
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
        Command::Serve {
            stdio,
            bind,
            path,
            stateless,
            oauth,
        } => runtime.block_on(serve(stdio, bind, path, stateless, oauth)),
        Command::Scan(args) => match runtime.block_on(scan::run(args)) {
            Ok(false) => Ok(()),
            Ok(true) => std::process::exit(1),
            Err(e) => {
                eprintln!("toolport scan: {e:#}");
                std::process::exit(2)
            }
        },
    }
}

async fn serve(
    stdio: bool,
    bind: std::net::SocketAddr,
    path: String,
    stateless: bool,
    oauth: oauth::OAuthArgs,
) -> Result<()> {
    let server = demo::server();
    if stdio {
        server.serve_stdio().await;
        return Ok(());
    }
    let config = HttpConfig {
        bind,
        path,
        sessions: !stateless,
        ..HttpConfig::default()
    };
    let path = config.path.clone();
    let mut http = HttpServer::new(server, config);
    if let Some(auth) = oauth.resource_server(format!("http://{bind}{path}")).await? {
        eprintln!(
            "toolport: OAuth 2.1 resource server for {}; metadata at {}",
            auth.config().resource,
            auth.metadata_url()
        );
        http = http.with_authenticator(auth);
    }
    let bound = http.bind().await?;
    let address = bound.local_addr();
    eprintln!("toolport: serving MCP (2024-11-05 … 2026-07-28) at http://{address}{path}");
    eprintln!("  point an MCP client at that URL, for example the Python SDK: mcp.Client(\"http://{address}{path}\")");
    bound.serve(shutdown_signal()).await?;
    eprintln!("toolport: stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}
