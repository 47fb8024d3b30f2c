//! The floor for stdio benchmarks: a blocking `std::io` line-echo server that
//! answers an echo tool's `tools/call` with a well-formed `CallToolResult`
//! and no MCP machinery at all. It reads one line, parses it with serde_json,
//! writes the answer for the same id and flushes: the least a correct stdio
//! server must do. Whatever Toolport costs above this is the price of MCP.
//!
//! `cargo build --release -p toolport --example stdio_floor`, then drive it
//! with the `stdio_calls` example (see benches/stdio/run.sh).

use std::io::{self, BufRead, Write};

use serde_json::{Value, json};

// The same allocator as the `toolport` binary.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut output = io::BufWriter::new(io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // Notifications (no id) need no answer.
        let Some(id) = message.get("id") else {
            continue;
        };
        let answer = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stdio-floor", "version": "1"}}}),
            Some("tools/call") => {
                let text = message["params"]["arguments"]["message"].as_str().unwrap_or_default();
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
            }
            _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
        };
        serde_json::to_writer(&mut output, &answer)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}
