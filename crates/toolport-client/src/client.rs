//! The client: connection management, the request pipeline (in-flight bound,
//! deadline, retries with backoff, re-initialization), MRTR, and the typed
//! methods.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, broadcast};
use tokio_util::sync::CancellationToken;
use toolport_protocol::capabilities::ClientCapabilities;
use toolport_protocol::completion::{CompleteRequestParams, CompleteResult};
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::meta::keys;
use toolport_protocol::mrtr::InputRequiredResult;
use toolport_protocol::param_headers::{HeaderParam, header_params};
use toolport_protocol::progress::ProgressToken;
use toolport_protocol::prompts::{GetPromptResult, Prompt};
use toolport_protocol::resources::{ReadResourceResult, Resource, ResourceTemplate};
use toolport_protocol::subscriptions::SubscriptionFilter;
use toolport_protocol::tools::{CallToolResult, Tool};
use toolport_protocol::{Era, ErrorCode, completion, lifecycle, logging, prompts, resources, subscriptions, tools};

use crate::auth::TokenProvider;
use crate::error::ClientError;
use crate::handler::{self, ClientHandler, NoInput};
use crate::http::HttpCore;
use crate::inbound::{ClientEvent, Inbound};
use crate::link::{Link, Outbound, ServerInfo, Target, Wire, stateless_meta};
use crate::options::{CallOptions, ClientOptions};
use crate::stdio::ServerCommand;

mod methods;

/// Pages one list may span before the client stops following cursors.
const MAX_PAGES: usize = 1000;
/// How long the client waits for a new event stream (GET or listen) to open.
const GET_STREAM_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How to build a [`Client`].
#[derive(Debug)]
pub struct ClientBuilder {
    target: Result<TargetSpec, ClientError>,
    options: ClientOptions,
    handler: Arc<dyn ClientHandler>,
    auth: Option<Arc<dyn TokenProvider>>,
    #[cfg(feature = "auth")]
    pinning: Option<crate::pinning::Pinning>,
}

#[derive(Debug)]
enum TargetSpec {
    Stdio(ServerCommand),
    Http(String),
}

impl ClientBuilder {
    /// Replaces the options.
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the handler that answers the server's questions (and so the
    /// capabilities the client declares).
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Sets the token provider for HTTP (`Authorization: Bearer`, 401/403).
    pub fn auth(mut self, provider: impl TokenProvider) -> Self {
        self.auth = Some(Arc::new(provider));
        self
    }

    /// Pins this server's tool definitions under the name `server` in `pins`:
    /// new and changed tools are quarantined (not listed, not callable)
    /// until approved, each event audited by the pins' sink.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), toolport_client::ClientError> {
    /// use std::sync::Arc;
    /// use toolport_auth::pinning::{PinStore, ToolPins, TracingAudit};
    /// use toolport_client::Client;
    ///
    /// let pins = Arc::new(ToolPins::new(PinStore::default(), Arc::new(TracingAudit)));
    /// let client = Client::http("http://127.0.0.1:8080/mcp").pin_tools("local", pins.clone()).connect().await?;
    /// assert!(client.list_tools().await?.is_empty(), "nothing is approved yet");
    /// pins.approve_all("local"); // after a person has looked at pins.snapshot()
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "auth")]
    pub fn pin_tools(mut self, server: impl Into<String>, pins: Arc<toolport_auth::pinning::ToolPins>) -> Self {
        self.pinning = Some(crate::pinning::Pinning {
            server: server.into(),
            pins,
        });
        self
    }

    /// Builds the client without connecting: the first call connects.
    pub fn build(self) -> Result<Client, ClientError> {
        let target = match self.target? {
            TargetSpec::Stdio(command) => Target::Stdio(command),
            TargetSpec::Http(url) => Target::Http(Arc::new(HttpCore::new(
                &url,
                self.options.max_connections,
                self.options.max_message_bytes,
                &self.options.extra_root_certificates,
                self.auth,
            )?)),
        };
        let capabilities = self.handler.capabilities();
        Ok(Client {
            inner: Arc::new(Inner {
                in_flight: Semaphore::new(self.options.max_in_flight.max(1)),
                inbound: Arc::new(Inbound::new(self.handler)),
                target,
                options: self.options,
                capabilities,
                link: tokio::sync::Mutex::new(None),
                tools: Mutex::default(),
                next_token: AtomicI64::new(1),
                want_events: AtomicBool::new(false),
                subscriptions: Mutex::default(),
                log_level: Mutex::new(None),
                closed: CancellationToken::new(),
                #[cfg(feature = "auth")]
                pinning: self.pinning,
            }),
        })
    }

    /// Builds the client and opens the conversation (spawn or connect, then
    /// `server/discover` or `initialize`).
    pub async fn connect(self) -> Result<Client, ClientError> {
        let client = self.build()?;
        client.server().await?;
        Ok(client)
    }
}

/// An MCP client. Cheap to clone; clones share the connection. Any number of
/// calls may be in flight at once, each answer reaches its own caller.
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

/// What the client knows about a tool, from `tools/list`.
#[derive(Debug, Clone)]
struct ToolNote {
    header_params: Vec<HeaderParam>,
    /// Read-only or idempotent: safe to send again after a broken connection.
    retry_safe: bool,
}

#[derive(Debug)]
struct Inner {
    target: Target,
    options: ClientOptions,
    capabilities: ClientCapabilities,
    inbound: Arc<Inbound>,
    in_flight: Semaphore,
    link: tokio::sync::Mutex<Option<Arc<Link>>>,
    tools: Mutex<HashMap<String, ToolNote>>,
    next_token: AtomicI64,
    want_events: AtomicBool,
    subscriptions: Mutex<BTreeSet<String>>,
    log_level: Mutex<Option<LoggingLevel>>,
    closed: CancellationToken,
    #[cfg(feature = "auth")]
    pinning: Option<crate::pinning::Pinning>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Stop the background streams so the connection (and a spawned
        // server process) goes away with the client.
        if let Some(link) = self.link.get_mut().take() {
            link.stop();
        }
    }
}

/// The outcome of work under a deadline: when the deadline passed while the
/// server could not be reached at all, that is the more useful error.
fn finish<T>(
    outcome: Result<Result<T, ClientError>, tokio::time::error::Elapsed>,
    limit: std::time::Duration,
    last: &Mutex<Option<ClientError>>,
) -> Result<T, ClientError> {
    outcome.unwrap_or_else(|_| match lock(last).take() {
        Some(e @ ClientError::Unreachable(_)) => Err(e),
        _ => Err(ClientError::Timeout(limit)),
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Receives the server's notifications.
#[derive(Debug)]
pub struct Events {
    rx: broadcast::Receiver<ClientEvent>,
}

impl Events {
    /// The next event; `None` once the client is gone.
    pub async fn next(&mut self) -> Option<ClientEvent> {
        match self.rx.recv().await {
            Ok(event) => Some(event),
            Err(broadcast::error::RecvError::Lagged(n)) => Some(ClientEvent::Lagged(n)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl Client {
    /// A client for the MCP endpoint at `url` (Streamable HTTP).
    pub fn http(url: impl Into<String>) -> ClientBuilder {
        Self::builder(Ok(TargetSpec::Http(url.into())))
    }

    /// A client that spawns `command` and talks to it over stdio.
    pub fn stdio(command: ServerCommand) -> ClientBuilder {
        Self::builder(Ok(TargetSpec::Stdio(command)))
    }

    fn builder(target: Result<TargetSpec, ClientError>) -> ClientBuilder {
        ClientBuilder {
            target,
            options: ClientOptions::default(),
            handler: Arc::new(NoInput),
            auth: None,
            #[cfg(feature = "auth")]
            pinning: None,
        }
    }

    /// What the opening of the conversation settled (connects if needed).
    pub async fn server(&self) -> Result<ServerInfo, ClientError> {
        let limit = self.inner.options.request_timeout;
        let last = Mutex::new(None);
        let outcome = tokio::time::timeout(limit, self.link_retrying(&last)).await;
        finish(outcome, limit, &last).map(|link| link.server.clone())
    }

    async fn link_with_retries(&self) -> Result<Arc<Link>, ClientError> {
        self.link_retrying(&Mutex::new(None)).await
    }

    /// Opens a link, retrying transport failures with backoff; each failure
    /// is noted in `last` so a deadline can report it.
    async fn link_retrying(&self, last: &Mutex<Option<ClientError>>) -> Result<Arc<Link>, ClientError> {
        let mut failures = 0;
        loop {
            match self.link().await {
                Err(e) if e.was_not_sent() && failures + 1 < self.inner.options.backoff.max_attempts => {
                    failures += 1;
                    *lock(last) = Some(e);
                    tokio::time::sleep(self.inner.options.backoff.delay(failures)).await;
                }
                other => return other,
            }
        }
    }

    /// The live link, opening one if there is none.
    async fn link(&self) -> Result<Arc<Link>, ClientError> {
        let mut slot = self.inner.link.lock().await;
        if let Some(link) = slot.as_ref()
            && link.is_alive()
        {
            return Ok(link.clone());
        }
        if let Some(old) = slot.take() {
            tokio::spawn(async move { old.close().await });
        }
        if self.inner.closed.is_cancelled() {
            return Err(ClientError::Closed);
        }
        let link = Arc::new(
            Link::open(
                &self.inner.target,
                &self.inner.inbound,
                &self.inner.options,
                &self.inner.capabilities,
            )
            .await?,
        );
        tracing::debug!(version = %link.server.protocol_version, server = %link.server.implementation.name, "connected");
        if self.listens(&link)
            && let Some(ready) = self.start_listening(&link)
        {
            // Requests the server sends on the GET stream are lost if it is
            // not open yet: wait for it (briefly) before the first call.
            let _ = tokio::time::timeout(GET_STREAM_WAIT, ready).await;
        }
        *slot = Some(link.clone());
        Ok(link)
    }

    /// Drops `link` if it is still the current one; the next call reconnects.
    async fn invalidate(&self, link: &Arc<Link>) {
        let mut slot = self.inner.link.lock().await;
        if slot.as_ref().is_some_and(|current| Arc::ptr_eq(current, link)) {
            let old = slot.take().expect("checked above");
            tokio::spawn(async move { old.close().await });
        }
    }

    /// Ends the conversation: closes a stdio server's input (and kills it if
    /// it does not exit), ends an HTTP session. Calls after this fail with
    /// [`ClientError::Closed`].
    pub async fn close(&self) {
        self.inner.closed.cancel();
        let link = self.inner.link.lock().await.take();
        if let Some(link) = link {
            link.close().await;
        }
    }

    /// The server's notifications from now on: list changes, resource
    /// updates, log messages. Starts listening for them (a GET stream or
    /// `subscriptions/listen` over HTTP) if the client was not yet.
    pub async fn events(&self) -> Result<Events, ClientError> {
        let rx = self.inner.inbound.subscribe();
        if !self.inner.want_events.swap(true, Ordering::SeqCst) {
            let link = self.link_with_retries().await?;
            if let Some(ready) = self.start_listening(&link) {
                let _ = tokio::time::timeout(GET_STREAM_WAIT, ready).await;
            }
        }
        Ok(Events { rx })
    }

    /// Whether `link` needs a stream for what the server sends on its own:
    /// when events were asked for, and in the handshake era over HTTP when
    /// the handler answers requests (servers may send them on the GET stream).
    fn listens(&self, link: &Link) -> bool {
        let caps = &self.inner.capabilities;
        let answers = caps.elicitation.is_some() || caps.sampling.is_some() || caps.roots.is_some();
        self.inner.want_events.load(Ordering::SeqCst) || (answers && link.server.era() == Era::Handshake)
    }

    /// Starts the stream for what the server sends on its own; returns a
    /// receiver that fires once it is open, when there is a stream to open.
    fn start_listening(&self, link: &Arc<Link>) -> Option<tokio::sync::oneshot::Receiver<()>> {
        let stop = CancellationToken::new();
        {
            let mut listening = lock(&link.listening);
            // A handshake-era stream carries everything already; a 2026-07-28
            // listen stream is opened anew when its filter changes.
            if listening.is_some() && link.server.era() == Era::Handshake {
                return None;
            }
            if let Some(old) = listening.replace(stop.clone()) {
                old.cancel();
            }
        }
        let version = link.server.protocol_version;
        let backoff = self.inner.options.backoff;
        match (&link.wire, version.era()) {
            (Wire::Http(wire), Era::Handshake) => return Some(wire.listen_get(backoff)),
            (Wire::Stdio(_), Era::Handshake) => {} // notifications arrive on the connection
            (wire, Era::Stateless) => {
                let filter = SubscriptionFilter {
                    tools_list_changed: Some(true),
                    prompts_list_changed: Some(true),
                    resources_list_changed: Some(true),
                    resource_subscriptions: Some(lock(&self.inner.subscriptions).iter().cloned().collect()),
                };
                let mut params = Map::from_iter([("notifications".to_owned(), json!(filter))]);
                params.insert("_meta".into(), Value::Object(self.meta(link)));
                match wire {
                    Wire::Http(wire) => return Some(wire.listen_post(Value::Object(params), version, stop, backoff)),
                    Wire::Stdio(_) => {
                        let acknowledged = self.inner.inbound.on_acknowledged();
                        let link = link.clone();
                        tokio::spawn(async move {
                            let request = Outbound {
                                method: subscriptions::LISTEN,
                                params,
                                extra_headers: Vec::new(),
                            };
                            tokio::select! {
                                _ = stop.cancelled() => {}
                                outcome = link.request(request) => {
                                    tracing::debug!(?outcome, "the listen request ended");
                                }
                            }
                        });
                        return Some(acknowledged);
                    }
                }
            }
        }
        None
    }

    /// `_meta` of a request on `link`.
    fn meta(&self, link: &Link) -> Map<String, Value> {
        let version = link.server.protocol_version;
        if version.era() != Era::Stateless {
            return Map::new();
        }
        let mut meta = stateless_meta(version, &self.inner.capabilities, &self.inner.options.client_info);
        if let Some(level) = *lock(&self.inner.log_level) {
            meta.insert(keys::LOG_LEVEL.into(), json!(level));
        }
        meta
    }

    /// Builds one attempt of a request for `link`.
    fn outbound<'a>(
        &self,
        link: &Link,
        method: &'a str,
        params: &Map<String, Value>,
        token: Option<&ProgressToken>,
    ) -> Outbound<'a> {
        let mut params = params.clone();
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        meta.extend(self.meta(link));
        if let Some(token) = token {
            meta.insert(keys::PROGRESS_TOKEN.into(), json!(token));
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let mut extra_headers = Vec::new();
        if method == tools::CALL
            && link.server.era() == Era::Stateless
            && matches!(link.wire, Wire::Http(_))
            && let Some(name) = params.get("name").and_then(Value::as_str)
            && let Some(note) = lock(&self.inner.tools).get(name)
        {
            let empty = Map::new();
            let arguments = params.get("arguments").and_then(Value::as_object).unwrap_or(&empty);
            for param in &note.header_params {
                if let Some(value) = param.value_in(arguments) {
                    extra_headers.push((param.header_name(), value));
                }
            }
        }
        Outbound {
            method,
            params,
            extra_headers,
        }
    }

    /// Whether sending `method` twice is harmless.
    fn retry_safe(&self, method: &str, params: &Map<String, Value>) -> bool {
        match method {
            tools::CALL => params
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| lock(&self.inner.tools).get(name).map(|n| n.retry_safe))
                .unwrap_or(false),
            tools::LIST
            | prompts::LIST
            | prompts::GET
            | resources::LIST
            | resources::TEMPLATES_LIST
            | resources::READ
            | resources::SUBSCRIBE
            | resources::UNSUBSCRIBE
            | completion::COMPLETE
            | logging::SET_LEVEL
            | lifecycle::PING
            | lifecycle::DISCOVER => true,
            _ => false,
        }
    }

    /// One request, with the in-flight bound, the deadline and the retries;
    /// no MRTR.
    async fn send(
        &self,
        method: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
        token: Option<&ProgressToken>,
    ) -> Result<Value, ClientError> {
        let limit = options.timeout.unwrap_or(self.inner.options.request_timeout);
        let backoff = self.inner.options.backoff;
        let last = Mutex::new(None);
        let work = async {
            let _permit = self.inner.in_flight.acquire().await.map_err(|_| ClientError::Closed)?;
            let mut failures = 0;
            let mut version_retried = false;
            loop {
                let outcome = match self.link().await {
                    Err(e) => Err(e),
                    Ok(link) => {
                        let outcome = link.request(self.outbound(&link, method, params, token)).await;
                        match &outcome {
                            Err(e) if e.breaks_link() => self.invalidate(&link).await,
                            // The server no longer speaks our version (it was
                            // replaced): open the conversation again, once.
                            Err(ClientError::Remote(e))
                                if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && !version_retried =>
                            {
                                version_retried = true;
                                self.invalidate(&link).await;
                                continue;
                            }
                            _ => {}
                        }
                        outcome
                    }
                };
                let error = match outcome {
                    Ok(raw) => {
                        return serde_json::from_str(raw.get())
                            .map_err(|e| ClientError::Protocol(format!("{method} result: {e}")));
                    }
                    Err(e) => e,
                };
                let retry = error.was_not_sent()
                    || (matches!(error, ClientError::Disconnected(_)) && self.retry_safe(method, params));
                failures += 1;
                if !retry || failures >= backoff.max_attempts || self.inner.closed.is_cancelled() {
                    return Err(error);
                }
                tracing::debug!(%method, %error, failures, "retrying");
                let pause = !matches!(error, ClientError::SessionExpired);
                *lock(&last) = Some(error);
                if pause {
                    tokio::time::sleep(backoff.delay(failures)).await;
                }
            }
        };
        let outcome = tokio::time::timeout(limit, work).await;
        finish(outcome, limit, &last)
    }

    /// A request that may be answered with `InputRequiredResult`: the
    /// handler answers, and the request is sent again (with a new id) with
    /// `inputResponses` and the `requestState` echoed exactly, until it
    /// completes. A result without `resultType` is complete.
    pub async fn request(&self, method: &str, params: Value, options: CallOptions) -> Result<Value, ClientError> {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::InvalidInput(format!(
                    "params must be a JSON object, not {other}"
                )));
            }
        };
        let token = options
            .progress
            .as_ref()
            .map(|_| ProgressToken::Number(self.inner.next_token.fetch_add(1, Ordering::Relaxed)));
        let _route = match (&token, &options.progress) {
            (Some(token), Some(sink)) => Some(self.inner.inbound.route_progress(token.clone(), sink.clone())),
            _ => None,
        };
        for _round in 0..=self.inner.options.max_input_rounds {
            let value = self.send(method, &params, &options, token.as_ref()).await?;
            if value.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(value);
            }
            let asked: InputRequiredResult = serde_json::from_value(value)
                .map_err(|e| ClientError::Protocol(format!("InputRequiredResult: {e}")))?;
            let mut responses = Map::new();
            for (key, input) in asked.input_requests.unwrap_or_default() {
                let method = input.method();
                let answer = handler::answer(self.inner.inbound.handler.as_ref(), input)
                    .await
                    .map_err(|e| ClientError::InputUnavailable(format!("{method} ({key}): {}", e.message)))?;
                responses.insert(key, answer);
            }
            params.insert("inputResponses".into(), Value::Object(responses));
            match asked.request_state {
                Some(state) => params.insert("requestState".into(), Value::String(state)),
                None => params.remove("requestState"),
            };
        }
        Err(ClientError::Protocol(format!(
            "{method} still asked for input after {} rounds",
            self.inner.options.max_input_rounds
        )))
    }
}

impl Link {
    /// Stops background streams without waiting (used on drop).
    pub(crate) fn stop(&self) {
        if let Some(stop) = lock(&self.listening).take() {
            stop.cancel();
        }
        if let Wire::Http(w) = &self.wire {
            w.stop();
        }
    }
}
