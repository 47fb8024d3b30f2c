//! The way of one request: which era it speaks, what it may call, and how its
//! result is shaped for that era.
//!
//! Era first, then method (`basic/versioning`): a request whose `_meta` names
//! a 2026-07-28 protocol version (or whose method exists only there) is served
//! statelessly; anything else belongs to the handshake of its connection or
//! HTTP session. Both can be served side by side on one endpoint.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation};
use toolport_protocol::jsonrpc::{Request, RequestId};
use toolport_protocol::lifecycle::{self, DiscoverResult, InitializeRequestParams, InitializeResult};
use toolport_protocol::logging::{self, LoggingLevel, SetLevelRequestParams};
use toolport_protocol::meta::{Meta, RequestMeta, keys};
use toolport_protocol::progress::ProgressToken;
use toolport_protocol::resources::{self, ReadResourceRequestParams};
use toolport_protocol::result::{CacheScope, EmptyResult, McpResult, ResultType};
use toolport_protocol::{Era, ErrorCode, ErrorObject, ProtocolVersion, completion, prompts, subscriptions, tools};
use toolport_rpc::PeerChannel;
use tracing::Instrument;

use crate::admission::{Admitted, TransportFacts, Visibility, is_stateless_only};
use crate::context::Principal;
use crate::metrics::{InFlight, MethodMetrics, count_refusal};
use crate::server::Server;
use crate::session::{Negotiated, Session};

/// Where a request came from and how to talk back to its sender.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The handshake-era session of the connection (unused by 2026-07-28 requests).
    pub session: Arc<Session>,
    /// Notifications (and handshake-era requests) back to the client.
    pub channel: Arc<dyn PeerChannel>,
    /// Fires when the client cancels or disconnects.
    pub cancel: CancellationToken,
    /// The authenticated caller, if any.
    pub principal: Option<Principal>,
    /// The handshake-era HTTP session id, for the audit stream.
    pub session_id: Option<String>,
}

/// Everything a method handler needs to know about its request.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) version: ProtocolVersion,
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) meta: Arc<Meta>,
    pub(crate) call: CallContext,
    /// Who lists are trimmed for, when an authorizer decides.
    pub(crate) visibility: Option<Visibility>,
    /// When the server took the request: its durations, and a tool's
    /// deadline when no gate made it wait, count from here.
    pub(crate) started: std::time::Instant,
}

impl Scope {
    pub(crate) fn stateless(&self) -> bool {
        self.version.era() == Era::Stateless
    }
}

/// A handshake-era request answered on the spot, or on its way to `route`.
enum Routed {
    Answered(Box<RawValue>),
    Scope(Box<Scope>),
}

/// Methods 2026-07-28 removed; a modern request for them is "not found".
const HANDSHAKE_ONLY: &[&str] = &[
    lifecycle::INITIALIZE,
    lifecycle::PING,
    logging::SET_LEVEL,
    resources::SUBSCRIBE,
    resources::UNSUBSCRIBE,
];

/// The era of a notification, read from its `_meta` and method. Requests
/// are read once, by [`Server::admit`]; notifications carry no answer and
/// only need telling apart.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestEra {
    /// A 2026-07-28 message with this version string.
    Stateless(String),
    /// A handshake-era message.
    Handshake,
}

/// Reads the era of a notification from its `_meta` and method.
pub fn request_era(method: &str, params: Option<&Value>) -> RequestEra {
    let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
    match meta.and_then(|m| m.get(keys::PROTOCOL_VERSION)) {
        Some(v) => RequestEra::Stateless(v.as_str().unwrap_or_default().to_owned()),
        None if is_stateless_only(method) => RequestEra::Stateless(String::new()),
        None if meta
            .is_some_and(|m| m.contains_key(keys::CLIENT_CAPABILITIES) || m.contains_key(keys::CLIENT_INFO)) =>
        {
            RequestEra::Stateless(String::new())
        }
        None => RequestEra::Handshake,
    }
}

impl Server {
    /// Admits and answers one request that came with nothing but its body
    /// (stdio, in-process callers). Every failure is a JSON-RPC error
    /// object; a tool's own failure is an `isError` result inside `Ok`.
    pub async fn handle(&self, request: Request, call: CallContext) -> Result<Box<RawValue>, ErrorObject> {
        let admitted = self.admit(request, &TransportFacts::default());
        match admitted {
            Ok(admitted) => self.answer(admitted, call).await,
            Err(refusal) => Err(refusal.error()),
        }
    }

    /// Answers an admitted request, inside its tracing span, counted and
    /// timed for the metrics.
    pub async fn answer(&self, admitted: Admitted, call: CallContext) -> Result<Box<RawValue>, ErrorObject> {
        let method = admitted.label;
        let span = tracing::debug_span!(
            "mcp.request",
            method = %admitted.method,
            request_id = %admitted.id,
            session = call.session_id.as_deref().unwrap_or(""),
            tool = tracing::field::Empty,
            trace_id = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        crate::otel::adopt_parent(&span, &admitted.meta.other);
        let started = admitted.started;
        let handles = self.inner.method_metrics.get_or_init(MethodMetrics::all);
        // Counted out however the request ends, also when its future is
        // dropped (a client that closed its connection).
        let _in_flight = InFlight::enter(&handles.in_flight);
        // A handler that panics (a resource, a prompt, a completion, an
        // extension, a policy) answers -32603; tools are caught closer, in
        // `ToolEntry::call`, so that every way of running one is covered.
        let site = panic_site(method);
        let outcome = toolport_rpc::panic::contain(site, self.answer_in_era(admitted, call).instrument(span))
            .await
            .unwrap_or_else(|panicked| Err(panicked.error()));
        let of_method = handles.of(method);
        match &outcome {
            Ok(_) => of_method.ok.increment(1),
            Err(e) => count_refusal(method, e.code),
        }
        of_method.duration.record(started.elapsed().as_secs_f64());
        outcome
    }

    async fn answer_in_era(&self, mut admitted: Admitted, call: CallContext) -> Result<Box<RawValue>, ErrorObject> {
        let params = std::mem::take(&mut admitted.params);
        let scope = match admitted.stateless {
            Some(version) => stateless_scope(admitted, version, call),
            None => match self.handshake_scope(admitted, &params, call)? {
                Routed::Answered(result) => return Ok(result),
                Routed::Scope(scope) => *scope,
            },
        };
        // One await, whichever the era: keeps this future (and every
        // request's allocation) small.
        self.route(scope, params).await
    }

    /// The -32022 error for a version this server does not serve statelessly.
    pub fn unsupported_version(&self, requested: &str) -> ErrorObject {
        let supported: Vec<&str> = ProtocolVersion::supported_in(Era::Stateless)
            .filter(|v| self.supports(*v))
            .map(ProtocolVersion::as_str)
            .collect();
        ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version {requested:?}; this server supports {}",
                supported.join(", ")
            ),
        )
        .with_data(json!({ "supported": supported, "requested": requested }))
    }

    /// A handshake-era request: answered here (the session's own methods),
    /// or turned into a scope for the methods both eras share.
    fn handshake_scope(
        &self,
        admitted: Admitted,
        params: &Map<String, Value>,
        call: CallContext,
    ) -> Result<Routed, ErrorObject> {
        let Admitted {
            id,
            method,
            meta,
            visibility,
            started,
            ..
        } = admitted;
        match method.as_str() {
            lifecycle::INITIALIZE => return self.initialize(params.clone(), &call.session).map(Routed::Answered),
            lifecycle::PING => return encode(&EmptyResult::default()).map(Routed::Answered),
            _ => {}
        }
        let Some((version, client_capabilities, client_info)) = call.session.client() else {
            return Err(ErrorObject::invalid_request(format!(
                "{method} before initialize: send `initialize` first, or use protocol version 2026-07-28 with its request _meta"
            )));
        };
        match method.as_str() {
            logging::SET_LEVEL => {
                let p: SetLevelRequestParams = parse(params.clone())?;
                call.session.set_log_level(p.level);
                return encode(&EmptyResult::default()).map(Routed::Answered);
            }
            resources::SUBSCRIBE | resources::UNSUBSCRIBE => {
                let p: ReadResourceRequestParams = parse(params.clone())?;
                if method == resources::SUBSCRIBE {
                    call.session.subscribe(&p.uri);
                } else {
                    call.session.unsubscribe(&p.uri);
                }
                return encode(&EmptyResult::default()).map(Routed::Answered);
            }
            _ => {}
        }
        let scope = Scope {
            id,
            method,
            version,
            client_capabilities,
            client_info: Some(client_info),
            progress_token: meta.progress_token,
            // Without logging/setLevel every level is sent, as the reference
            // servers do; the client filters with setLevel.
            log_level: Some(call.session.log_level().unwrap_or(LoggingLevel::Debug)),
            meta: Arc::new(meta.other),
            call,
            visibility,
            started,
        };
        Ok(Routed::Scope(Box::new(scope)))
    }

    fn initialize(&self, params: Map<String, Value>, session: &Session) -> Result<Box<RawValue>, ErrorObject> {
        let p: InitializeRequestParams = parse(params)?;
        // The client's version if we speak it in the handshake era, else our
        // newest handshake version; the client decides whether it can use it.
        let version = p
            .protocol_version
            .parse::<ProtocolVersion>()
            .ok()
            .filter(|v| v.era() == Era::Handshake && self.supports(*v))
            .or_else(|| ProtocolVersion::supported_in(Era::Handshake).find(|v| self.supports(*v)))
            .ok_or_else(|| {
                ErrorObject::invalid_request("this server does not speak any handshake-era protocol version")
            })?;
        let negotiated = Negotiated {
            version,
            client_capabilities: p.capabilities,
            client_info: p.client_info,
        };
        if !session.set_negotiated(negotiated) {
            return Err(ErrorObject::invalid_request(
                "initialize was already sent on this connection",
            ));
        }
        let mut capabilities = self.capabilities();
        if version >= ProtocolVersion::V2025_11_25 {
            capabilities.tasks = self.tasks_capability();
        }
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities,
            server_info: self.inner.info.clone(),
            instructions: self.inner.instructions.clone(),
            result_type: None,
            meta: None,
        };
        encode(&result)
    }

    async fn route(&self, scope: Scope, params: Map<String, Value>) -> Result<Box<RawValue>, ErrorObject> {
        match scope.method.as_str() {
            lifecycle::DISCOVER => {
                let result = DiscoverResult {
                    supported_versions: ProtocolVersion::supported_in(Era::Stateless)
                        .filter(|v| self.supports(*v))
                        .map(|v| v.as_str().to_owned())
                        .collect(),
                    capabilities: self.capabilities(),
                    instructions: self.inner.instructions.clone(),
                    result_type: None,
                    ttl_ms: None,
                    cache_scope: None,
                    meta: None,
                };
                self.finish(result, &scope)
            }
            tools::LIST => self.list_tools(&scope, params),
            tools::CALL => self.call_tool(&scope, params).await,
            resources::LIST => self.list_resources(&scope, params),
            resources::TEMPLATES_LIST => self.list_templates(&scope, params),
            resources::READ => self.read_resource(&scope, params).await,
            prompts::LIST => self.list_prompts(&scope, params),
            prompts::GET => self.get_prompt(&scope, params).await,
            completion::COMPLETE => self.complete(&scope, params),
            subscriptions::LISTEN if scope.stateless() => self.listen(&scope, params).await,
            m if scope.stateless() && HANDSHAKE_ONLY.contains(&m) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {m} does not exist in protocol version 2026-07-28"),
            )),
            m => match self.inner.extensions.method(m) {
                Some(handler) => self.call_extension(handler.clone(), &scope, params).await,
                None => Err(ErrorObject::method_not_found(m)),
            },
        }
    }

    /// Shapes a result for the request's era: 2026-07-28 results carry
    /// `resultType`, the server's identity in `_meta`, and cache hints.
    pub(crate) fn finish<R: McpResult + Serialize>(
        &self,
        mut result: R,
        scope: &Scope,
    ) -> Result<Box<RawValue>, ErrorObject> {
        if scope.stateless() {
            result.result_type_mut().get_or_insert(ResultType::Complete);
            let hints = if scope.method == resources::READ {
                self.inner.options.read_cache
            } else {
                self.inner.options.list_cache
            };
            if let Some((ttl, cache_scope)) = result.cache_hints_mut() {
                ttl.get_or_insert(hints.ttl_ms);
                cache_scope.get_or_insert(hints.scope);
                // What a caller may see depends on who it is: a shared cache
                // must not hand one caller's list to another.
                if scope.visibility.is_some() && is_list(&scope.method) {
                    *cache_scope = Some(CacheScope::Private);
                }
            }
            match result.meta_mut() {
                // The usual case: `_meta` is only the server's identity,
                // written from its pre-serialized form.
                None => {
                    return encode(&WithMeta {
                        result: &result,
                        meta: &self.inner.info_meta_raw,
                    });
                }
                Some(meta) => {
                    meta.insert(keys::SERVER_INFO.to_owned(), self.inner.info_value.clone());
                }
            }
        }
        encode(&result)
    }
}

/// The `site` label of a panic in a request of `method`.
fn panic_site(method: &str) -> &'static str {
    match method {
        tools::CALL => "tool",
        resources::READ => "resource",
        prompts::GET => "prompt",
        completion::COMPLETE => "completion",
        _ => "request",
    }
}

/// Whether `method` answers with a list an authorizer trims.
fn is_list(method: &str) -> bool {
    matches!(
        method,
        tools::LIST | prompts::LIST | resources::LIST | resources::TEMPLATES_LIST
    )
}

/// A result and the `_meta` it lacks, serialized as one object.
#[derive(Serialize)]
struct WithMeta<'a, R> {
    #[serde(flatten)]
    result: &'a R,
    #[serde(rename = "_meta")]
    meta: &'a RawValue,
}

/// The scope of an admitted 2026-07-28 request: everything was checked
/// when it was admitted.
fn stateless_scope(admitted: Admitted, version: ProtocolVersion, call: CallContext) -> Scope {
    let Admitted {
        id,
        method,
        meta,
        visibility,
        started,
        ..
    } = admitted;
    let RequestMeta {
        progress_token,
        client_capabilities,
        client_info,
        log_level,
        other,
        ..
    } = meta;
    Scope {
        id,
        method,
        version,
        client_capabilities: Arc::new(client_capabilities.unwrap_or_default()),
        client_info: client_info.map(Arc::new),
        progress_token,
        // 2026-07-28: no log messages unless this request asked for them.
        log_level,
        meta: Arc::new(other),
        call,
        visibility,
        started,
    }
}

/// Reads typed params; a mismatch is -32602 with serde's reason.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(params: Map<String, Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(Value::Object(params)).map_err(ErrorObject::invalid_params)
}

pub(crate) fn encode<T: Serialize>(result: &T) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(result).map_err(ErrorObject::internal)
}
