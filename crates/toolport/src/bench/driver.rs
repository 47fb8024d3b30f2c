//! Drivers: how one benchmark worker sends one `tools/call` over HTTP (either
//! era, JSON or SSE answers) or over stdio (one shared child process).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use toolport_rpc::peer::{PeerOptions, RequestContext, Service};
use toolport_rpc::{Peer, connect};

/// Which protocol era the benchmark speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EraChoice {
    /// 2026-07-28: every request carries its `_meta`; no session.
    Stateless,
    /// 2025-11-25: one `initialize`, then every call on that session.
    Handshake,
}

/// What every call sends.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) era: EraChoice,
    /// Ask for SSE answers only (`Accept: text/event-stream`).
    pub(crate) sse: bool,
}

const META: &str = "_meta";

impl Workload {
    fn body(&self, id: i64) -> String {
        self.body_with(id, &self.arguments)
    }

    fn body_with(&self, id: i64, arguments: &Value) -> String {
        let mut params = json!({"name": self.tool, "arguments": arguments});
        if self.era == EraChoice::Stateless {
            params[META] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "toolport-bench", "version": env!("CARGO_PKG_VERSION")}
            });
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
    }
}

/// Ids are unique across all workers: servers that route by id stall on repeats.
static NEXT_ID: AtomicI64 = AtomicI64::new(1);

/// An HTTP target: the URL's parts and, in the handshake era, the session.
#[derive(Debug, Clone)]
pub(crate) struct HttpTarget {
    address: String,
    host: String,
    path: String,
    session: Option<String>,
    workload: Arc<Workload>,
}

impl HttpTarget {
    /// Parses `http://host:port/path` and opens the session if the era needs one.
    pub(crate) async fn new(url: &str, workload: Workload) -> Result<HttpTarget> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| anyhow!("{url}: only http:// URLs are supported"))?;
        let (authority, path) = rest.split_once('/').map_or((rest, "/"), |(a, p)| (a, p));
        let path = if path == "/" {
            "/".to_owned()
        } else {
            format!("/{path}")
        };
        let mut target = HttpTarget {
            address: authority.to_owned(),
            host: authority.to_owned(),
            path,
            session: None,
            workload: Arc::new(workload),
        };
        if target.workload.era == EraChoice::Handshake {
            target.session = target.initialize().await?;
        }
        Ok(target)
    }

    /// The handshake; the session id, unless the server serves without sessions.
    async fn initialize(&self) -> Result<Option<String>> {
        let mut sender = self.connect().await?;
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "toolport-bench", "version": "1"}}});
        let request = self.request(body.to_string(), None)?;
        let response = send(&mut sender, request).await.context("initialize")?;
        if !response.status().is_success() {
            bail!("initialize: HTTP {}", response.status());
        }
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        response.into_body().collect().await?;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let response = send(&mut sender, self.request(note, session.as_deref())?)
            .await
            .context("notifications/initialized")?;
        response.into_body().collect().await?;
        Ok(session)
    }

    /// A keep-alive connection for one worker.
    pub(crate) async fn connect(&self) -> Result<SendRequest<Full<Bytes>>> {
        let stream = TcpStream::connect(&self.address)
            .await
            .with_context(|| format!("cannot connect to {}", self.address))?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(sender)
    }

    fn request(&self, body: String, session: Option<&str>) -> Result<Request<Full<Bytes>>> {
        let accept = if self.workload.sse {
            "text/event-stream"
        } else {
            "application/json, text/event-stream"
        };
        let mut builder = Request::post(&self.path)
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", accept);
        match (self.workload.era, session) {
            (EraChoice::Stateless, _) => {
                builder = builder
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", &self.workload.tool);
            }
            (EraChoice::Handshake, session) => {
                builder = builder.header("mcp-protocol-version", "2025-11-25");
                if let Some(session) = session {
                    builder = builder.header("mcp-session-id", session);
                }
            }
        }
        Ok(builder.body(Full::new(Bytes::from(body)))?)
    }

    /// One call on a worker's connection; `Err` for any failure, including a
    /// JSON-RPC error or a tool's `isError` result.
    pub(crate) async fn call(&self, sender: &mut SendRequest<Full<Bytes>>) -> Result<()> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.call_body(sender, id, self.workload.body(id)).await.map(drop)
    }

    /// One call with these arguments; its result.
    pub(crate) async fn call_with(&self, sender: &mut SendRequest<Full<Bytes>>, arguments: &Value) -> Result<Value> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.call_body(sender, id, self.workload.body_with(id, arguments)).await
    }

    /// A session of its own, for a soak agent (handshake era).
    pub(crate) async fn with_own_session(&self) -> Result<HttpTarget> {
        let mut target = self.clone();
        if target.workload.era == EraChoice::Handshake {
            target.session = target.initialize().await?;
        }
        Ok(target)
    }

    async fn call_body(&self, sender: &mut SendRequest<Full<Bytes>>, id: i64, body: String) -> Result<Value> {
        let request = self.request(body, self.session.as_deref())?;
        let response = send(sender, request).await?;
        let status = response.status();
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let body = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            let error = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("error").cloned());
            match error {
                Some(e) => bail!(
                    "HTTP {status}: JSON-RPC error {}: {}",
                    e["code"],
                    e["message"].as_str().unwrap_or("")
                ),
                None => bail!("HTTP {status}"),
            }
        }
        let answer = if sse {
            find_in_sse(&body, id)?
        } else {
            serde_json::from_slice(&body)?
        };
        check_answer(&answer, id)?;
        Ok(answer["result"].clone())
    }
}

/// Sends once the connection can take a request: after an answer's body has
/// been read, the connection task may not yet have taken up the next request,
/// and hyper refuses a request sent before then ("connection was not ready").
async fn send(sender: &mut SendRequest<Full<Bytes>>, request: Request<Full<Bytes>>) -> Result<Response<Incoming>> {
    sender.ready().await?;
    Ok(sender.send_request(request).await?)
}

fn find_in_sse(body: &[u8], id: i64) -> Result<Value> {
    let text = std::str::from_utf8(body)?;
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m["id"] == id)
        .ok_or_else(|| anyhow!("the event stream ended without the answer"))
}

fn check_answer(answer: &Value, id: i64) -> Result<()> {
    if answer["id"] != id {
        bail!("an answer for id {} arrived for id {id}", answer["id"]);
    }
    if let Some(error) = answer.get("error") {
        bail!("JSON-RPC error {}", error["code"]);
    }
    if answer["result"]["isError"] == true {
        bail!("the tool failed");
    }
    Ok(())
}

/// A stdio target: one child process, every worker's calls in flight on it.
pub(crate) struct StdioTarget {
    peer: Peer,
    workload: Arc<Workload>,
    _child: tokio::process::Child,
}

struct NoRequests;

impl Service for NoRequests {
    async fn call(
        &self,
        request: toolport_protocol::Request,
        _cx: RequestContext,
    ) -> Result<Box<serde_json::value::RawValue>, toolport_protocol::ErrorObject> {
        Err(toolport_protocol::ErrorObject::method_not_found(&request.method))
    }
}

impl StdioTarget {
    pub(crate) async fn spawn(command: &[String], workload: Workload) -> Result<StdioTarget> {
        let (program, args) = command.split_first().ok_or_else(|| anyhow!("no command after --"))?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args);
        let (transport, child) = toolport_rpc::stdio::spawn_child(cmd, toolport_rpc::framing::DEFAULT_MAX_LINE)
            .with_context(|| format!("cannot start {program}"))?;
        let (peer, connection) = connect(transport, PeerOptions::default());
        tokio::spawn(connection.serve(NoRequests));
        if workload.era == EraChoice::Handshake {
            let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "toolport-bench", "version": "1"}});
            peer.request("initialize", Some(params))
                .await
                .map_err(|e| anyhow!("initialize: {e}"))?;
            peer.notify("notifications/initialized", None)
                .await
                .map_err(|e| anyhow!("{e}"))?;
        }
        Ok(StdioTarget {
            peer,
            workload: Arc::new(workload),
            _child: child,
        })
    }

    pub(crate) async fn call(&self) -> Result<()> {
        self.call_with(&self.workload.arguments).await.map(drop)
    }

    /// The child's process id, for its memory.
    pub(crate) fn pid(&self) -> Option<u32> {
        self._child.id()
    }

    /// One call with these arguments; its result.
    pub(crate) async fn call_with(&self, arguments: &Value) -> Result<Value> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let body: Value = serde_json::from_str(&self.workload.body_with(id, arguments))?;
        let result = self
            .peer
            .request("tools/call", Some(body["params"].clone()))
            .await
            .map_err(|e| anyhow!("{e}"))?;
        let result: Value = serde_json::from_str(result.get())?;
        if result["isError"] == true {
            bail!("the tool failed");
        }
        Ok(result)
    }
}

impl std::fmt::Debug for StdioTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTarget").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolport_http::{HttpConfig, HttpServer};
    use toolport_server::Server;

    /// The handshake sends two requests on one connection; when the second
    /// went out without waiting for the connection to be ready again, about
    /// one handshake in seven failed here, so a hundred of them catch it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_handshake_waits_for_the_connection_between_requests() {
        let server = toolport::demo::install(Server::builder("bench-test", "1"))
            .build()
            .unwrap();
        let config = HttpConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..HttpConfig::default()
        };
        let bound = HttpServer::new(server, config).bind().await.unwrap();
        let url = format!("http://{}/mcp", bound.local_addr());
        tokio::spawn(bound.serve(std::future::pending()));
        let workload = Workload {
            tool: "echo".into(),
            arguments: json!({"message": "hi"}),
            era: EraChoice::Handshake,
            sse: false,
        };
        let mut failures = Vec::new();
        for _ in 0..100 {
            if let Err(e) = HttpTarget::new(&url, workload.clone()).await {
                failures.push(format!("{e:#}"));
            }
        }
        assert_eq!(failures, Vec::<String>::new());
        let target = HttpTarget::new(&url, workload).await.unwrap();
        assert!(target.session.is_some(), "the server opens a session");
        let mut sender = target.connect().await.unwrap();
        for _ in 0..3 {
            target.call(&mut sender).await.unwrap();
        }
    }
}
