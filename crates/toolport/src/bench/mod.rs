//! `toolport bench`: a load generator for any MCP server, over HTTP or stdio,
//! in either era. It sweeps concurrency, calls one tool with fixed arguments,
//! and reports per step the throughput, a latency histogram and errors, then
//! the knee: the first step where throughput stops growing or errors begin;
//! `--plot` and `--report` draw it (`toolport_console::bench`).

mod driver;
mod report;
mod soak;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use serde_json::Value;

use self::driver::{EraChoice, HttpTarget, StdioTarget, Workload};
pub(crate) use self::report::Step;

/// `toolport bench` options.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// The server's Streamable HTTP URL, for example http://127.0.0.1:8080/mcp.
    #[arg(long, conflicts_with = "command")]
    server: Option<String>,
    /// The tool to call.
    #[arg(long, default_value = "echo")]
    tool: String,
    /// The tool's arguments, as JSON.
    #[arg(long, default_value = r#"{"message":"hello from toolport bench"}"#)]
    args: String,
    /// The protocol era.
    #[arg(long, value_enum, default_value = "stateless")]
    era: EraChoice,
    /// Ask for SSE answers (`Accept: text/event-stream` only).
    #[arg(long)]
    sse: bool,
    /// Concurrency steps, comma-separated.
    #[arg(long, default_value = "1,2,4,8,16,32,64,128,256", value_delimiter = ',')]
    concurrency: Vec<usize>,
    /// Seconds per step.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Seconds of warm-up before the first step.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Write the results as JSON to this file (`-` for standard output).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the results as CSV to this file (`-` for standard output).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write an HTML report (the plot, the table, the data) to this file;
    /// `[ui] bench_report` shows it in the console.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write the plot (throughput and p50/p99 against concurrency, the knee
    /// marked, a latency histogram per step) as SVG to this file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Soak instead of sweeping: run this long (`60s`, `10m`) with --agents x --parallel calls
    /// in flight, every answer checked against its own argument (the tool must say its
    /// `message` back, as `echo` does); fails on a lost or misrouted answer.
    #[arg(long, value_parser = soak::parse_duration, value_name = "DURATION")]
    soak: Option<Duration>,
    /// Soak: agents (each its own connections, and in the handshake era its own session).
    #[arg(long, default_value_t = 100)]
    agents: usize,
    /// Soak: calls each agent keeps in flight.
    #[arg(long, default_value_t = 3)]
    parallel: usize,
    /// Soak: how often throughput, latency and the server's RSS are sampled.
    #[arg(long, value_parser = soak::parse_duration, default_value = "60s", value_name = "DURATION")]
    interval: Duration,
    /// Soak: the server's process id, whose RSS is sampled (a stdio server's is known).
    #[arg(long)]
    pid: Option<u32>,
    /// A stdio server to spawn: `toolport bench -- COMMAND ARGS...`.
    #[arg(last = true)]
    command: Vec<String>,
}

enum Target {
    Http(HttpTarget),
    Stdio(Arc<StdioTarget>),
}

pub(crate) async fn run(args: BenchArgs) -> Result<()> {
    let arguments: Value =
        serde_json::from_str(&args.args).with_context(|| format!("--args {:?} is not JSON", args.args))?;
    if args.concurrency.is_empty() || args.concurrency.contains(&0) {
        bail!("--concurrency needs positive numbers, for example 1,4,16");
    }
    if !(args.duration > 0.0 && args.duration.is_finite()) {
        bail!("--duration must be a positive number of seconds");
    }
    let workload = Workload {
        tool: args.tool.clone(),
        arguments,
        era: args.era,
        sse: args.sse,
    };
    let target = match (&args.server, args.command.is_empty()) {
        (Some(url), true) => Target::Http(HttpTarget::new(url, workload).await?),
        (None, false) => Target::Stdio(Arc::new(StdioTarget::spawn(&args.command, workload).await?)),
        _ => bail!("say where the server is: --server URL, or -- COMMAND ARGS... for stdio"),
    };
    let label = args.server.clone().unwrap_or_else(|| args.command.join(" "));
    if let Some(duration) = args.soak {
        if args.agents == 0 || args.parallel == 0 {
            bail!("--agents and --parallel must be at least 1");
        }
        let plan = soak::SoakPlan {
            duration,
            agents: args.agents,
            parallel: args.parallel,
            interval: args.interval,
            pid: args.pid,
        };
        let report = soak::run(&target, &plan).await?;
        if let Some(path) = &args.json {
            write_out(path, &format!("{report}\n"))?;
        }
        return Ok(());
    }
    // One call first, so a wrong tool or URL fails fast with its reason.
    run_step(&target, 1, Duration::from_secs_f64(args.warmup.max(0.05)))
        .await
        .check_first()?;
    let mut steps = Vec::new();
    for &concurrency in &args.concurrency {
        let step = run_step(&target, concurrency, Duration::from_secs_f64(args.duration)).await;
        report::print_step(&step);
        steps.push(step);
    }
    let knee = report::knee(&steps);
    report::print_summary(&label, &args.tool, &steps, knee);
    let data = report::report(&label, &args.tool, &steps, knee);
    if let Some(path) = &args.json {
        write_out(path, &report::json(&data))?;
    }
    if let Some(path) = &args.report {
        write_out(path, &toolport_console::bench::html(&data))?;
    }
    if let Some(path) = &args.plot {
        write_out(path, &toolport_console::bench::svg(&data))?;
    }
    if let Some(path) = &args.csv {
        write_out(path, &report::csv(&steps))?;
    }
    Ok(())
}

fn write_out(path: &PathBuf, text: &str) -> Result<()> {
    if path.as_os_str() == "-" {
        let _ = std::io::stdout().write_all(text.as_bytes());
        Ok(())
    } else {
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }
}

/// Runs `concurrency` workers for `duration`; each records its latencies.
async fn run_step(target: &Target, concurrency: usize, duration: Duration) -> Step {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        workers.push(match target {
            Target::Http(http) => {
                let http = http.clone();
                tokio::spawn(async move {
                    let mut tally = Tally::new();
                    let mut sender = match http.connect().await {
                        Ok(sender) => sender,
                        Err(e) => {
                            tally.fail(e);
                            return tally;
                        }
                    };
                    while Instant::now() < deadline {
                        let t = Instant::now();
                        match http.call(&mut sender).await {
                            Ok(()) => tally.ok(t.elapsed()),
                            Err(e) => {
                                tally.fail(e);
                                // A broken connection is replaced, not retried forever.
                                match http.connect().await {
                                    Ok(s) => sender = s,
                                    Err(_) => break,
                                }
                            }
                        }
                    }
                    tally
                })
            }
            Target::Stdio(stdio) => {
                let stdio = stdio.clone();
                tokio::spawn(async move {
                    let mut tally = Tally::new();
                    while Instant::now() < deadline {
                        let t = Instant::now();
                        match stdio.call().await {
                            Ok(()) => tally.ok(t.elapsed()),
                            Err(e) => tally.fail(e),
                        }
                    }
                    tally
                })
            }
        });
    }
    let mut total = Tally::new();
    for worker in workers {
        if let Ok(tally) = worker.await {
            total.merge(tally);
        }
    }
    Step::new(
        concurrency,
        started.elapsed(),
        total.latencies,
        total.errors,
        total.first_error,
    )
}

/// One worker's latencies and errors.
struct Tally {
    latencies: Histogram<u64>,
    errors: u64,
    first_error: Option<String>,
}

impl Tally {
    fn new() -> Self {
        // Microseconds, 1 µs to 60 s, 3 significant digits.
        Tally {
            latencies: Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds"),
            errors: 0,
            first_error: None,
        }
    }

    fn ok(&mut self, latency: Duration) {
        let _ = self.latencies.record((latency.as_micros() as u64).clamp(1, 60_000_000));
    }

    fn fail(&mut self, error: anyhow::Error) {
        self.errors += 1;
        self.first_error.get_or_insert_with(|| format!("{error:#}"));
    }

    fn merge(&mut self, other: Tally) {
        let _ = self.latencies.add(&other.latencies);
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}
