//! The stdio benchmark driver: spawns a server, does the MCP handshake
//! (2025-11-25), then makes sequential `tools/call`s of its `echo` tool (write
//! one request line, wait for its answer, repeat) and prints calls per second.
//! One call in flight at a time, so the figure is the server's round trip,
//! not its concurrency. The driver is blocking `std::io` on purpose: the
//! client's own overhead is in every figure, so it is kept as small as the
//! floor's.
//!
//! `stdio_calls [--calls N] [--warmup N] -- COMMAND ARGS...`
//!
//! The last line of output is `calls_per_second=<number>` for scripts.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use serde_json::Value;

const USAGE: &str = "usage: stdio_calls [--calls N] [--warmup N] -- COMMAND ARGS...";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stdio_calls: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut calls: u64 = 10_000;
    let mut warmup: u64 = 1_000;
    let mut args = std::env::args().skip(1);
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--calls" => calls = number(args.next())?,
            "--warmup" => warmup = number(args.next())?,
            "--" => command.extend(args.by_ref()),
            _ => return Err(USAGE.into()),
        }
    }
    let (program, rest) = command.split_first().ok_or(USAGE)?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let mut server = Server {
        input: BufWriter::new(child.stdin.take().expect("stdin is piped")),
        output: BufReader::new(child.stdout.take().expect("stdout is piped")),
        line: String::new(),
    };
    let outcome = server.bench(calls, warmup);
    drop(server); // closes the server's stdin, so it exits
    let _ = child.wait();
    let seconds = outcome?;
    let rate = calls as f64 / seconds;
    println!("{calls} sequential calls in {seconds:.3} s: {rate:.0} calls/s");
    println!("calls_per_second={rate:.0}");
    Ok(())
}

fn number(arg: Option<String>) -> Result<u64, String> {
    arg.and_then(|a| a.parse().ok()).ok_or_else(|| USAGE.to_owned())
}

/// The spawned server's pipes.
struct Server {
    input: BufWriter<std::process::ChildStdin>,
    output: BufReader<std::process::ChildStdout>,
    line: String,
}

impl Server {
    /// The handshake, `warmup` untimed calls, then `calls` timed ones; the
    /// seconds those took.
    fn bench(&mut self, calls: u64, warmup: u64) -> Result<f64, String> {
        self.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-calls","version":"1"}}}"#,
        )?;
        let answer = self.receive()?;
        if answer["id"] != 0 || answer.get("result").is_none() {
            return Err(format!("initialize failed: {answer}"));
        }
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        for id in 1..=warmup {
            self.call(id)?;
        }
        let started = Instant::now();
        for id in warmup + 1..=warmup + calls {
            self.call(id)?;
        }
        Ok(started.elapsed().as_secs_f64())
    }

    fn call(&mut self, id: u64) -> Result<(), String> {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello from stdio_calls"}}}}}}"#
        );
        self.send(&request)?;
        let answer = self.receive()?;
        if answer["id"] != id {
            return Err(format!("expected the answer to {id}, got {answer}"));
        }
        if answer["result"]["content"][0]["text"] != "hello from stdio_calls" {
            return Err(format!("not the echo: {answer}"));
        }
        Ok(())
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let sent = self
            .input
            .write_all(line.as_bytes())
            .and_then(|()| self.input.write_all(b"\n"))
            .and_then(|()| self.input.flush());
        sent.map_err(|e| format!("the server's stdin: {e}"))
    }

    fn receive(&mut self) -> Result<Value, String> {
        self.line.clear();
        match self.output.read_line(&mut self.line) {
            Ok(0) => Err("the server closed its stdout".into()),
            Ok(_) => serde_json::from_str(&self.line).map_err(|e| format!("not JSON ({e}): {}", self.line)),
            Err(e) => Err(format!("the server's stdout: {e}")),
        }
    }
}
