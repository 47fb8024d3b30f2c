//! The cost of a task per call: creating one (a task-augmented `tools/call`,
//! 2026-07-28, answered once the record is durable) and reading one
//! (`tasks/get`), beside a plain `tools/call` of the same tool in the same
//! run, on SQLite (a file in a temporary directory, `synchronous = FULL`)
//! and, when `TOOLPORT_BENCH_TASKS_POSTGRES_URL` is set, PostgreSQL.
//!
//! `cargo bench -p toolport-server --bench tasks` (rounds alternate the
//! three kinds; medians of per-call times are printed).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolport_protocol::jsonrpc::{Notification, Request, RequestId};
use toolport_rpc::peer::BoxFuture;
use toolport_rpc::{PeerChannel, RpcError};
use toolport_server::{CallContext, NoArgs, Server, TaskEngine, TaskSupport, tool};
use toolport_tasks::{PostgresStore, SqliteStore, TaskStore};

#[derive(Debug)]
struct NullChannel;

impl PeerChannel for NullChannel {
    fn notify(&self, _: Notification) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }
    fn request(&self, _: String, _: Option<Value>, _: Duration) -> BoxFuture<'_, Result<Box<RawValue>, RpcError>> {
        Box::pin(async { Err(RpcError::Closed) })
    }
}

const CALLS: usize = 300;
const ROUNDS: usize = 5;

fn request(method: &str, params: Value, tasks: bool) -> Request {
    let mut params = params;
    let caps = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    Request::new(RequestId::Number(1), method, Some(params))
}

async fn per_call(server: &Server, call: &CallContext, make: impl Fn(usize) -> Request) -> Duration {
    let started = Instant::now();
    for i in 0..CALLS {
        let answer = server.handle(make(i), call.clone()).await.expect("answered");
        std::hint::black_box(answer);
    }
    started.elapsed() / CALLS as u32
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn run(name: &str, store: Arc<dyn TaskStore>) {
    let server = Server::builder("bench", "1")
        .tasks(TaskEngine::new(store))
        .tool(
            tool("work")
                .task_support(TaskSupport::Optional)
                .handler(|_: NoArgs| async { "done" }),
        )
        .build()
        .unwrap();
    let call = CallContext {
        session: Default::default(),
        channel: Arc::new(NullChannel),
        cancel: CancellationToken::new(),
        principal: None,
        session_id: None,
    };
    let created = server
        .handle(request("tools/call", json!({"name": "work"}), true), call.clone())
        .await
        .unwrap();
    let id = serde_json::from_str::<Value>(created.get()).unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (mut plain, mut create, mut get) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        plain.push(
            per_call(&server, &call, |_| {
                request("tools/call", json!({"name": "work"}), false)
            })
            .await,
        );
        create.push(per_call(&server, &call, |_| request("tools/call", json!({"name": "work"}), true)).await);
        get.push(per_call(&server, &call, |_| request("tasks/get", json!({"taskId": id}), true)).await);
    }
    let (plain, create, get) = (median(plain), median(create), median(get));
    println!(
        "{name:<11} plain tools/call {:>7.1} µs | task creation {:>7.1} µs ({:.1}×) | tasks/get {:>7.1} µs ({:.1}×)",
        plain.as_secs_f64() * 1e6,
        create.as_secs_f64() * 1e6,
        create.as_secs_f64() / plain.as_secs_f64(),
        get.as_secs_f64() * 1e6,
        get.as_secs_f64() / plain.as_secs_f64(),
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        run("SQLite", Arc::new(SqliteStore::open_in(dir.path()).await.unwrap())).await;
        if let Ok(url) = std::env::var("TOOLPORT_BENCH_TASKS_POSTGRES_URL") {
            let schema = format!("bench_{}", std::process::id());
            let store = PostgresStore::connect_in(&url, Some(&schema), 8).await.unwrap();
            run("PostgreSQL", Arc::new(store)).await;
        } else {
            println!("PostgreSQL  skipped: set TOOLPORT_BENCH_TASKS_POSTGRES_URL");
        }
    });
}
