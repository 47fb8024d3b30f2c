//! `toolport scan`: lists the tools of one or more MCP servers (over HTTP or
//! a command on stdio, or from a saved `tools/list` result) and prints what
//! the poisoned-description scanner finds. Each server's tools are also checked for references to
//! the other servers' tools. Exit status: 0 clean, 1 findings, 2 errors.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use toolport_auth::scan::{Finding, ScanContext, scan_tools};
use toolport_client::{Client, ClientBuilder, ClientOptions, ServerCommand, StaticToken, VersionPolicy};

/// What to scan and how to print it.
#[derive(Debug, clap::Args)]
pub(crate) struct ScanArgs {
    /// An MCP endpoint (Streamable HTTP), for example http://127.0.0.1:8080/mcp; repeatable.
    #[arg(long = "server", value_name = "URL")]
    servers: Vec<String>,
    /// A JSON file holding a `tools/list` result or an array of tools; repeatable.
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<std::path::PathBuf>,
    /// A bearer token for protected servers.
    #[arg(long, env = "TOOLPORT_BEARER", hide_env_values = true)]
    bearer: Option<String>,
    /// The protocol version: auto (try 2026-07-28, fall back to the handshake) or a version.
    #[arg(long, default_value = "auto")]
    protocol: VersionPolicy,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    /// A server command to run over stdio, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Lists every tool of one server, as the JSON the server sent.
async fn listing(builder: ClientBuilder, protocol: VersionPolicy, source: &str) -> Result<Vec<Value>> {
    let options = ClientOptions {
        version: protocol,
        ..ClientOptions::default()
    };
    let client = builder
        .options(options)
        .connect()
        .await
        .with_context(|| format!("connecting to {source}"))?;
    let tools = client.list_tools().await;
    client.close().await;
    let tools = tools.with_context(|| format!("listing the tools of {source}"))?;
    Ok(tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect())
}

/// Runs the scan; `Ok(true)` when something was found.
pub(crate) async fn run(args: ScanArgs) -> Result<bool> {
    if args.servers.is_empty() && args.files.is_empty() && args.command.is_empty() {
        bail!("nothing to scan: give --server URL, --file PATH or -- COMMAND ARGS...");
    }
    let mut listings: Vec<(String, Vec<Value>)> = Vec::new();
    for url in &args.servers {
        let builder = match &args.bearer {
            Some(token) => Client::http(url).auth(StaticToken::new(token)),
            None => Client::http(url),
        };
        listings.push((url.clone(), listing(builder, args.protocol, url).await?));
    }
    if let Some((program, rest)) = args.command.split_first() {
        let source = args.command.join(" ");
        let builder = Client::stdio(ServerCommand::new(program, rest));
        listings.push((source.clone(), listing(builder, args.protocol, &source).await?));
    }
    for path in &args.files {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let value: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
        let tools = match value {
            Value::Array(tools) => tools,
            Value::Object(mut result) => match result.remove("tools") {
                Some(Value::Array(tools)) => tools,
                _ => bail!("{}: expected an array of tools or a tools/list result", path.display()),
            },
            _ => bail!("{}: expected an array of tools or a tools/list result", path.display()),
        };
        listings.push((path.display().to_string(), tools));
    }
    let mut all: Vec<(String, Finding)> = Vec::new();
    for (i, (source, tools)) in listings.iter().enumerate() {
        let other_tools = listings
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, (_, tools))| tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)))
            .collect();
        let findings = scan_tools(tools, &ScanContext { other_tools });
        all.extend(findings.into_iter().map(|f| (source.clone(), f)));
    }
    if args.json {
        let rows: Vec<Value> = all
            .iter()
            .map(|(source, f)| serde_json::json!({"source": source, "tool": f.tool, "location": f.location, "rule": f.rule.name(), "excerpt": f.excerpt}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for (source, tools) in &listings {
            let found = all.iter().filter(|(s, _)| s == source).count();
            println!("{source}: {} tool(s), {found} finding(s)", tools.len());
        }
        for (source, f) in &all {
            println!(
                "  [{}] {} {} ({source}): {}",
                f.rule.name(),
                f.tool,
                f.location,
                f.excerpt
            );
        }
    }
    Ok(!all.is_empty())
}
