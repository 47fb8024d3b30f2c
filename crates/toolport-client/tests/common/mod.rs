//! An in-process Toolport server over Streamable HTTP for the client tests:
//! `echo` (read-only), `slow` (sleeps; counts runs that were cancelled),
//! `ask` (asks the user), `steps` (reports progress).

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolport_protocol::content::ResourceContents;
use toolport_protocol::elicitation::{ElicitAction, ElicitRequestParams};
use toolport_protocol::resources::Resource;
use toolport_server::{RequestContext, ResourceEntry, Server, ToolError, tool};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to take.
    ms: u64,
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
struct StepsArgs {
    /// How many progress steps.
    steps: u32,
}

/// What the `slow` tool saw: runs started, runs dropped before they
/// finished, and the most that ran at once.
#[derive(Debug, Default)]
pub struct Counters {
    pub cancelled: AtomicUsize,
    pub started: AtomicUsize,
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
}

struct CancelGuard(Arc<Counters>, bool);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        if !self.1 {
            self.0.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

pub fn server(counters: Arc<Counters>) -> Server {
    Server::builder("client-test", "1.0.0")
        .tool(
            tool("echo")
                .description("Returns the message.")
                .read_only()
                .handler(|args: EchoArgs| async move { args.message }),
        )
        .tool(tool("slow").description("Sleeps ms milliseconds.").handler(
            move |_cx: RequestContext, args: SlowArgs| {
                let counters = counters.clone();
                async move {
                    counters.started.fetch_add(1, Ordering::SeqCst);
                    let now = counters.running.fetch_add(1, Ordering::SeqCst) + 1;
                    counters.max_running.fetch_max(now, Ordering::SeqCst);
                    let mut guard = CancelGuard(counters, false);
                    tokio::time::sleep(Duration::from_millis(args.ms)).await;
                    guard.1 = true;
                    format!("slept {}", args.ms)
                }
            },
        ))
        .tool(tool("ask").description("Asks the user for a name.").handler(
            |cx: RequestContext, _args: NoArgs| async move {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}}});
                let Value::Object(schema) = schema else { unreachable!() };
                let answer = cx
                    .elicit("name", ElicitRequestParams::form("Your name?", schema))
                    .await?;
                match (answer.action, answer.content) {
                    (ElicitAction::Accept, Some(content)) => Ok::<_, ToolError>(format!(
                        "hello {}",
                        content.get("name").and_then(Value::as_str).unwrap_or("?")
                    )),
                    _ => Ok("declined".to_owned()),
                }
            },
        ))
        .tool(tool("steps").description("Reports progress.").handler(
            |cx: RequestContext, args: StepsArgs| async move {
                for i in 1..=args.steps {
                    cx.progress(f64::from(i), Some(f64::from(args.steps)), None).await;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                format!("{} steps", args.steps)
            },
        ))
        .resource(ResourceEntry::new(
            Resource::new("test://watched", "watched"),
            |_cx, req| async move { ResourceContents::text(req.uri, Some("text/plain"), "v1") },
        ))
        .build()
        .expect("valid test server")
}

/// A tool added at run time (to trigger `list_changed`).
pub fn extra_tool() -> toolport_server::ToolEntry {
    tool("added")
        .description("Added at run time.")
        .handler(|_args: NoArgs| async { "added" })
}

/// A running server on its own runtime and thread, so stopping it is like
/// killing a process: every task and socket goes at once, nothing is drained.
pub struct Running {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    pub server: Server,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    pub async fn start(bind: SocketAddr) -> Running {
        let counters = Arc::new(Counters::default());
        let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let server = server(counters.clone());
        let handle = server.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let config = toolport_http::HttpConfig {
                    bind,
                    ..Default::default()
                };
                let bound = toolport_http::HttpServer::new(server, config)
                    .bind()
                    .await
                    .expect("bind");
                let _ = addr_tx.send(bound.local_addr());
                tokio::spawn(bound.serve(std::future::pending()));
                let _ = killed.await;
            });
            // Dropping every task closes the listener and all connections at once.
            runtime.shutdown_timeout(Duration::from_secs(5));
        });
        let addr = addr_rx.await.expect("the server thread binds");
        Running {
            addr,
            counters,
            server: handle,
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Kills the server and waits until its thread is gone.
    pub async fn stop(mut self) {
        self.kill_now();
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }

    fn kill_now(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Polls `condition` every 10 ms until it holds or `limit` passes.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}
