//! What the client commands share: where the server is, and how answers
//! are printed (tables for people, JSON for scripts).

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use toolport_client::VersionPolicy;
use toolport_protocol::content::{ContentBlock, ResourceContents};

/// Where the server is and how to talk to it.
#[derive(Debug, Args)]
pub struct Target {
    /// The server's MCP endpoint (Streamable HTTP), for example http://127.0.0.1:8080/mcp.
    #[arg(long, env = "TOOLPORT_SERVER")]
    pub(crate) server: Option<String>,
    /// Print the result as JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Seconds to wait for each answer.
    #[arg(long, default_value_t = 30)]
    pub(crate) timeout: u64,
    /// The protocol version: auto (try 2026-07-28, fall back to the handshake) or a version.
    #[arg(long, default_value = "auto")]
    pub(crate) protocol: VersionPolicy,
    /// A bearer token for HTTP servers that require one.
    #[arg(long, env = "TOOLPORT_BEARER", hide_env_values = true)]
    pub(crate) bearer: Option<String>,
    /// OAuth client credentials (a service calling on its own behalf): the
    /// client id registered at the server's authorization server.
    #[arg(
        long,
        env = "TOOLPORT_CLIENT_ID",
        requires = "client_secret",
        conflicts_with = "bearer"
    )]
    pub(crate) client_id: Option<String>,
    /// The secret of --client-id.
    #[arg(long, env = "TOOLPORT_CLIENT_SECRET", hide_env_values = true, requires = "client_id")]
    pub(crate) client_secret: Option<String>,
    /// PEM certificates of a private CA to trust for https:// (besides the usual roots).
    #[arg(long, env = "TOOLPORT_CA_FILE", value_name = "PATH")]
    pub(crate) ca_file: Option<std::path::PathBuf>,
    /// The server command to run over stdio, after `--` (instead of --server).
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

pub(crate) fn print_json(value: &impl Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value).context("encode the result")?);
    Ok(())
}

/// The first line of a description, at most 80 characters.
pub(crate) fn summary(text: Option<&str>) -> String {
    let line = text.unwrap_or("").lines().next().unwrap_or("").trim();
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(79).collect::<String>())
    } else {
        line.to_owned()
    }
}

pub(crate) fn print_table(headers: &[&str], rows: Vec<Vec<String>>, empty: &str) {
    if rows.is_empty() {
        eprintln!("({empty})");
        return;
    }
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == last {
                    (*c).to_owned()
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        println!("{}", parts.join("  ").trim_end());
    };
    line(headers.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
}

pub(crate) fn print_content(content: &[ContentBlock]) {
    for block in content {
        match block {
            ContentBlock::Text(t) => println!("{}", t.text),
            ContentBlock::Image(i) => println!("[image {}, {} bytes of base64]", i.mime_type, i.data.len()),
            ContentBlock::Audio(a) => println!("[audio {}, {} bytes of base64]", a.mime_type, a.data.len()),
            ContentBlock::ResourceLink(r) => println!("[link {} ({})]", r.uri, r.name),
            ContentBlock::Resource(r) => print_resource(&r.resource),
            other => println!("{}", serde_json::to_string(other).unwrap_or_default()),
        }
    }
}

pub(crate) fn print_resource(contents: &ResourceContents) {
    match (&contents.text, &contents.blob) {
        (Some(text), _) => println!("{text}"),
        (None, Some(blob)) => println!(
            "[{} {}, {} bytes of base64]",
            contents.uri,
            contents.mime_type.as_deref().unwrap_or("application/octet-stream"),
            blob.len()
        ),
        (None, None) => println!("[{} is empty]", contents.uri),
    }
}
