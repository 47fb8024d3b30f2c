//! An upstream's questions (elicitation, sampling, roots) sent to the right
//! caller, never to another one.
//!
//! - A question the client can tie to a call (asked on the call's HTTP
//!   answer stream, or as an `InputRequiredResult` of a 2026-07-28 upstream)
//!   goes to that call's [`CallInput`]: to the caller of that call.
//! - A question it cannot tie to a call (stdio; the GET stream) goes to the
//!   slot's [`SlotHandler`]: in `per_session` the slot serves one caller's
//!   session, so it goes to that session through one of its calls in flight;
//!   in the other modes the caller cannot be known and it is refused.
//!
//! [`Asker`] says how one caller is asked: a handshake-era caller by a
//! request on its session (`RequestContext::input`); a 2026-07-28 caller, who
//! has no session to ask on, through the parking of `park.rs`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolport_client::ClientHandler;
use toolport_client::handler::{self as client_handler, BoxFuture};
use toolport_protocol::capabilities::ClientCapabilities;
use toolport_protocol::elicitation::{ElicitRequestParams, ElicitResult};
use toolport_protocol::mrtr::{InputRequest, InputRequests};
use toolport_protocol::roots::ListRootsResult;
use toolport_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use toolport_protocol::{ErrorCode, ErrorObject};
use toolport_server::{RequestContext, ToolError};

use crate::config::{Share, UpstreamConfig};
use crate::park::Parking;

/// How one caller is asked.
#[derive(Debug, Clone)]
pub(crate) enum Asker {
    /// A handshake-era caller: a request on its session.
    Session(RequestContext),
    /// A 2026-07-28 caller: the question is handed to the parked call's
    /// owner, which answers the caller with `InputRequiredResult`.
    Parked(Arc<Parking>),
}

impl Asker {
    async fn ask(&self, upstream: &str, request: InputRequest) -> Result<Value, ErrorObject> {
        let method = request.method();
        match self {
            Asker::Parked(parking) => parking.ask(request).await,
            Asker::Session(cx) => {
                let asked = cx.input(InputRequests::from([("upstream".to_owned(), request)])).await;
                match asked {
                    Ok(mut answers) => Ok(answers.remove("upstream").unwrap_or(Value::Null)),
                    Err(ToolError::MissingCapability(_)) => Err(ErrorObject::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        format!("the client behind the gateway does not offer {method} (upstream {upstream})"),
                    )),
                    Err(e) => Err(ErrorObject::internal(format!(
                        "the client behind the gateway did not answer {method}: {e}"
                    ))),
                }
            }
        }
    }
}

fn typed<T: DeserializeOwned>(value: Result<Value, ErrorObject>) -> Result<T, ErrorObject> {
    serde_json::from_value(value?)
        .map_err(|e| ErrorObject::internal(format!("the client behind the gateway answered something else: {e}")))
}

/// What the gateway offers an upstream: everything, so the upstream asks;
/// whether the caller behind it can answer is decided per question.
fn offered() -> ClientCapabilities {
    client_handler::capabilities(true, true, true)
}

/// Answers the questions of one forwarded call, and takes the log messages
/// the upstream sent on its stream, for its caller.
#[derive(Debug)]
pub(crate) struct CallInput {
    upstream: String,
    asker: Asker,
    logs: tokio::sync::mpsc::UnboundedSender<crate::park::LogMessage>,
}

impl CallInput {
    pub(crate) fn new(
        upstream: &str,
        asker: Asker,
        logs: tokio::sync::mpsc::UnboundedSender<crate::park::LogMessage>,
    ) -> Self {
        CallInput {
            upstream: upstream.to_owned(),
            asker,
            logs,
        }
    }
}

impl ClientHandler for CallInput {
    fn capabilities(&self) -> ClientCapabilities {
        offered()
    }

    fn elicit(&self, request: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move { typed(self.asker.ask(&self.upstream, InputRequest::Elicit(request)).await) })
    }

    fn sample(&self, request: CreateMessageRequestParams) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async move { typed(self.asker.ask(&self.upstream, InputRequest::Sample(request)).await) })
    }

    fn roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        Box::pin(async move { typed(self.asker.ask(&self.upstream, InputRequest::ListRoots(None)).await) })
    }

    fn call_log(&self, message: &crate::park::LogMessage) -> bool {
        // The call is over when nobody drains them: the gateway's log, then.
        self.logs.send(message.clone()).is_ok()
    }
}

/// The callers of one slot's calls in flight, for the questions the client
/// cannot tie to a call.
#[derive(Debug)]
pub(crate) struct SlotInput {
    config: Arc<UpstreamConfig>,
    active: Mutex<BTreeMap<u64, Asker>>,
    next: AtomicU64,
}

impl SlotInput {
    pub(crate) fn new(config: Arc<UpstreamConfig>) -> Self {
        SlotInput {
            config,
            active: Mutex::default(),
            next: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Asker>> {
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a call in flight on the slot until the guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, asker: Asker) -> ActiveCall {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, asker);
        ActiveCall {
            input: self.clone(),
            id,
        }
    }

    /// Who a question no call claims goes to: in `per_session` the slot's
    /// one caller (its newest call in flight); otherwise nobody.
    fn asker(&self, method: &str) -> Result<Asker, ErrorObject> {
        let refuse = |why: &str| {
            tracing::warn!(target: "toolport::upstream", upstream = %self.config.name, %method, "refused a request from the upstream: {why}");
            Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("{method} refused by the gateway: {why}"),
            ))
        };
        if self.config.share != Share::PerSession {
            return refuse(
                "the upstream is shared, and this request names no call, so the caller it is for cannot be known (share = \"per_session\" routes it)",
            );
        }
        match self.lock().values().next_back().cloned() {
            Some(asker) => Ok(asker),
            None => refuse("no call of the session is in flight to ask through"),
        }
    }
}

/// A call in flight on a slot.
#[derive(Debug)]
pub(crate) struct ActiveCall {
    input: Arc<SlotInput>,
    id: u64,
}

impl Drop for ActiveCall {
    fn drop(&mut self) {
        self.input.lock().remove(&self.id);
    }
}

/// The slot's handler: questions no call claims.
#[derive(Debug, Clone)]
pub(crate) struct SlotHandler(pub(crate) Arc<SlotInput>);

impl SlotHandler {
    async fn ask(&self, request: InputRequest) -> Result<Value, ErrorObject> {
        let asker = self.0.asker(request.method())?;
        asker.ask(&self.0.config.name, request).await
    }
}

impl ClientHandler for SlotHandler {
    fn capabilities(&self) -> ClientCapabilities {
        offered()
    }

    fn elicit(&self, request: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move { typed(self.ask(InputRequest::Elicit(request)).await) })
    }

    fn sample(&self, request: CreateMessageRequestParams) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async move { typed(self.ask(InputRequest::Sample(request)).await) })
    }

    fn roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        Box::pin(async move { typed(self.ask(InputRequest::ListRoots(None)).await) })
    }
}
