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
use toolport_protocol::result::{EmptyResult, McpResult, ResultType};
use toolport_protocol::{Era, ErrorCode, ErrorObject, ProtocolVersion, completion, prompts, subscriptions, tools};
use toolport_rpc::PeerChannel;
use tracing::Instrument;

use crate::context::Principal;
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

/// How the era of a request was decided, for transports that must answer
/// some failures before the request reaches the server (HTTP status codes).
#[derive(Debug, Clone, PartialEq)]
pub enum RequestEra {
    /// A 2026-07-28 request with this version string.
    Stateless(String),
    /// A handshake-era request.
    Handshake,
}

/// Reads the era of a request from its `_meta` and method.
pub fn request_era(method: &str, params: Option<&Value>) -> RequestEra {
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(keys::PROTOCOL_VERSION));
    match version {
        Some(v) => RequestEra::Stateless(v.as_str().unwrap_or_default().to_owned()),
        None if is_stateless_only(method) => RequestEra::Stateless(String::new()),
        None => {
            let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
            if meta.is_some_and(|m| m.contains_key(keys::CLIENT_CAPABILITIES) || m.contains_key(keys::CLIENT_INFO)) {
                RequestEra::Stateless(String::new())
            } else {
                RequestEra::Handshake
            }
        }
    }
}

fn is_stateless_only(method: &str) -> bool {
    matches!(method, lifecycle::DISCOVER | subscriptions::LISTEN)
}

impl Server {
    /// Answers one request. Every failure is a JSON-RPC error object; a
    /// tool's own failure is an `isError` result inside `Ok`.
    pub async fn handle(&self, request: Request, call: CallContext) -> Result<Box<RawValue>, ErrorObject> {
        self.observed(request, call, false).await
    }

    /// Answers a request the transport already knows to be of the stateless
    /// era (HTTP: its `MCP-Protocol-Version` header says 2026-07-28), so a
    /// missing `_meta` is -32602 rather than a handshake-era request.
    pub async fn handle_stateless(&self, request: Request, call: CallContext) -> Result<Box<RawValue>, ErrorObject> {
        self.observed(request, call, true).await
    }

    /// One request inside its tracing span, counted and timed for the metrics.
    async fn observed(
        &self,
        request: Request,
        call: CallContext,
        stateless: bool,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let method = known_method(&request.method);
        let span = tracing::debug_span!(
            "mcp.request",
            method = %request.method,
            request_id = %request.id,
            session = call.session_id.as_deref().unwrap_or(""),
            tool = tracing::field::Empty,
            trace_id = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        crate::otel::adopt_parent(&span, request.params.as_ref());
        let started = std::time::Instant::now();
        let handles = self.inner.method_metrics.get_or_init(MethodMetrics::all);
        // Counted out however the request ends, also when its future is
        // dropped (a client that closed its connection).
        let _in_flight = InFlight::enter(&handles.in_flight);
        let outcome = self
            .handle_in_era(request, call, stateless, started)
            .instrument(span)
            .await;
        let of_method = handles.of(method);
        match &outcome {
            Ok(_) => of_method.ok.increment(1),
            Err(e) => {
                metrics::counter!("toolport_requests_total", "method" => method, "outcome" => error_label(e.code))
                    .increment(1)
            }
        }
        of_method.duration.record(started.elapsed().as_secs_f64());
        outcome
    }

    async fn handle_in_era(
        &self,
        request: Request,
        call: CallContext,
        stateless: bool,
        started: std::time::Instant,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let Request { id, method, params } = request;
        let mut params = match params {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(ErrorObject::invalid_params("params must be an object")),
        };
        let meta: RequestMeta = match params.remove("_meta") {
            None => RequestMeta::default(),
            Some(meta) => RequestMeta::from_value(meta).map_err(ErrorObject::invalid_params)?,
        };
        let scope = if stateless || meta.is_stateless() || is_stateless_only(&method) {
            self.stateless_scope(id, method, meta, call, started)?
        } else {
            match self.handshake_scope(id, method, &params, meta, call, started)? {
                Routed::Answered(result) => return Ok(result),
                Routed::Scope(scope) => *scope,
            }
        };
        // One await, whichever the era: keeps this future (and every
        // request's allocation) small.
        self.route(scope, params).await
    }

    fn stateless_scope(
        &self,
        id: RequestId,
        method: String,
        meta: RequestMeta,
        call: CallContext,
        started: std::time::Instant,
    ) -> Result<Scope, ErrorObject> {
        let RequestMeta {
            progress_token,
            protocol_version,
            client_capabilities,
            client_info,
            log_level,
            other,
        } = meta;
        let Some(requested) = protocol_version else {
            return Err(ErrorObject::invalid_params(format!(
                "_meta is missing {} (required by protocol version 2026-07-28); handshake-era clients send `initialize` first",
                keys::PROTOCOL_VERSION
            )));
        };
        let version = requested
            .parse::<ProtocolVersion>()
            .ok()
            .filter(|v| v.era() == Era::Stateless && self.supports(*v))
            .ok_or_else(|| self.unsupported_version(&requested))?;
        let Some(client_capabilities) = client_capabilities else {
            return Err(ErrorObject::invalid_params(format!(
                "_meta is missing {} (required by protocol version 2026-07-28)",
                keys::CLIENT_CAPABILITIES
            )));
        };
        Ok(Scope {
            id,
            method,
            version,
            client_capabilities: Arc::new(client_capabilities),
            client_info: client_info.map(Arc::new),
            progress_token,
            // 2026-07-28: no log messages unless this request asked for them.
            log_level,
            meta: Arc::new(other),
            call,
            started,
        })
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
        id: RequestId,
        method: String,
        params: &Map<String, Value>,
        meta: RequestMeta,
        call: CallContext,
        started: std::time::Instant,
    ) -> Result<Routed, ErrorObject> {
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
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: self.capabilities(),
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

/// A result and the `_meta` it lacks, serialized as one object.
#[derive(Serialize)]
struct WithMeta<'a, R> {
    #[serde(flatten)]
    result: &'a R,
    #[serde(rename = "_meta")]
    meta: &'a RawValue,
}

/// One request counted in `toolport_requests_in_flight` while it lives.
struct InFlight<'a>(&'a metrics::Gauge);

impl<'a> InFlight<'a> {
    fn enter(gauge: &'a metrics::Gauge) -> Self {
        gauge.increment(1.0);
        InFlight(gauge)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// The metric handles of every method, registered once: a request then
/// neither builds labels nor looks them up (errors, rarer, still do).
#[derive(Debug)]
pub(crate) struct MethodMetrics {
    in_flight: metrics::Gauge,
    by_method: Vec<(&'static str, OneMethod)>,
}

#[derive(Debug)]
struct OneMethod {
    ok: metrics::Counter,
    duration: metrics::Histogram,
}

impl MethodMetrics {
    fn all() -> Self {
        let one = |method: &'static str| OneMethod {
            ok: metrics::counter!("toolport_requests_total", "method" => method, "outcome" => "ok"),
            duration: metrics::histogram!("toolport_request_duration_seconds", "method" => method),
        };
        MethodMetrics {
            in_flight: metrics::gauge!("toolport_requests_in_flight"),
            by_method: CORE_METHODS
                .iter()
                .chain(["other"].iter())
                .map(|m| (*m, one(m)))
                .collect(),
        }
    }

    fn of(&self, method: &str) -> &OneMethod {
        let found = self.by_method.iter().find(|(m, _)| *m == method);
        &found
            .unwrap_or_else(|| self.by_method.last().expect("other is always there"))
            .1
    }
}

/// The methods of the core protocol, in both eras: extensions cannot redefine them.
pub(crate) const CORE_METHODS: &[&str] = &[
    lifecycle::INITIALIZE,
    lifecycle::PING,
    lifecycle::DISCOVER,
    logging::SET_LEVEL,
    tools::LIST,
    tools::CALL,
    resources::LIST,
    resources::TEMPLATES_LIST,
    resources::READ,
    resources::SUBSCRIBE,
    resources::UNSUBSCRIBE,
    prompts::LIST,
    prompts::GET,
    completion::COMPLETE,
    subscriptions::LISTEN,
];

/// The method as a metrics label: known methods by name, anything else as
/// `other`, so a client cannot grow the label set without bound.
fn known_method(method: &str) -> &'static str {
    CORE_METHODS.iter().copied().find(|m| *m == method).unwrap_or("other")
}

/// An error code as a metrics label, without allocating.
fn error_label(code: ErrorCode) -> &'static str {
    match code.0 {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32001 => "-32001",
        -32002 => "-32002",
        -32010 => "-32010",
        -32020 => "-32020",
        -32021 => "-32021",
        -32022 => "-32022",
        _ => "other",
    }
}

/// Reads typed params; a mismatch is -32602 with serde's reason.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(params: Map<String, Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(Value::Object(params)).map_err(ErrorObject::invalid_params)
}

pub(crate) fn encode<T: Serialize>(result: &T) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(result).map_err(ErrorObject::internal)
}
