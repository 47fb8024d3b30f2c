//! Admission: the one call a transport makes with a decoded request.
//!
//! The transport hands over the request and what it knows besides the body
//! ([`TransportFacts`]: HTTP's routing headers, the authenticated caller and
//! the authorization layer). The server decides the era once, reads `_meta`
//! once, checks the version, the headers against the body and the tool's
//! parameter headers once, authorizes once, and either refuses
//! ([`Refusal`], which the transport maps to a status) or admits the request
//! ([`Admitted`], which the transport answers with [`Server::answer`] once it
//! has the session the request belongs to).
//!
//! The checks run in the order that gives each failure its own error:
//! malformed params or `_meta` (-32602), missing 2026-07-28 `_meta` fields
//! (-32602), headers that differ from the body (-32020), an unsupported
//! version (-32022), parameter headers (-32020), then authorization.

mod authorize;
pub mod headers;

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use toolport_protocol::jsonrpc::{Request, RequestId};
use toolport_protocol::meta::{RequestMeta, keys};
use toolport_protocol::{Era, ErrorCode, ErrorObject, ProtocolVersion, lifecycle, subscriptions, tools};

pub use self::authorize::{Authorizer, Forbidden, Target, TargetKind, target_of};
pub use self::headers::RoutingHeaders;
use crate::audit::{AuditRecord, audit_id, now_rfc3339, trace_id};
use crate::context::Principal;
use crate::server::Server;

/// What a transport knows of a request besides its body. Stdio knows
/// nothing more: `TransportFacts::default()`.
#[derive(Clone, Copy, Default)]
pub struct TransportFacts<'a> {
    /// Streamable HTTP's request headers.
    pub headers: Option<&'a dyn RoutingHeaders>,
    /// The authenticated caller.
    pub principal: Option<&'a Principal>,
    /// Who decides what the caller may do; asked only with a principal.
    pub authorizer: Option<&'a Arc<dyn Authorizer>>,
}

impl std::fmt::Debug for TransportFacts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportFacts")
            .field("headers", &self.headers.is_some())
            .field("principal", &self.principal)
            .field("authorizer", &self.authorizer)
            .finish()
    }
}

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Malformed, or not servable in its era: a JSON-RPC error. `era` says
    /// which era's rules the transport answers it by (2026-07-28 errors
    /// carry HTTP statuses; handshake-era ones are 200).
    Invalid {
        /// The error.
        error: ErrorObject,
        /// The era the request was read as.
        era: Era,
    },
    /// The caller may not make this request (HTTP 403 with the challenge).
    Forbidden(Forbidden),
}

impl Refusal {
    /// The JSON-RPC error code it answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Refusal::Invalid { error, .. } => error.code,
            Refusal::Forbidden(_) => ErrorCode::INVALID_REQUEST,
        }
    }

    /// The JSON-RPC error to answer with.
    pub fn error(&self) -> ErrorObject {
        match self {
            Refusal::Invalid { error, .. } => error.clone(),
            Refusal::Forbidden(forbidden) => ErrorObject::invalid_request(forbidden.message.clone()),
        }
    }
}

/// Lets `admit`'s body use `?` on the era's errors.
struct InEra(Era);

impl InEra {
    fn refuse(&self, error: ErrorObject) -> Refusal {
        Refusal::Invalid { error, era: self.0 }
    }
}

/// A request the server has read and checked, ready to be answered.
#[derive(Debug)]
pub struct Admitted {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    /// The params without `_meta`.
    pub(crate) params: Map<String, Value>,
    pub(crate) meta: RequestMeta,
    /// The 2026-07-28 version, checked; `None` for the handshake era.
    pub(crate) stateless: Option<ProtocolVersion>,
    /// Who lists are trimmed for, when an authorizer decides.
    pub(crate) visibility: Option<Visibility>,
    pub(crate) started: Instant,
    /// The method as a metrics label, looked up once.
    pub(crate) label: &'static str,
}

/// The caller and the authorizer that decides what it may see in lists.
#[derive(Debug, Clone)]
pub(crate) struct Visibility {
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) principal: Principal,
}

impl Admitted {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Whether the request speaks 2026-07-28 (no session; errors carry HTTP
    /// statuses), as opposed to the handshake era.
    pub fn is_stateless(&self) -> bool {
        self.stateless.is_some()
    }
}

/// The W3C `traceparent` and `tracestate` HTTP headers, honoured like the
/// same keys in `_meta` (which win when both are sent): a proxy or a client
/// that only sets headers still puts the call in its trace.
fn trace_context_from_headers(headers: &dyn RoutingHeaders, meta: &mut RequestMeta) {
    if meta.other.contains_key(keys::TRACEPARENT) {
        return;
    }
    let Ok(Some(parent)) = headers::text(headers, keys::TRACEPARENT) else {
        return;
    };
    meta.other
        .insert(keys::TRACEPARENT.to_owned(), Value::String(parent.to_owned()));
    if let Ok(Some(state)) = headers::text(headers, "tracestate") {
        meta.other
            .insert("tracestate".to_owned(), Value::String(state.to_owned()));
    }
}

/// Methods that exist only in 2026-07-28: their era needs no `_meta` to tell.
pub(crate) fn is_stateless_only(method: &str) -> bool {
    matches!(method, lifecycle::DISCOVER | subscriptions::LISTEN)
}

impl Server {
    /// Reads and checks a request once: its era, `_meta`, version, the
    /// transport's headers against the body, and authorization.
    pub fn admit(&self, request: Request, facts: &TransportFacts<'_>) -> Result<Admitted, Refusal> {
        let started = Instant::now();
        let label = crate::metrics::known_method(&request.method);
        let admitted = self.check(request, facts, started, label);
        if let Err(refusal) = &admitted {
            crate::metrics::count_refusal(label, refusal.code());
            let (outcome, code, message) = match refusal {
                Refusal::Invalid { error, .. } => ("refused", Some(error.code.0), error.message.clone()),
                Refusal::Forbidden(forbidden) => ("forbidden", None, forbidden.message.clone()),
            };
            self.inner
                .activity
                .record_refusal(label, facts.principal, outcome, code, message);
        }
        admitted
    }

    fn check(
        &self,
        request: Request,
        facts: &TransportFacts<'_>,
        started: Instant,
        label: &'static str,
    ) -> Result<Admitted, Refusal> {
        let Request { id, method, params } = request;
        let header_version = match facts.headers.map(|h| headers::text(h, headers::PROTOCOL_VERSION)) {
            Some(Err(error)) => {
                return Err(Refusal::Invalid {
                    error,
                    era: Era::Stateless,
                });
            }
            Some(Ok(version)) => version,
            None => None,
        };
        let header_stateless = header_version
            .and_then(|v| v.parse::<ProtocolVersion>().ok())
            .is_some_and(|v| v.era() == Era::Stateless);
        let guess = InEra(if header_stateless || is_stateless_only(&method) {
            Era::Stateless
        } else {
            Era::Handshake
        });
        let mut params = match params {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(guess.refuse(ErrorObject::invalid_params("params must be an object"))),
        };
        let mut meta = match params.remove("_meta") {
            None => RequestMeta::default(),
            Some(meta) => RequestMeta::from_value(meta).map_err(|e| guess.refuse(ErrorObject::invalid_params(e)))?,
        };
        if let Some(headers) = facts.headers {
            trace_context_from_headers(headers, &mut meta);
        }
        let stateless = if guess.0 == Era::Stateless || meta.is_stateless() {
            Some(self.check_stateless(&method, &params, &meta, facts)?)
        } else {
            None
        };
        let visibility = match (facts.principal, facts.authorizer) {
            (Some(principal), Some(authorizer)) => {
                if let Err(forbidden) = authorizer.authorize(principal, &method, target_of(&method, &params)) {
                    self.audit_forbidden(&id, &method, &params, &meta, principal);
                    return Err(Refusal::Forbidden(forbidden));
                }
                Some(Visibility {
                    authorizer: authorizer.clone(),
                    principal: principal.clone(),
                })
            }
            _ => None,
        };
        Ok(Admitted {
            id,
            method,
            params,
            meta,
            stateless,
            visibility,
            started,
            label,
        })
    }

    /// A `tools/call` refused for its scopes, in the audit stream beside the
    /// calls that ran: one stream for every decision about a tool.
    fn audit_forbidden(
        &self,
        id: &RequestId,
        method: &str,
        params: &Map<String, Value>,
        meta: &RequestMeta,
        principal: &Principal,
    ) {
        let Some(log) = &self.inner.audit else { return };
        if method != tools::CALL {
            return;
        }
        log.record(AuditRecord {
            time: now_rfc3339(),
            principal: Some(principal.subject.clone()),
            session: None,
            request_id: audit_id(id),
            tool: params.get("name").and_then(Value::as_str).unwrap_or("").to_owned(),
            arguments: params.get("arguments").cloned().unwrap_or(Value::Null),
            outcome: "forbidden".into(),
            duration_ms: 0,
            trace_id: trace_id(&meta.other),
        });
    }

    /// The checks of a 2026-07-28 request; its version when they pass.
    fn check_stateless(
        &self,
        method: &str,
        params: &Map<String, Value>,
        meta: &RequestMeta,
        facts: &TransportFacts<'_>,
    ) -> Result<ProtocolVersion, Refusal> {
        let era = InEra(Era::Stateless);
        let missing = |key: &str| {
            era.refuse(ErrorObject::invalid_params(format!(
                "_meta is missing {key} (required by protocol version 2026-07-28); handshake-era clients send `initialize` first"
            )))
        };
        let Some(requested) = meta.protocol_version.as_deref() else {
            return Err(missing(keys::PROTOCOL_VERSION));
        };
        if meta.client_capabilities.is_none() {
            return Err(missing(keys::CLIENT_CAPABILITIES));
        }
        if let Some(headers) = facts.headers {
            headers::check_stateless(headers, method, params, requested).map_err(|e| era.refuse(e))?;
        }
        let version = requested
            .parse::<ProtocolVersion>()
            .ok()
            .filter(|v| v.era() == Era::Stateless && self.supports(*v))
            .ok_or_else(|| era.refuse(self.unsupported_version(requested)))?;
        if method == tools::CALL
            && let Some(headers) = facts.headers
            && let Some(tool) = params
                .get("name")
                .and_then(Value::as_str)
                .and_then(|n| self.tools().get(n))
        {
            headers::check_params(headers, tool.header_params(), params.get("arguments")).map_err(|e| era.refuse(e))?;
        }
        Ok(version)
    }
}
