//! Pages and APIs served beside the MCP endpoint, on the same port and
//! behind the same doors (the web console and its admin API).
//!
//! A [`Mount`] claims paths. The transport checks Origin and Host first
//! (403), then, for a path the mount says needs it and when an
//! [`Authenticator`](crate::Authenticator) protects the endpoint, the
//! caller's token (401, exactly as for the MCP endpoint), reads a bounded
//! body (413), and hands the mount the request with the principal and a
//! [`LiveView`] of the sessions on this machine.

use std::fmt;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde::Serialize;
use tokio::sync::mpsc;
use toolport_server::{Authorizer, Principal, Server};

use crate::auth::AuthFuture;
use crate::state::AppState;

/// Who may reach a path of a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone the Origin and Host checks let through (static assets, the
    /// login page: a browser must load them before it has a token).
    Public,
    /// Only an authenticated caller, when the endpoint is protected.
    Authenticated,
}

/// One request to a mount.
#[derive(Debug)]
pub struct MountRequest<'a> {
    /// The method.
    pub method: &'a Method,
    /// The path.
    pub path: &'a str,
    /// The query string, if any.
    pub query: Option<&'a str>,
    /// The headers.
    pub headers: &'a HeaderMap,
    /// The body (at most the endpoint's `max_body_bytes`).
    pub body: Bytes,
    /// The authenticated caller; `None` on a public path or when the
    /// endpoint is not protected.
    pub principal: Option<Principal>,
    /// Whether the endpoint is protected by an authenticator.
    pub protected: bool,
    /// What decides what the principal may do (its scopes), when the
    /// endpoint is protected.
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// The sessions on this machine and the server.
    pub live: LiveView<'a>,
}

/// Pages and APIs beside the MCP endpoint.
pub trait Mount: Send + Sync + fmt::Debug + 'static {
    /// Whether this mount serves `path`, and who may reach it; `None` for a
    /// path it does not serve. Asked after the MCP endpoint's own path and
    /// the authorization layer's documents, before `/health` and friends.
    fn route(&self, path: &str) -> Option<Access>;

    /// Answers one request.
    fn serve<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<Bytes>>;

    /// Answers one request with a body that may stream (server-sent
    /// events); by default the whole body of [`serve`](Self::serve).
    fn serve_streaming<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<MountBody>> {
        Box::pin(async move { self.serve(request).await.map(MountBody::Full) })
    }
}

/// The body of a mount's answer: whole, or chunks as they come (the
/// stream ends when the sender is dropped).
#[derive(Debug)]
pub enum MountBody {
    /// The whole body.
    Full(Bytes),
    /// Chunks, sent as they arrive.
    Stream(mpsc::Receiver<Bytes>),
}

/// Several mounts on one server: each path goes to the first that claims it.
#[derive(Debug, Default)]
pub struct Mounts(Vec<Arc<dyn Mount>>);

impl Mounts {
    /// No mounts yet.
    pub fn new() -> Mounts {
        Mounts(Vec::new())
    }

    /// Adds `mount` after those already there.
    pub fn with(mut self, mount: Arc<dyn Mount>) -> Mounts {
        self.0.push(mount);
        self
    }

    fn claiming(&self, path: &str) -> Option<&Arc<dyn Mount>> {
        self.0.iter().find(|m| m.route(path).is_some())
    }
}

impl Mount for Mounts {
    fn route(&self, path: &str) -> Option<Access> {
        self.0.iter().find_map(|m| m.route(path))
    }

    fn serve<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<Bytes>> {
        match self.claiming(request.path) {
            Some(mount) => mount.serve(request),
            None => Box::pin(async { not_found() }),
        }
    }

    fn serve_streaming<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<MountBody>> {
        match self.claiming(request.path) {
            Some(mount) => mount.serve_streaming(request),
            None => Box::pin(async { not_found().map(MountBody::Full) }),
        }
    }
}

fn not_found() -> http::Response<Bytes> {
    let mut response = http::Response::new(Bytes::from_static(b"not found"));
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response
}

/// One handshake-era session live on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// Its `Mcp-Session-Id`.
    pub id: String,
    /// The subject of the principal that created it, if authenticated.
    pub principal: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The client's name and version, as it said in `initialize`.
    pub client: String,
    /// Requests of its client running now.
    pub in_flight: usize,
    /// Milliseconds since a request last used it here.
    pub idle_ms: u64,
}

/// A read-only view of the transport's live state, for a mount.
#[derive(Clone, Copy)]
pub struct LiveView<'a> {
    state: &'a AppState,
}

impl fmt::Debug for LiveView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveView").finish_non_exhaustive()
    }
}

/// At most this many sessions are summarised per request.
const MAX_SUMMARIES: usize = 500;

impl<'a> LiveView<'a> {
    pub(crate) fn new(state: &'a AppState) -> Self {
        LiveView { state }
    }

    /// The MCP server behind the endpoint.
    pub fn server(&self) -> &'a Server {
        &self.state.server
    }

    /// The MCP endpoint's path.
    pub fn endpoint_path(&self) -> &'a str {
        &self.state.config.path
    }

    /// How many sessions the session store held when last counted (all
    /// replicas, for a shared store).
    pub fn session_count(&self) -> usize {
        self.state.sessions.len()
    }

    /// Whether the server is draining (shutting down).
    pub fn draining(&self) -> bool {
        self.state.shutdown.is_cancelled()
    }

    /// The sessions live on this machine (at most 500), most recently used
    /// first.
    pub async fn sessions(&self) -> Vec<SessionSummary> {
        let live = self.state.live_sessions();
        let mut summaries = Vec::with_capacity(live.len().min(MAX_SUMMARIES));
        for session in live.into_iter().take(MAX_SUMMARIES) {
            // The store knows who made the session; a failed look-up shows none.
            let owner = match self.state.sessions.store.get(&session.id).await {
                Ok(Some(record)) => record.principal,
                _ => None,
            };
            let (protocol_version, client) = match session.session.negotiated() {
                Some(n) => (
                    n.version.as_str().to_owned(),
                    format!("{} {}", n.client_info.name, n.client_info.version),
                ),
                None => (String::new(), String::new()),
            };
            summaries.push(SessionSummary {
                id: session.id.clone(),
                // The owner key is "subject \u{1f} client": people read the subject.
                principal: owner.map(|o| o.split('\u{1f}').next().unwrap_or_default().to_owned()),
                protocol_version,
                client,
                in_flight: session.exchange.in_flight.len(),
                idle_ms: session.idle_for().as_millis() as u64,
            });
        }
        summaries.sort_by_key(|s| s.idle_ms);
        summaries
    }
}

/// Serves a request to the mount's `path`: the doors first, then the mount.
pub(crate) async fn serve(
    state: std::sync::Arc<AppState>,
    mount: std::sync::Arc<dyn Mount>,
    access: Access,
    request: http::Request<hyper::body::Incoming>,
) -> crate::reply::HttpResponse {
    use crate::reply;
    let (parts, body) = request.into_parts();
    let headers = crate::headers::RequestHeaders::read(&parts.headers);
    if let Err(rejection) = crate::guard::check_origin_and_host(&headers, &state.config) {
        tracing::debug!(%rejection, path = parts.uri.path(), "request rejected");
        let error = toolport_protocol::ErrorObject::invalid_request(rejection.to_string());
        return reply::error(rejection.status(), None, error);
    }
    let principal = match (&state.auth, access) {
        (Some(auth), Access::Authenticated) => match auth.authenticate(&parts.headers).await {
            Ok(principal) => Some(principal),
            Err(denial) => return reply::denied(&denial, None),
        },
        _ => None,
    };
    let body = match crate::request_body::read_limited(body, state.config.max_body_bytes).await {
        Ok(body) => body,
        Err(response) => return *response,
    };
    let request = MountRequest {
        method: &parts.method,
        path: parts.uri.path(),
        query: parts.uri.query(),
        headers: &parts.headers,
        body,
        principal,
        protected: state.auth.is_some(),
        authorizer: state.auth.clone().map(|auth| auth as Arc<dyn Authorizer>),
        live: LiveView::new(&state),
    };
    mount.serve_streaming(request).await.map(|body| match body {
        MountBody::Full(bytes) => crate::body::McpBody::full(bytes),
        MountBody::Stream(chunks) => crate::body::McpBody::Chunks(chunks),
    })
}
