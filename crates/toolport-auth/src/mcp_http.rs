//! A minimal MCP caller over Streamable HTTP with a [`TokenProvider`]: what
//! the OAuth conformance client and `toolport scan` need to list and call
//! tools on a protected server, in either protocol era. The full client is
//! `toolport-client`'s job; this one is deliberately small: one request at
//! a time, JSON or a finite SSE answer, no server-to-client requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

use crate::client::{AuthError, TokenProvider};
use crate::http::{HttpClient, HttpError};

/// The stateless era's version.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The HTTP exchange failed.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// Authorization failed for good.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The server answered with an HTTP error.
    #[error("HTTP {status}: {body}")]
    Status {
        /// The status.
        status: StatusCode,
        /// The start of the body.
        body: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("JSON-RPC error {code}: {message}")]
    Rpc {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The answer was not a JSON-RPC response to the request.
    #[error("unexpected answer: {0}")]
    Protocol(String),
}

/// Talks to one MCP endpoint.
#[derive(Debug)]
pub struct McpHttpCaller {
    url: String,
    version: String,
    http: Arc<dyn HttpClient>,
    auth: Option<Arc<dyn TokenProvider>>,
    session: std::sync::Mutex<Option<String>>,
    next_id: AtomicU64,
}

impl McpHttpCaller {
    /// A caller of `url` speaking protocol `version` (a handshake-era
    /// version starts with `initialize`; 2026-07-28 needs none).
    pub fn new(
        url: impl Into<String>,
        version: impl Into<String>,
        http: Arc<dyn HttpClient>,
        auth: Option<Arc<dyn TokenProvider>>,
    ) -> Self {
        McpHttpCaller {
            url: url.into(),
            version: version.into(),
            http,
            auth,
            session: std::sync::Mutex::new(None),
            next_id: AtomicU64::new(1),
        }
    }

    fn stateless(&self) -> bool {
        self.version == STATELESS_VERSION
    }

    /// Opens the conversation: `initialize` and `notifications/initialized`
    /// in the handshake era; nothing to do in 2026-07-28.
    pub async fn connect(&self) -> Result<(), CallError> {
        if self.stateless() {
            return Ok(());
        }
        let params = json!({
            "protocolVersion": self.version,
            "capabilities": {},
            "clientInfo": {"name": "toolport-auth", "version": env!("CARGO_PKG_VERSION")},
        });
        self.request("initialize", params).await?;
        self.send(None, "notifications/initialized", json!({})).await?;
        Ok(())
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_tools(&self) -> Result<Vec<Value>, CallError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let result = self.request("tools/list", params).await?;
            if let Some(page) = result.get("tools").and_then(Value::as_array) {
                tools.extend(page.iter().cloned());
            }
            cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        Ok(tools)
    }

    /// Calls a tool.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        self.request("tools/call", json!({ "name": name, "arguments": arguments }))
            .await
    }

    /// Sends a request and returns its result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let answer = self.send(Some(id), method, params).await?;
        let answer = answer.ok_or_else(|| CallError::Protocol("no JSON-RPC response".into()))?;
        if let Some(error) = answer.get("error") {
            return Err(CallError::Rpc {
                code: error.get("code").and_then(Value::as_i64).unwrap_or_default(),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| CallError::Protocol(format!("no result in {answer}")))
    }

    /// One message, with the OAuth retries: after a 401 or a 403 the token
    /// provider acts and the message is sent again, up to four sends in all
    /// (a step-up may follow a fresh authorization); the provider's own
    /// limits end hopeless loops sooner.
    async fn send(&self, id: Option<u64>, method: &str, mut params: Value) -> Result<Option<Value>, CallError> {
        if self.stateless() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "toolport-auth", "version": env!("CARGO_PKG_VERSION")},
            });
        }
        let mut message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        if let Some(id) = id {
            message["id"] = json!(id);
        }
        let body = Bytes::from(message.to_string());
        for _attempt in 0..4 {
            let token = match &self.auth {
                Some(auth) => auth.token().await?,
                None => None,
            };
            let request = self.http_request(method, &message, body.clone(), token.as_deref())?;
            let response = self.http.send(request).await?;
            let status = response.status();
            let challenge = response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            match (status, &self.auth) {
                (StatusCode::UNAUTHORIZED, Some(auth)) => {
                    auth.on_unauthorized(challenge.as_deref()).await?;
                    continue;
                }
                (StatusCode::FORBIDDEN, Some(auth)) if challenge.is_some() => {
                    auth.on_forbidden(challenge.as_deref()).await?;
                    continue;
                }
                _ => {}
            }
            if let Some(session) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
                *self.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(session.to_owned());
            }
            if status == StatusCode::ACCEPTED || id.is_none() && status.is_success() {
                return Ok(None);
            }
            let json_error = !status.is_success() && !self.stateless();
            if json_error || status.is_server_error() || status == StatusCode::UNAUTHORIZED {
                return Err(CallError::Status {
                    status,
                    body: String::from_utf8_lossy(response.body()).chars().take(500).collect(),
                });
            }
            return parse_answer(response.headers(), response.body(), id).map(Some);
        }
        Err(CallError::Protocol(format!(
            "{method}: still refused after re-authorizing"
        )))
    }

    fn http_request(
        &self,
        method: &str,
        message: &Value,
        body: Bytes,
        token: Option<&str>,
    ) -> Result<Request<Bytes>, CallError> {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(&self.url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        if method != "initialize" {
            builder = builder.header("mcp-protocol-version", &self.version);
        }
        if self.stateless() {
            builder = builder.header("mcp-method", method);
            let params = &message["params"];
            let name = match method {
                "tools/call" | "prompts/get" => params.get("name"),
                "resources/read" => params.get("uri"),
                _ => None,
            };
            if let Some(name) = name.and_then(Value::as_str) {
                builder = builder.header("mcp-name", name);
            }
        }
        if let Some(session) = self.session.lock().unwrap_or_else(|p| p.into_inner()).as_deref() {
            builder = builder.header("mcp-session-id", session);
        }
        if let Some(token) = token {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        builder
            .body(body)
            .map_err(|_| CallError::Protocol(format!("{:?} is not a valid URI", self.url)))
    }
}

/// The JSON-RPC response with `id` in a JSON body or an SSE stream.
fn parse_answer(headers: &http::HeaderMap, body: &[u8], id: Option<u64>) -> Result<Value, CallError> {
    let sse = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !sse {
        return serde_json::from_slice(body).map_err(|e| CallError::Protocol(format!("not JSON: {e}")));
    }
    let text = String::from_utf8_lossy(body);
    for event in text.split("\n\n") {
        let data: String = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect::<Vec<_>>()
            .join("\n");
        if data.is_empty() {
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if message.get("id").and_then(Value::as_u64) == id
            && (message.get("result").is_some() || message.get("error").is_some())
        {
            return Ok(message);
        }
    }
    Err(CallError::Protocol(
        "the event stream ended without the response".into(),
    ))
}
