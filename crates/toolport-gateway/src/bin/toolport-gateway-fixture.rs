//! A small stdio MCP server the gateway's own tests put behind the gateway
//! when what they show is the gateway's (supervision, pools, load), not
//! interoperability, which the tests against the official servers show.
//!
//! Tools: `echo {text}`, `count` (a counter of this process), `pid`,
//! `sleep {ms}` (progress every 10 ms when asked), `ask` (elicits a name),
//! `log {text}` (a log message "fixture says TEXT"), `exit {code}`. With `FIXTURE_EXIT_AT_START=N` it exits with N at once;
//! with `FIXTURE_RESOURCE=URI` it offers a resource at that URI.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolport_protocol::content::ResourceContents;
use toolport_protocol::elicitation::ElicitRequestParams;
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::resources::Resource;
use toolport_protocol::tools::{CallToolResult, Tool};
use toolport_server::{ResourceEntry, Server, ToolError, tool};

fn schema(properties: Value) -> Map<String, Value> {
    match json!({ "type": "object", "properties": properties }) {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn definition(name: &str, properties: Value) -> Tool {
    Tool::new(name, schema(properties))
}

static COUNT: AtomicU64 = AtomicU64::new(0);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Some(code) = std::env::var("FIXTURE_EXIT_AT_START").ok().and_then(|c| c.parse().ok()) {
        eprintln!("fixture: exiting with {code} at start, as asked");
        std::process::exit(code);
    }
    let mut builder = Server::builder("toolport-gateway-fixture", "1.0.0");
    if let Ok(uri) = std::env::var("FIXTURE_RESOURCE") {
        builder = builder.resource(ResourceEntry::new(
            Resource::new(uri, "info"),
            |_cx, request| async move { vec![ResourceContents::text(request.uri, Some("text/plain"), "fixture")] },
        ));
    }
    let server = builder
        .tool(tool("echo").raw(
            definition("echo", json!({"text": {"type": "string"}})),
            |_cx, args: Value| async move { Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default())) },
        ))
        .tool(tool("count").raw(definition("count", json!({})), |_cx, _| async move {
            Ok(CallToolResult::text(
                (COUNT.fetch_add(1, Ordering::SeqCst) + 1).to_string(),
            ))
        }))
        .tool(tool("pid").raw(definition("pid", json!({})), |_cx, _| async move {
            Ok(CallToolResult::text(std::process::id().to_string()))
        }))
        .tool(tool("sleep").raw(
            definition("sleep", json!({"ms": {"type": "integer"}})),
            |cx, args: Value| async move {
                let ms = args["ms"].as_u64().unwrap_or(100);
                let steps = (ms / 10).max(1);
                for step in 0..steps {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                        _ = cx.cancelled() => {
                            eprintln!("fixture: sleep cancelled");
                            return Err(ToolError::Cancelled);
                        }
                    }
                    cx.progress((step + 1) as f64, Some(steps as f64), None).await;
                }
                Ok(CallToolResult::text(format!("slept {ms} ms")))
            },
        ))
        .tool(tool("ask").raw(definition("ask", json!({})), |cx, _| async move {
            let form = schema(json!({"name": {"type": "string", "default": "Ada"}}));
            let answer = cx.elicit("name", ElicitRequestParams::form("Your name?", form)).await?;
            let name = answer
                .content
                .and_then(|c| c.get("name").cloned())
                .unwrap_or(Value::Null);
            Ok(CallToolResult::text(format!(
                "hello {}",
                name.as_str().unwrap_or("nobody")
            )))
        }))
        .tool(tool("log").raw(
            definition("log", json!({"text": {"type": "string"}})),
            |cx, args: Value| async move {
                let said = format!("fixture says {}", args["text"].as_str().unwrap_or_default());
                cx.log(LoggingLevel::Info, Some("fixture"), said).await;
                Ok(CallToolResult::text("logged"))
            },
        ))
        .tool(tool("exit").raw(
            definition("exit", json!({"code": {"type": "integer"}})),
            |_cx, args: Value| async move {
                let code = args["code"].as_i64().unwrap_or(1) as i32;
                eprintln!("fixture: exiting with {code}, as asked");
                std::process::exit(code)
            },
        ))
        .build()
        .expect("valid definitions");
    server.serve_stdio().await;
}
