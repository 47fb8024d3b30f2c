//! An A2A client of both HTTP bindings, with streaming and resubscription.
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolport_a2a::ClientError> {
//! use toolport_a2a::{A2aClient, Message, Part, SendMessageRequest};
//!
//! let (client, card) = A2aClient::discover("http://127.0.0.1:8080", None).await?;
//! println!("{} offers {} skills", card.name, card.skills.len());
//! let request = SendMessageRequest::new(Message::user(vec![Part::text("hello")]));
//! let answer = client.send(request).await?;
//! # let _ = answer;
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::types::{
    AgentCard, ListTasksQuery, ListTasksResponse, Message, PROTOCOL_VERSION, SendMessageRequest, StreamResponse, Task,
};

/// The largest answer (or stream event) read.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How long connecting and a non-streaming call may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Which binding a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 (`JSONRPC`).
    JsonRpc,
    /// HTTP+JSON (`HTTP+JSON`).
    Rest,
}

impl Binding {
    fn card_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::Rest => "HTTP+JSON",
        }
    }
}

/// What went wrong talking to an agent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The agent could not be reached or the connection broke.
    #[error("{0}")]
    Transport(String),
    /// The agent answered with an A2A (or JSON-RPC) error.
    #[error("the agent answered {code}: {message}")]
    Agent {
        /// The JSON-RPC code (or HTTP status for the HTTP+JSON binding).
        code: i64,
        /// Its message.
        message: String,
        /// The `ErrorInfo.reason`, when it gave one.
        reason: Option<String>,
    },
    /// The answer is not what A2A says it should be.
    #[error("{0}")]
    Protocol(String),
}

impl SendMessageRequest {
    /// A request to send `message` with the default configuration.
    pub fn new(message: Message) -> SendMessageRequest {
        SendMessageRequest {
            tenant: None,
            message,
            configuration: None,
            metadata: None,
        }
    }
}

/// A client of one agent interface. Cheap to clone.
#[derive(Debug, Clone)]
pub struct A2aClient {
    url: String,
    binding: Binding,
    bearer: Option<String>,
    ids: Arc<AtomicI64>,
}

impl A2aClient {
    /// A client of the interface at `url` speaking `binding`.
    pub fn new(url: impl Into<String>, binding: Binding) -> A2aClient {
        A2aClient {
            url: url.into().trim_end_matches('/').to_owned(),
            binding,
            bearer: None,
            ids: Arc::new(AtomicI64::new(1)),
        }
    }

    /// Sends `token` as a bearer token with every request.
    pub fn bearer(mut self, token: impl Into<String>) -> A2aClient {
        self.bearer = Some(token.into());
        self
    }

    /// The interface URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The binding spoken.
    pub fn binding(&self) -> Binding {
        self.binding
    }

    /// The Agent Card of the agent at `base_url`.
    pub async fn card(base_url: &str) -> Result<AgentCard, ClientError> {
        let url = format!("{}{}", base_url.trim_end_matches('/'), crate::card::AGENT_CARD_PATH);
        let response = request(Method::GET, &url, None, None).await?;
        decode_body(response).await
    }

    /// Reads the card of the agent at `base_url` and picks its interface:
    /// `prefer`'s when listed, else the first one this client speaks.
    pub async fn discover(base_url: &str, prefer: Option<Binding>) -> Result<(A2aClient, AgentCard), ClientError> {
        let card = A2aClient::card(base_url).await?;
        let spoken = [prefer, Some(Binding::JsonRpc), Some(Binding::Rest)];
        let pick = spoken.into_iter().flatten().find_map(|binding| {
            card.supported_interfaces
                .iter()
                .find(|i| i.protocol_binding == binding.card_name())
                .map(|i| (binding, i.url.clone()))
        });
        let (binding, url) =
            pick.ok_or_else(|| ClientError::Protocol("the card lists no JSONRPC or HTTP+JSON interface".into()))?;
        Ok((A2aClient::new(url, binding), card))
    }

    /// `SendMessage`: the task (or the agent's message).
    pub async fn send(&self, request: SendMessageRequest) -> Result<StreamResponse, ClientError> {
        let params = to_value(&request)?;
        self.call("SendMessage", Method::POST, "/message:send", Some(params))
            .await
    }

    /// `SendStreamingMessage`: the task, then its updates.
    pub async fn send_streaming(&self, request: SendMessageRequest) -> Result<EventStream, ClientError> {
        let params = to_value(&request)?;
        self.stream("SendStreamingMessage", Method::POST, "/message:stream", Some(params))
            .await
    }

    /// `GetTask`, with at most `history_length` messages of history.
    pub async fn get(&self, id: &str, history_length: Option<i32>) -> Result<Task, ClientError> {
        let path = match history_length {
            Some(n) => format!("/tasks/{}?historyLength={n}", encode(id)),
            None => format!("/tasks/{}", encode(id)),
        };
        let params = json!({"id": id, "historyLength": history_length});
        self.call("GetTask", Method::GET, &path, Some(params)).await
    }

    /// `ListTasks`.
    pub async fn list(&self, query: &ListTasksQuery) -> Result<ListTasksResponse, ClientError> {
        let params = to_value(query)?;
        let mut pairs = form_urlencoded::Serializer::new(String::new());
        for (key, value) in params.as_object().into_iter().flatten() {
            match value {
                Value::Null => {}
                Value::String(s) => {
                    pairs.append_pair(key, s);
                }
                other => {
                    pairs.append_pair(key, &other.to_string());
                }
            }
        }
        let path = format!("/tasks?{}", pairs.finish());
        self.call("ListTasks", Method::GET, &path, Some(params)).await
    }

    /// `CancelTask`.
    pub async fn cancel(&self, id: &str) -> Result<Task, ClientError> {
        let path = format!("/tasks/{}:cancel", encode(id));
        self.call("CancelTask", Method::POST, &path, Some(json!({"id": id})))
            .await
    }

    /// `GetExtendedAgentCard` (needs an authenticated client).
    pub async fn extended_card(&self) -> Result<AgentCard, ClientError> {
        self.call("GetExtendedAgentCard", Method::GET, "/extendedAgentCard", None)
            .await
    }

    /// `SubscribeToTask`: the task as it is, then its updates (also how a
    /// client that lost its stream picks the task up again).
    pub async fn subscribe(&self, id: &str) -> Result<EventStream, ClientError> {
        let path = format!("/tasks/{}:subscribe", encode(id));
        self.stream("SubscribeToTask", Method::POST, &path, Some(json!({"id": id})))
            .await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        http_method: Method,
        path: &str,
        params: Option<Value>,
    ) -> Result<T, ClientError> {
        let response = self.send_request(method, http_method, path, params).await?;
        match self.binding {
            Binding::Rest => decode_body(response).await,
            Binding::JsonRpc => {
                let envelope: Value = decode_body(response).await?;
                from_envelope(envelope)
            }
        }
    }

    async fn stream(
        &self,
        method: &str,
        http_method: Method,
        path: &str,
        params: Option<Value>,
    ) -> Result<EventStream, ClientError> {
        let response = self.send_request(method, http_method, path, params).await?;
        let is_sse = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            // An error answered before any event.
            let body: Value = decode_body(response).await?;
            return Err(match self.binding {
                Binding::JsonRpc => from_envelope::<Value>(body)
                    .err()
                    .unwrap_or_else(|| ClientError::Protocol("a streaming call was answered without a stream".into())),
                Binding::Rest => rest_error(0, &body),
            });
        }
        Ok(EventStream {
            body: response.into_body(),
            buffer: Vec::new(),
            jsonrpc: self.binding == Binding::JsonRpc,
            done: false,
        })
    }

    async fn send_request(
        &self,
        method: &str,
        http_method: Method,
        path: &str,
        params: Option<Value>,
    ) -> Result<http::Response<Incoming>, ClientError> {
        let (url, http_method, body) = match self.binding {
            Binding::JsonRpc => {
                let id = self.ids.fetch_add(1, Ordering::Relaxed);
                let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params.unwrap_or(json!({}))});
                (self.url.clone(), Method::POST, Some(body))
            }
            Binding::Rest => {
                let body = (http_method == Method::POST).then(|| params.unwrap_or(json!({})));
                (format!("{}{path}", self.url), http_method, body)
            }
        };
        let response = request(http_method, &url, body, self.bearer.as_deref()).await?;
        let status = response.status();
        if !status.is_success() {
            let body: Value = decode_body(response).await.unwrap_or(Value::Null);
            return Err(match body.get("error") {
                Some(error) if error.get("code").is_some() && self.binding == Binding::JsonRpc => {
                    from_envelope::<Value>(body)
                        .err()
                        .unwrap_or_else(|| rest_error(status.as_u16(), &Value::Null))
                }
                _ => rest_error(status.as_u16(), &body),
            });
        }
        Ok(response)
    }
}

/// The items of a streamed answer, in order.
#[derive(Debug)]
pub struct EventStream {
    body: Incoming,
    buffer: Vec<u8>,
    jsonrpc: bool,
    done: bool,
}

impl EventStream {
    /// The next item; `None` once the agent closed the stream.
    pub async fn next(&mut self) -> Option<Result<StreamResponse, ClientError>> {
        loop {
            if let Some(end) = find_event_end(&self.buffer) {
                let event: Vec<u8> = self.buffer.drain(..end.1).collect();
                let data = sse_data(&event[..end.0]);
                if data.is_empty() {
                    continue;
                }
                let value: Value = match serde_json::from_str(&data) {
                    Ok(v) => v,
                    Err(e) => return Some(Err(ClientError::Protocol(format!("a stream event is not JSON: {e}")))),
                };
                let item = if self.jsonrpc {
                    from_envelope(value)
                } else {
                    decode_value(value)
                };
                return Some(item);
            }
            if self.done {
                return None;
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                        if self.buffer.len() > MAX_BODY {
                            return Some(Err(ClientError::Protocol("a stream event is over 16 MiB".into())));
                        }
                    }
                }
                Some(Err(e)) => return Some(Err(ClientError::Transport(format!("the stream broke: {e}")))),
                None => self.done = true,
            }
        }
    }
}

/// Where the first event in `buffer` ends: (its length, with the blank line).
fn find_event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| (i, i + 2));
    let crlf = buffer.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The `data:` lines of one event, joined.
fn sse_data(event: &[u8]) -> String {
    let text = String::from_utf8_lossy(event);
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    lines.join("\n")
}

fn from_envelope<T: DeserializeOwned>(envelope: Value) -> Result<T, ClientError> {
    if let Some(error) = envelope.get("error") {
        return Err(ClientError::Agent {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            reason: error
                .pointer("/data/0/reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
        });
    }
    match envelope.get("result") {
        Some(result) => decode_value(result.clone()),
        None => Err(ClientError::Protocol(
            "a JSON-RPC answer with neither result nor error".into(),
        )),
    }
}

fn rest_error(status: u16, body: &Value) -> ClientError {
    let error = body.get("error");
    ClientError::Agent {
        code: error
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
            .unwrap_or(i64::from(status)),
        message: error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the agent answered with an error")
            .to_owned(),
        reason: error
            .and_then(|e| e.pointer("/details/0/reason"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

fn decode_value<T: DeserializeOwned>(value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value)
        .map_err(|e| ClientError::Protocol(format!("the agent's answer does not fit A2A: {e}")))
}

async fn decode_body<T: DeserializeOwned>(response: http::Response<Incoming>) -> Result<T, ClientError> {
    let body = http_body_util::Limited::new(response.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| ClientError::Transport(format!("reading the answer: {e}")))?
        .to_bytes();
    serde_json::from_slice(&body).map_err(|e| ClientError::Protocol(format!("the answer is not JSON: {e}")))
}

fn to_value(value: &impl serde::Serialize) -> Result<Value, ClientError> {
    serde_json::to_value(value).map_err(|e| ClientError::Protocol(format!("the request could not be encoded: {e}")))
}

fn encode(segment: &str) -> String {
    form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}

/// One HTTP request over a fresh connection (TLS for `https://`).
async fn request(
    method: Method,
    url: &str,
    body: Option<Value>,
    bearer: Option<&str>,
) -> Result<http::Response<Incoming>, ClientError> {
    let uri: Uri = url
        .parse()
        .map_err(|_| ClientError::Transport(format!("{url:?} is not a URL")))?;
    let tls = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err(ClientError::Transport(format!("{url:?} is not an http(s) URL"))),
    };
    let host = uri
        .host()
        .ok_or_else(|| ClientError::Transport(format!("{url:?} names no host")))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let tcp = tokio::time::timeout(TIMEOUT, tokio::net::TcpStream::connect((host.as_str(), port)))
        .await
        .map_err(|_| ClientError::Transport(format!("connecting to {host}:{port} timed out")))?
        .map_err(|e| ClientError::Transport(format!("connecting to {host}:{port}: {e}")))?;
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut builder = http::Request::builder()
        .method(method)
        .uri(path)
        .header(
            http::header::HOST,
            uri.authority().map_or(host.as_str(), |a| a.as_str()),
        )
        .header("A2A-Version", PROTOCOL_VERSION)
        .header(http::header::ACCEPT, "application/json, text/event-stream");
    if let Some(token) = bearer {
        builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let bytes = match &body {
        Some(body) => {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
            Bytes::from(body.to_string())
        }
        None => Bytes::new(),
    };
    let request = builder
        .body(Full::new(bytes))
        .map_err(|e| ClientError::Transport(format!("building the request: {e}")))?;
    let sent = async {
        if tls {
            let stream = crate::tls::connect(tcp, &host).await.map_err(ClientError::Transport)?;
            exchange(TokioIo::new(stream), request).await
        } else {
            exchange(TokioIo::new(tcp), request).await
        }
    };
    tokio::time::timeout(TIMEOUT, sent)
        .await
        .map_err(|_| ClientError::Transport(format!("{url} did not answer within {} s", TIMEOUT.as_secs())))?
}

async fn exchange<T>(io: T, request: http::Request<Full<Bytes>>) -> Result<http::Response<Incoming>, ClientError>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| ClientError::Transport(format!("HTTP handshake: {e}")))?;
    tokio::spawn(connection);
    sender
        .send_request(request)
        .await
        .map_err(|e| ClientError::Transport(format!("sending the request: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_on_blank_lines_and_join_data_lines() {
        let buffer = b"data: {\"a\":1}\n\n: keep-alive\n\ndata: x\r\n\r\n";
        let (len, end) = find_event_end(buffer).unwrap();
        assert_eq!(sse_data(&buffer[..len]), "{\"a\":1}");
        let rest = &buffer[end..];
        let (len, end2) = find_event_end(rest).unwrap();
        assert_eq!(sse_data(&rest[..len]), "");
        let last = &rest[end2..];
        let (len, _) = find_event_end(last).unwrap();
        assert_eq!(sse_data(&last[..len]), "x");
    }

    #[test]
    fn errors_read_from_both_bindings() {
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "task t not found", "data": [{"reason": "TASK_NOT_FOUND"}]}});
        assert_eq!(
            from_envelope::<Value>(rpc).unwrap_err(),
            ClientError::Agent {
                code: -32001,
                message: "task t not found".into(),
                reason: Some("TASK_NOT_FOUND".into())
            }
        );
        let rest = json!({"error": {"code": 404, "message": "gone", "details": [{"reason": "TASK_NOT_FOUND"}]}});
        assert_eq!(
            rest_error(404, &rest),
            ClientError::Agent {
                code: 404,
                message: "gone".into(),
                reason: Some("TASK_NOT_FOUND".into())
            }
        );
    }
}
