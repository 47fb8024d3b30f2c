//! What a handler knows about its request, and how it talks back.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use toolport_protocol::capabilities::{ClientCapabilities, ElicitationCapability, Implementation, RootsCapability};
use toolport_protocol::elicitation::{ElicitRequestParams, ElicitResult};
use toolport_protocol::jsonrpc::{Notification, RequestId};
use toolport_protocol::logging::{self, LoggingLevel, LoggingMessageNotificationParams};
use toolport_protocol::meta::Meta;
use toolport_protocol::mrtr::{InputRequest, InputRequests};
use toolport_protocol::progress::{PROGRESS, ProgressNotificationParams, ProgressToken};
use toolport_protocol::roots::ListRootsResult;
use toolport_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use toolport_protocol::{Era, ErrorObject, ProtocolVersion};
use toolport_rpc::{PeerChannel, RpcError};

use crate::error::ToolError;
use crate::input::InputRequired;
use crate::task_state::{Detached, TaskLink};

/// Who is calling, once authentication has established it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Principal {
    /// The token's subject.
    pub subject: String,
    /// The OAuth client the token was issued to.
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
}

/// How long a handshake-era request to the client (elicitation, sampling,
/// roots) may take: a person may be answering it.
pub const INPUT_TIMEOUT: Duration = Duration::from_secs(600);

/// The context a tool, resource or prompt handler gets. Cheap to clone.
///
/// ```
/// use toolport_server::{RequestContext, ToolError};
///
/// async fn long_job(cx: RequestContext, steps: u32) -> Result<String, ToolError> {
///     for step in 0..steps {
///         if cx.is_cancelled() {
///             return Err(ToolError::Cancelled);
///         }
///         cx.progress(step as f64, Some(steps as f64), None).await;
///     }
///     Ok("done".into())
/// }
/// ```
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) id: RequestId,
    pub(crate) version: ProtocolVersion,
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) principal: Option<Principal>,
    pub(crate) cancel: CancellationToken,
    pub(crate) progress_token: Option<ProgressToken>,
    /// Lowest level sent; `None` sends nothing (2026-07-28 without `logLevel`).
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) channel: Arc<dyn PeerChannel>,
    /// 2026-07-28: answers available to this run (earlier rounds and this retry).
    pub(crate) responses: BTreeMap<String, Value>,
    /// 2026-07-28: the handler's own state from `requestState`.
    pub(crate) state: Option<Value>,
    /// Every `_meta` key the protocol does not define (trace context, idempotency keys...).
    pub(crate) meta: Arc<Meta>,
    /// The task this handler runs as, if any.
    pub(crate) task: Option<Arc<TaskLink>>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.inner.id)
            .field("version", &self.inner.version)
            .field("principal", &self.inner.principal)
            .finish_non_exhaustive()
    }
}

impl RequestContext {
    pub(crate) fn new(inner: ContextInner) -> Self {
        RequestContext { inner: Arc::new(inner) }
    }

    pub(crate) fn responses(&self) -> &BTreeMap<String, Value> {
        &self.inner.responses
    }

    /// This context, for a handler running as (or about to become) a task:
    /// the task's cancellation replaces the request's.
    pub(crate) fn in_task(&self, link: Arc<TaskLink>) -> RequestContext {
        let inner = &self.inner;
        RequestContext::new(ContextInner {
            id: inner.id.clone(),
            version: inner.version,
            client_capabilities: inner.client_capabilities.clone(),
            client_info: inner.client_info.clone(),
            principal: inner.principal.clone(),
            cancel: link.running.cancel.clone(),
            progress_token: inner.progress_token.clone(),
            log_level: inner.log_level,
            channel: inner.channel.clone(),
            responses: inner.responses.clone(),
            state: inner.state.clone(),
            meta: inner.meta.clone(),
            task: Some(link),
        })
    }

    /// The context of a task run again after its process died: no request,
    /// no client to notify.
    pub(crate) fn detached(version: ProtocolVersion, principal: Option<Principal>, link: Arc<TaskLink>) -> Self {
        RequestContext::new(ContextInner {
            id: toolport_protocol::jsonrpc::RequestId::Number(0),
            version,
            client_capabilities: Arc::default(),
            client_info: None,
            principal,
            cancel: link.running.cancel.clone(),
            progress_token: None,
            log_level: None,
            channel: Arc::new(Detached),
            responses: BTreeMap::new(),
            state: None,
            meta: Arc::default(),
            task: Some(link),
        })
    }

    /// Where notifications and handshake-era requests to the client go.
    pub(crate) fn channel(&self) -> &Arc<dyn PeerChannel> {
        &self.inner.channel
    }

    /// The id of the task this handler runs as; `None` for a plain call.
    pub fn task_id(&self) -> Option<String> {
        self.inner.task.as_ref()?.task_id().map(|id| id.to_string())
    }

    /// For a tool built with
    /// [`input_before_task`](crate::ToolEntry::input_before_task): its
    /// questions are answered, so the request is answered with the task and
    /// the rest of the handler runs in the background. A no-op for a plain
    /// call or a task that exists already.
    pub async fn start_task(&self) -> Result<(), ToolError> {
        match &self.inner.task {
            Some(link) => link.start().await,
            None => Ok(()),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The protocol version of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The client's declared capabilities.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.client_capabilities
    }

    /// The client's name and version, when it said.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.client_info.as_deref()
    }

    /// The authenticated caller; `None` without authentication.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// `_meta` keys of the request that MCP itself does not define.
    pub fn meta(&self) -> &Meta {
        &self.inner.meta
    }

    /// Fires when the client cancels or goes away.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the request is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// Reports progress, if the client asked for it with a progress token.
    /// Inside a task it also becomes the task's status message, which
    /// `tasks/get` shows.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(link) = &self.inner.task {
            let shown = match (&message, total) {
                (Some(m), Some(t)) => format!("{m} ({progress}/{t})"),
                (Some(m), None) => m.clone(),
                (None, Some(t)) => format!("{progress}/{t}"),
                (None, None) => progress.to_string(),
            };
            link.progress(shown).await;
        }
        let Some(token) = &self.inner.progress_token else {
            return;
        };
        let params = ProgressNotificationParams {
            progress_token: token.clone(),
            progress,
            total,
            message,
            meta: None,
        };
        self.notify(PROGRESS, &params).await;
    }

    /// Sends a log message to the client, if it asked for this level or lower.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if self.inner.log_level.is_none_or(|min| level < min) {
            return;
        }
        let params = LoggingMessageNotificationParams {
            level,
            logger: logger.map(str::to_owned),
            data: data.into(),
            meta: None,
        };
        self.notify(logging::MESSAGE, &params).await;
    }

    async fn notify(&self, method: &str, params: &impl serde::Serialize) {
        let note = Notification::new(method, serde_json::to_value(params).ok());
        if let Err(e) = self.inner.channel.notify(note).await {
            tracing::debug!(error = %e, method, "notification not delivered");
        }
    }

    /// The handler's own state from a previous round (2026-07-28; see
    /// [`InputRequired::with_state`]).
    pub fn request_state<T: DeserializeOwned>(&self) -> Option<T> {
        self.inner.state.clone().and_then(|s| serde_json::from_value(s).ok())
    }

    /// Asks the user through a form (elicitation). `key` names this question;
    /// it must be the same on every run of the handler.
    pub async fn elicit(&self, key: &str, params: ElicitRequestParams) -> Result<ElicitResult, ToolError> {
        let answer = self.input_one(key, InputRequest::Elicit(params)).await?;
        parse_answer(key, answer)
    }

    /// Asks the client's model for a message (sampling).
    pub async fn sample(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ToolError> {
        let answer = self.input_one(key, InputRequest::Sample(params)).await?;
        parse_answer(key, answer)
    }

    /// Asks the client for its roots.
    pub async fn roots(&self, key: &str) -> Result<ListRootsResult, ToolError> {
        let answer = self.input_one(key, InputRequest::ListRoots(None)).await?;
        parse_answer(key, answer)
    }

    async fn input_one(&self, key: &str, request: InputRequest) -> Result<Value, ToolError> {
        let mut answers = self.input(InputRequests::from([(key.to_owned(), request)])).await?;
        Ok(answers.remove(key).unwrap_or(Value::Null))
    }

    /// Asks for several inputs at once; returns every answer by key, or stops
    /// the handler until the client has supplied all of them.
    pub async fn input(&self, requests: InputRequests) -> Result<BTreeMap<String, Value>, ToolError> {
        let missing_capability = required_capabilities(&requests, &self.inner.client_capabilities);
        if let Some(link) = self.inner.task.as_ref().filter(|l| l.task_id().is_some()) {
            // Inside a task the answers come through the task: tasks/update,
            // or a 2025-11-25 tasks/result stream. A resumed task has no
            // declared capabilities to check.
            if let Some(required) = missing_capability.filter(|_| !link.resumed) {
                return Err(ToolError::MissingCapability(Box::new(required)));
            }
            return link.input(requests, &self.inner.cancel).await;
        }
        match self.inner.version.era() {
            Era::Stateless => {
                let mut answers = BTreeMap::new();
                let mut missing = InputRequests::new();
                for (key, request) in requests {
                    match self.inner.responses.get(&key) {
                        Some(answer) => {
                            answers.insert(key, answer.clone());
                        }
                        None => {
                            missing.insert(key, request);
                        }
                    }
                }
                if missing.is_empty() {
                    return Ok(answers);
                }
                if let Some(required) = required_capabilities(&missing, &self.inner.client_capabilities) {
                    return Err(ToolError::MissingCapability(Box::new(required)));
                }
                Err(ToolError::InputRequired(Box::new(InputRequired::new(missing))))
            }
            Era::Handshake => {
                if !self.inner.channel.can_request() {
                    let asked: Vec<&str> = requests.values().map(InputRequest::method).collect();
                    return Err(ToolError::Failed(format!(
                        "This server serves handshake-era clients without sessions, so it cannot send them requests \
                         ({}): nothing would carry the client's answer back. Use protocol version 2026-07-28, \
                         where a request asks for input in its result, or a server with sessions.",
                        asked.join(", ")
                    )));
                }
                if let Some(required) = missing_capability {
                    return Err(ToolError::MissingCapability(Box::new(required)));
                }
                let mut answers = BTreeMap::new();
                for (key, request) in requests {
                    let answer = tokio::select! {
                        answer = self.inner.channel.request(request.method().to_owned(), request.params(), INPUT_TIMEOUT) => answer,
                        _ = self.inner.cancel.cancelled() => return Err(ToolError::Cancelled),
                    };
                    let answer = answer.map_err(|e| match e {
                        RpcError::Remote(error) => ToolError::Failed(format!(
                            "the client refused the {} request: {}",
                            request.method(),
                            error.message
                        )),
                        other => ToolError::Failed(format!("no answer to the {} request: {other}", request.method())),
                    })?;
                    answers.insert(key, serde_json::from_str(answer.get()).unwrap_or(Value::Null));
                }
                Ok(answers)
            }
        }
    }
}

fn parse_answer<T: DeserializeOwned>(key: &str, answer: Value) -> Result<T, ToolError> {
    serde_json::from_value(answer).map_err(|e| {
        ToolError::Protocol(ErrorObject::invalid_params(format!(
            "inputResponses[{key:?}] is not the expected answer: {e}"
        )))
    })
}

/// The capabilities `requests` need that the client did not declare.
fn required_capabilities(requests: &InputRequests, declared: &ClientCapabilities) -> Option<ClientCapabilities> {
    let mut required = ClientCapabilities::default();
    let mut any = false;
    for request in requests.values() {
        match request {
            InputRequest::Elicit(p) => {
                let url = p.mode.as_deref() == Some("url");
                let ok = declared.elicitation.as_ref().is_some_and(|e| {
                    if url {
                        e.url.is_some()
                    } else {
                        e.form.is_some() || e.url.is_none()
                    }
                });
                if !ok {
                    let mut cap = ElicitationCapability::default();
                    if url {
                        cap.url = Some(Map::new());
                    } else {
                        cap.form = Some(Map::new());
                    }
                    required.elicitation = Some(cap);
                    any = true;
                }
            }
            InputRequest::Sample(_) if !declared.supports_sampling() => {
                required.sampling = Some(Map::new());
                any = true;
            }
            InputRequest::ListRoots(_) if !declared.supports_roots() => {
                required.roots = Some(RootsCapability::default());
                any = true;
            }
            _ => {}
        }
    }
    any.then_some(required)
}
