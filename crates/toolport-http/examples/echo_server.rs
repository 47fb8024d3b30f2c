//! Toolport serving one `echo` tool over Streamable HTTP, for benchmarks
//! against the floor and against other SDKs' servers (same tool, same
//! arguments).
//!
//! `cargo run --release -p toolport-http --example echo_server -- 127.0.0.1:9001 [on|off] [stateless]`
//!
//! With `on`, every policy layer is active, as a production server would run:
//! concurrency gates (global and per principal), rate limits (global per
//! principal and per tool), idempotency keys, a deadline, the audit stream (to
//! a temporary file) and Prometheus metrics. Without it, none is (the
//! baseline for the layers' cost). With `stateless`, handshake-era clients
//! are served without sessions, like the other SDKs' stateless modes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::audit::{AuditKey, AuditLog, AuditOptions};
use toolport_server::policy::{PolicyConfig, RateConfig, ToolPolicyConfig};
use toolport_server::{Server, tool};

// The same allocator as the `toolport` binary (and as the floor).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:9001".into());
    let layers_on = std::env::args().nth(2).as_deref() == Some("on");
    let mut builder = Server::builder("echo", "1.0.0").tool(
        tool("echo")
            .description("Returns the message")
            .handler(|args: EchoArgs| async move { args.message }),
    );
    // ECHO_AUDIT=off keeps every layer but the audit stream, to tell their costs apart.
    let audit = std::env::var("ECHO_AUDIT").as_deref() != Ok("off");
    builder = if layers_on {
        let generous = RateConfig {
            per_second: 1e6,
            burst: 100_000,
        };
        let audit_path = std::env::temp_dir().join(format!("toolport-echo-audit-{}.jsonl", std::process::id()));
        let builder = builder.policies(PolicyConfig {
            max_concurrent: 4096,
            max_concurrent_per_principal: 4096,
            deadline_ms: 30_000,
            rate_per_principal: Some(generous.clone()),
            tools: BTreeMap::from([(
                "echo".to_owned(),
                ToolPolicyConfig {
                    max_concurrent: Some(4096),
                    deadline_ms: Some(30_000),
                    rate: Some(generous),
                },
            )]),
            ..PolicyConfig::default()
        });
        if audit {
            let options = AuditOptions {
                redact: vec!["password".into()],
                ..AuditOptions::default()
            };
            builder.audit(AuditLog::open(
                audit_path.to_str().expect("a UTF-8 temp dir"),
                AuditKey::generate(),
                options,
            )?)
        } else {
            builder
        }
    } else {
        builder.policies(PolicyConfig::none())
    };
    let server = builder.build().expect("valid definitions");
    let sessions = std::env::args().nth(3).as_deref() != Some("stateless");
    let config = HttpConfig {
        bind: bind.parse().expect("an address like 127.0.0.1:9001"),
        sessions,
        ..HttpConfig::default()
    };
    let mut http = HttpServer::new(server, config);
    if layers_on {
        http = http.prometheus().expect("a metrics recorder");
    }
    let bound = http.bind().await?;
    eprintln!(
        "toolport echo at http://{}/mcp (policy layers {})",
        bound.local_addr(),
        if layers_on { "on" } else { "off" }
    );
    bound
        .serve(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
