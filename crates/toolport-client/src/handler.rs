//! Answering the server's questions: elicitation, sampling and roots.
//!
//! One handler serves both eras: in the handshake era the server sends
//! `elicitation/create`, `sampling/createMessage` or `roots/list` as requests
//! on the connection; in 2026-07-28 it answers with an `InputRequiredResult`
//! and the client retries with the handler's answers (MRTR). The handler
//! cannot tell the difference, and need not.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};
use toolport_protocol::ErrorObject;
use toolport_protocol::capabilities::{ClientCapabilities, ElicitationCapability, RootsCapability};
use toolport_protocol::content::{OneOrMany, Role, SamplingContent, TextContent};
use toolport_protocol::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};
use toolport_protocol::logging::LoggingMessageNotificationParams;
use toolport_protocol::mrtr::InputRequest;
use toolport_protocol::roots::{ListRootsResult, Root};
use toolport_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// A boxed future, so handlers can be trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the client can do when the server asks for input. Each method has a
/// default that refuses; a handler declares what it answers through
/// [`ClientHandler::capabilities`], and the server must not ask for more.
pub trait ClientHandler: Send + Sync + std::fmt::Debug + 'static {
    /// The capabilities this handler gives the client (`elicitation`,
    /// `sampling`, `roots`).
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    /// Asks the user (`elicitation/create`).
    fn elicit(&self, request: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        let _ = request;
        Box::pin(async { Err(unsupported("elicitation")) })
    }

    /// Asks the model (`sampling/createMessage`).
    fn sample(&self, request: CreateMessageRequestParams) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        let _ = request;
        Box::pin(async { Err(unsupported("sampling")) })
    }

    /// Lists the client's roots (`roots/list`).
    fn roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        Box::pin(async { Err(unsupported("roots")) })
    }

    /// A log message the server sent on the answer stream of the one call
    /// this handler answers for ([`CallOptions::input`](crate::CallOptions::input)):
    /// `true` if taken; otherwise (the default) it is a client event
    /// (`ClientEvent::Log`) like any other.
    fn call_log(&self, message: &LoggingMessageNotificationParams) -> bool {
        let _ = message;
        false
    }
}

fn unsupported(what: &str) -> ErrorObject {
    ErrorObject::method_not_found(&format!("this client does not offer {what}"))
}

/// A handler that answers nothing and declares no capability.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInput;

impl ClientHandler for NoInput {}

/// Capabilities for a handler that answers the given kinds of input.
pub fn capabilities(elicitation: bool, sampling: bool, roots: bool) -> ClientCapabilities {
    ClientCapabilities {
        elicitation: elicitation.then(ElicitationCapability::default),
        sampling: sampling.then(Map::new),
        roots: roots.then(RootsCapability::default),
        ..ClientCapabilities::default()
    }
}

/// Runs one input request through a handler and returns the answer as JSON,
/// as it goes into `inputResponses` or into a response to the server.
pub(crate) async fn answer(handler: &dyn ClientHandler, request: InputRequest) -> Result<Value, ErrorObject> {
    let caps = handler.capabilities();
    let value = match request {
        InputRequest::Elicit(params) if caps.elicitation.is_some() => {
            serde_json::to_value(handler.elicit(params).await?)
        }
        InputRequest::Sample(params) if caps.sampling.is_some() => serde_json::to_value(handler.sample(params).await?),
        InputRequest::ListRoots(_) if caps.roots.is_some() => serde_json::to_value(handler.roots().await?),
        other => return Err(unsupported(other.method())),
    };
    value.map_err(ErrorObject::internal)
}

/// The answer a form would give if the user accepted every default: the
/// `default` of each property of `requested_schema` (SEP-1034). Properties
/// without a default are left out.
///
/// ```
/// use toolport_client::handler::form_defaults;
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "John Doe"},
///     "age": {"type": "integer"}
/// }});
/// let content = form_defaults(schema.as_object().unwrap());
/// assert_eq!(serde_json::Value::Object(content), serde_json::json!({"name": "John Doe"}));
/// ```
pub fn form_defaults(requested_schema: &Map<String, Value>) -> Map<String, Value> {
    requested_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// An elicitation answer that accepts with the form's defaults.
pub fn accept_defaults(request: &ElicitRequestParams) -> ElicitResult {
    ElicitResult {
        action: ElicitAction::Accept,
        content: Some(request.requested_schema.as_ref().map(form_defaults).unwrap_or_default()),
        meta: None,
    }
}

/// A handler with fixed answers, for tests, demos and conformance runs: it
/// accepts every form with its defaults, answers sampling with a fixed text
/// from the assistant, and lists fixed roots.
#[derive(Debug, Clone, Default)]
pub struct Canned {
    /// What the "model" says.
    pub sample_text: String,
    /// The roots it lists.
    pub roots: Vec<Root>,
}

impl ClientHandler for Canned {
    fn capabilities(&self) -> ClientCapabilities {
        capabilities(true, true, true)
    }

    fn elicit(&self, request: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move { Ok(accept_defaults(&request)) })
    }

    fn sample(&self, _: CreateMessageRequestParams) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        let text = TextContent {
            text: self.sample_text.clone(),
            annotations: None,
            meta: None,
        };
        Box::pin(async move {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: OneOrMany::One(SamplingContent::Text(text)),
                model: "toolport-canned".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        })
    }

    fn roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        let roots = self.roots.clone();
        Box::pin(async move { Ok(ListRootsResult { roots, meta: None }) })
    }
}
