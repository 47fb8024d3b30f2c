//! An A2A agent served over HTTP on loopback, in process, with its tasks in
//! a SQLite file of a temporary directory; and a raw HTTP client for the
//! hostile-input tests.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use serde_json::json;
use toolport_a2a::{
    A2aMount, A2aService, Agent, Artifact, CardConfig, Message, Part, PushPolicy, TaskBook, TaskContext, agent_fn,
};
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::Server;
use toolport_tasks::{SqliteStore, TaskEngine};

/// A running agent; stops when dropped.
pub struct Served {
    pub addr: SocketAddr,
    pub service: A2aService,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Served {
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// An engine over the SQLite store in `dir`.
pub async fn engine_in(dir: &Path) -> TaskEngine {
    TaskEngine::new(Arc::new(SqliteStore::open_in(dir).await.unwrap()))
}

/// The agent's service over a fresh store, without HTTP.
pub async fn service(agent: Arc<dyn Agent>, push: Option<PushPolicy>) -> (A2aService, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_in(dir.path()).await;
    let service = A2aService::new(
        agent,
        TaskBook::new(engine),
        CardConfig::new("test agent", "for tests"),
        push,
    );
    (service, dir)
}

/// `agent` served on a free loopback port, bodies up to `max_body` bytes.
pub async fn serve(agent: Arc<dyn Agent>, push: Option<PushPolicy>, max_body: usize) -> Served {
    let (service, dir) = service(agent, push).await;
    let mut served = serve_service(service.clone(), max_body).await;
    served._dir = Some(dir);
    served
}

/// `service` served on a free loopback port.
pub async fn serve_service(service: A2aService, max_body: usize) -> Served {
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        max_body_bytes: max_body,
        ..HttpConfig::default()
    };
    let server = Server::builder("a2a-test", "1").build().unwrap();
    let bound = HttpServer::new(server, config)
        .with_mount(Arc::new(A2aMount::new(service.clone())))
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    Served {
        addr,
        service,
        stop: Some(stop),
        _dir: None,
    }
}

/// One raw HTTP request: the status and the body as JSON (`Null` when it
/// is not JSON).
pub async fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> (u16, Value) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = sender
        .send_request(request.body(Full::new(body.into())).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// The headers of a well-formed JSON-RPC call.
pub const RPC: &[(&str, &str)] = &[("content-type", "application/json"), ("a2a-version", "1.0")];

/// A JSON-RPC call of `method` with `params`: the status and the answer.
pub async fn rpc(addr: SocketAddr, method: &str, params: Value) -> (u16, Value) {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    raw(addr, "POST", "/a2a/jsonrpc", RPC, body.to_string()).await
}

/// An agent that asks once, then completes with the answer.
pub fn asker() -> Arc<dyn Agent> {
    Arc::new(agent_fn("ask", "asks first", |cx: TaskContext| async move {
        if cx.state::<Value>().is_none() {
            let question = Message::agent(vec![Part::text("which one?")]);
            return cx.ask_input(question, Some(json!({"asked": true}))).await;
        }
        let answer = cx.message().text();
        cx.artifact(Artifact::new("answer", vec![Part::text(answer)])).await?;
        Ok(())
    }))
}
