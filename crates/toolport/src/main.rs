//! `toolport`: serve MCP, and talk to MCP servers.

mod audit;
mod bench;
mod console;
mod gateway;
mod oauth;
mod pins;
mod scan;
mod serve;
mod signal;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

// The audit writer and the response paths free memory other threads
// allocated; mimalloc does that without the arena locks of the system
// allocator (measured in docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Serve the demo tools, resources and prompts (HTTP on 127.0.0.1:8080 by default).
    Serve(serve::ServeArgs),
    /// Load-test any MCP server: a concurrency sweep of calls to one tool.
    Bench(bench::BenchArgs),
    /// Work with configuration files.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Work with audit streams.
    Audit {
        #[command(subcommand)]
        action: AuditAction,
    },
    /// Scan MCP servers' tool definitions for hidden instructions (exit 1 on findings, 2 on errors).
    Scan(scan::ScanArgs),
    /// The gateway's pinned upstream tool definitions: list them, approve one.
    Pins(pins::PinsArgs),
    /// Talk to any A2A 1.0 agent: its card, send a message, get, list and cancel tasks.
    A2a {
        #[command(subcommand)]
        action: toolport::a2a_cli::A2aAction,
    },
    #[command(flatten)]
    Client(toolport::client_cli::ClientCommand),
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Checks a configuration file (with the environment applied) and prints the result.
    Check {
        /// The TOML file.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum AuditAction {
    /// Checks an audit file's signed chain; names the record where an edit, a removal, a
    /// reordering, a recomputation without the key or a cut of the tail starts.
    Verify {
        /// The audit file (JSON lines).
        file: PathBuf,
        /// The key the file was written with; default: TOOLPORT_AUDIT_KEY_FILE, else
        /// audit.key in the data directory (where `toolport serve` keeps it).
        #[arg(long, value_name = "PATH")]
        key_file: Option<PathBuf>,
    },
}

/// Runs a command's future on a fresh runtime; prints its error, if any.
fn block_on(label: &str, work: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{label}: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{label}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => block_on("toolport bench", bench::run(args)),
        Command::Pins(args) => pins::run(args),
        Command::A2a { action } => block_on("toolport a2a", action.run()),
        Command::Scan(args) => {
            let mut findings = false;
            let outcome = block_on("toolport scan", async {
                findings = scan::run(args).await?;
                Ok(())
            });
            match (outcome == ExitCode::SUCCESS, findings) {
                (true, false) => ExitCode::SUCCESS,
                (true, true) => ExitCode::from(1),
                (false, _) => ExitCode::from(2),
            }
        }
        Command::Client(command) => {
            // Logs go to stderr, quietly unless TOOLPORT_LOG asks for more.
            let filter = EnvFilter::try_from_env("TOOLPORT_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
            tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .init();
            block_on("error", command.run())
        }
        Command::Config {
            action: ConfigAction::Check { file },
        } => {
            match toolport::config::Config::load(Some(&file), std::env::vars()) {
                Ok(config) => {
                    // A closed pipe (`| head`) is not an error worth a panic.
                    let effective = toml::to_string(&config).unwrap_or_default();
                    let _ = writeln!(std::io::stdout(), "{}: ok\n{effective}", file.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("toolport: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Audit {
            action: AuditAction::Verify { file, key_file },
        } => audit::verify(&file, key_file),
    }
}
