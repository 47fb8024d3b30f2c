//! `toolport pins list | approve NAME`: the gateway's pinned upstream tool
//! definitions (docs/gateway.md). Works on the pins file; a running gateway
//! sees the file change and serves what was approved.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use toolport_auth::pinning::{ToolPins, TracingAudit};

/// `toolport pins` options.
#[derive(clap::Args)]
pub(crate) struct PinsArgs {
    /// The gateway's configuration file (its `[gateway] pins` names the pins file).
    #[arg(long, global = true, conflicts_with = "file")]
    config: Option<PathBuf>,
    /// The pins file itself.
    #[arg(long, global = true)]
    file: Option<PathBuf>,
    #[command(subcommand)]
    action: PinsAction,
}

#[derive(clap::Subcommand)]
enum PinsAction {
    /// Lists every upstream tool: approved, or waiting (new or changed).
    List,
    /// Approves the definition now on offer: `UPSTREAM__TOOL` (the served
    /// name), or `UPSTREAM` for all of its tools.
    Approve {
        /// The tool as served (`files__read_file`), or an upstream's name.
        name: String,
    },
}

fn pins_file(args: &PinsArgs) -> Result<(PathBuf, String), String> {
    if let Some(file) = &args.file {
        return Ok((file.clone(), "__".into()));
    }
    let config = toolport::config::Config::load(args.config.as_deref(), std::env::vars()).map_err(|e| e.to_string())?;
    let separator = config.gateway.separator.clone();
    config
        .gateway
        .pins
        .map(|p| (p, separator))
        .ok_or_else(|| "no pins file: set [gateway] pins in the configuration, or pass --file".to_owned())
}

pub(crate) fn run(args: PinsArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn execute(args: &PinsArgs) -> Result<(), String> {
    let (path, separator) = pins_file(args)?;
    let pins = ToolPins::load(&path, Arc::new(TracingAudit)).map_err(|e| e.to_string())?;
    match &args.action {
        PinsAction::List => list(&pins, &separator, &path),
        PinsAction::Approve { name } => approve(&pins, &separator, &path, name),
    }
}

fn list(pins: &ToolPins, separator: &str, path: &Path) -> Result<(), String> {
    let store = pins.snapshot();
    if store.servers.values().all(|t| t.is_empty()) {
        eprintln!("(no pinned tools in {})", path.display());
        return Ok(());
    }
    println!("{:<48} STATE", "TOOL");
    for (upstream, tools) in &store.servers {
        for (tool, pin) in tools {
            let state = match &pin.approved {
                _ if pin.callable() => "approved",
                None => "new: waiting for approval",
                Some(_) => "changed: quarantined until approved",
            };
            println!("{:<48} {state}", format!("{upstream}{separator}{tool}"));
        }
    }
    Ok(())
}

fn approve(pins: &ToolPins, separator: &str, path: &Path, name: &str) -> Result<(), String> {
    let store = pins.snapshot();
    let approved: Vec<String> = if store.servers.contains_key(name) {
        pins.approve_all(name);
        store.servers[name]
            .keys()
            .map(|t| format!("{name}{separator}{t}"))
            .collect()
    } else {
        let (upstream, tool) = name
            .split_once(separator)
            .ok_or_else(|| format!("{name:?} is neither an upstream nor UPSTREAM{separator}TOOL"))?;
        if !pins.approve(upstream, tool) {
            return Err(format!(
                "{name:?} is not in {} (see `toolport pins list`)",
                path.display()
            ));
        }
        vec![name.to_owned()]
    };
    pins.save(path).map_err(|e| e.to_string())?;
    for name in approved {
        println!("approved {name}");
    }
    Ok(())
}
