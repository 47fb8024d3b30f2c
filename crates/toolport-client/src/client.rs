//! The client and its request pipeline: in-flight bound, deadline, retries
//! with backoff, re-initialization, and MRTR. Building a client is in
//! `builder.rs`, its connection (opening, replacing, closing, the event
//! stream) in `connection.rs`, the typed methods in `methods.rs`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;
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
use toolport_protocol::tools::{CallToolResult, Tool};
use toolport_protocol::{Era, ErrorCode, completion, lifecycle, logging, prompts, resources, tools};

use crate::error::ClientError;
use crate::handler;
use crate::inbound::Inbound;
use crate::link::{Link, Outbound, Target, Wire, stateless_meta};
use crate::options::{CallOptions, ClientOptions};

mod builder;
mod connection;
mod methods;
mod tasks;

pub use builder::ClientBuilder;
pub use connection::Events;
pub use tasks::{TaskStart, TaskState};

/// Pages one list may span before the client stops following cursors.
const MAX_PAGES: usize = 1000;

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

/// Longest wait a server's `Retry-After` may impose on one retry.
const RETRY_AFTER_CAP: std::time::Duration = std::time::Duration::from_secs(30);

/// The wait before retry `failures`: the backoff's capped exponential step,
/// or what the server asked for when that is longer (up to
/// [`RETRY_AFTER_CAP`]).
pub(crate) fn pause_before_retry(
    backoff: &crate::options::Backoff,
    failures: u32,
    retry_after: Option<std::time::Duration>,
) -> std::time::Duration {
    let step = backoff.delay(failures);
    retry_after.map_or(step, |asked| step.max(asked.min(RETRY_AFTER_CAP)))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Client {
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
        options: &CallOptions,
        token: Option<&ProgressToken>,
    ) -> Outbound<'a> {
        let mut params = params.clone();
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        // Extensions a call declares for itself (the tasks extension) join
        // the client's own capabilities rather than replace them.
        let declared = meta
            .remove(keys::CLIENT_CAPABILITIES)
            .and_then(|c| c.get("extensions").and_then(Value::as_object).cloned());
        meta.extend(options.meta.iter().map(|(k, v)| (k.clone(), v.clone())));
        meta.extend(self.meta(link));
        if let (Some(declared), Some(Value::Object(capabilities))) = (declared, meta.get_mut(keys::CLIENT_CAPABILITIES))
        {
            let extensions = capabilities.entry("extensions").or_insert_with(|| json!({}));
            if let Value::Object(extensions) = extensions {
                extensions.extend(declared);
            }
        }
        if let Some(token) = token {
            meta.insert(keys::PROGRESS_TOKEN.into(), json!(token));
        }
        let mut extra_headers = Vec::new();
        // The trace context goes in the HTTP headers too (W3C Trace
        // Context), so proxies and gateways that read only headers see it.
        if matches!(link.wire, Wire::Http(_)) {
            for key in [keys::TRACEPARENT, "tracestate"] {
                if let Some(value) = meta.get(key).and_then(Value::as_str) {
                    extra_headers.push((key.to_owned(), value.to_owned()));
                }
            }
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
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
        let cache_key = crate::cache::ResultCache::key(method, params);
        if let Some(cached) = cache_key.as_deref().and_then(|key| self.inner.inbound.cache.get(key)) {
            return Ok(cached);
        }
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
                        let outcome = link.request(self.outbound(&link, method, params, options, token)).await;
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
                        let value: Value = serde_json::from_str(raw.get())
                            .map_err(|e| ClientError::Protocol(format!("{method} result: {e}")))?;
                        if let Some(key) = cache_key.clone() {
                            self.inner.inbound.cache.put(key, method, params, &value);
                        }
                        return Ok(value);
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
                let pause = match error {
                    ClientError::SessionExpired => None,
                    ref e => Some(pause_before_retry(&backoff, failures, e.retry_after())),
                };
                *lock(&last) = Some(error);
                if let Some(pause) = pause {
                    tokio::time::sleep(pause).await;
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_retry_waits_for_the_backoff_or_what_the_server_asked_whichever_is_longer_within_a_cap() {
        let backoff = crate::options::Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
            max_attempts: 5,
        };
        let plain = pause_before_retry(&backoff, 1, None);
        assert!(plain >= Duration::from_millis(50) && plain <= Duration::from_millis(100));
        assert_eq!(
            pause_before_retry(&backoff, 1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            pause_before_retry(&backoff, 1, Some(Duration::from_secs(3600))),
            RETRY_AFTER_CAP
        );
        assert!(pause_before_retry(&backoff, 10, Some(Duration::from_millis(1))) <= Duration::from_secs(1));
        let overloaded = ClientError::Remote(
            toolport_protocol::ErrorObject::new(ErrorCode::OVERLOADED, "busy").with_data(json!({"retryAfterMs": 1500})),
        );
        assert_eq!(overloaded.retry_after(), Some(Duration::from_millis(1500)));
    }
}
