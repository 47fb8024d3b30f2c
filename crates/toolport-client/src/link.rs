//! One established conversation with a server: the transport, and what the
//! opening (`server/discover` or `initialize`) settled.
//!
//! Era detection (`basic/versioning`): unless a version is pinned, the client
//! first asks `server/discover` at 2026-07-28. A result that lists a version
//! it speaks settles the stateless era; `-32022` with a list of supported
//! versions is retried once with the best of them; anything else (another
//! error, a non-MCP HTTP answer, no answer within the probe timeout) means
//! the server is of the handshake era, and the client sends `initialize`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use toolport_protocol::capabilities::{ClientCapabilities, Implementation, ServerCapabilities};
use toolport_protocol::lifecycle::{self, DiscoverResult, InitializeRequestParams, InitializeResult};
use toolport_protocol::meta::keys;
use toolport_protocol::{Era, ErrorCode, ProtocolVersion};

use crate::error::ClientError;
use crate::http::{HttpCore, HttpRequest, HttpWire};
use crate::inbound::Inbound;
use crate::options::{ClientOptions, VersionPolicy};
use crate::stdio::{ServerCommand, StdioWire};

/// Where the server is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Stdio(ServerCommand),
    Http(Arc<HttpCore>),
    /// A connection opened by someone else: used once, never reopened.
    Connection(Arc<Mutex<Option<toolport_rpc::transport::Transport>>>),
}

/// What the opening of the conversation settled.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// The protocol version both sides speak.
    pub protocol_version: ProtocolVersion,
    /// The server's name and version.
    pub implementation: Implementation,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    pub instructions: Option<String>,
}

impl ServerInfo {
    /// The era of the negotiated version.
    pub fn era(&self) -> Era {
        self.protocol_version.era()
    }
}

#[derive(Debug)]
pub(crate) enum Wire {
    Stdio(StdioWire),
    Http(Arc<HttpWire>),
}

/// One conversation.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) wire: Wire,
    pub(crate) server: ServerInfo,
    /// Stops the running 2026-07-28 listen stream.
    pub(crate) listening: Mutex<Option<CancellationToken>>,
}

/// One request as the client hands it to a link.
#[derive(Debug)]
pub(crate) struct Outbound<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Map<String, Value>,
    pub(crate) extra_headers: Vec<(String, String)>,
    /// Answers requests tied to this one (its HTTP answer stream).
    pub(crate) input: Option<Arc<dyn crate::handler::ClientHandler>>,
}

impl Wire {
    async fn open(target: &Target, inbound: &Arc<Inbound>) -> Result<Wire, ClientError> {
        Ok(match target {
            Target::Stdio(command) => Wire::Stdio(StdioWire::spawn(command, inbound.clone())?),
            Target::Http(core) => Wire::Http(HttpWire::new(core.clone(), inbound.clone())),
            Target::Connection(slot) => {
                let transport = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                // The connection is gone for good: whoever gave it opens another.
                let transport = transport.ok_or(ClientError::Closed)?;
                Wire::Stdio(StdioWire::over(transport, None, inbound.clone()))
            }
        })
    }

    async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        version: ProtocolVersion,
        extra_headers: Vec<(String, String)>,
        input: Option<Arc<dyn crate::handler::ClientHandler>>,
    ) -> Result<Box<RawValue>, ClientError> {
        match self {
            Wire::Stdio(w) => w.request(method, Some(Value::Object(params))).await,
            Wire::Http(w) => {
                w.request(HttpRequest {
                    method,
                    params: Some(Value::Object(params)),
                    version,
                    extra_headers,
                    input,
                })
                .await
            }
        }
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        match self {
            Wire::Stdio(w) => w.notify(method, params).await,
            Wire::Http(w) => w.notify(method, params).await,
        }
    }

    fn is_alive(&self) -> bool {
        match self {
            Wire::Stdio(w) => w.is_alive(),
            Wire::Http(w) => w.is_alive(),
        }
    }
}

impl Link {
    /// Connects and opens the conversation.
    pub(crate) async fn open(
        target: &Target,
        inbound: &Arc<Inbound>,
        options: &ClientOptions,
        capabilities: &ClientCapabilities,
    ) -> Result<Link, ClientError> {
        let opening = Opening {
            capabilities,
            client_info: &options.client_info,
        };
        let wire = Wire::open(target, inbound).await?;
        let (wire, server) = match options.version {
            VersionPolicy::Pinned(v) if v.era() == Era::Stateless => {
                let server = opening.discover(&wire, v).await?;
                (wire, server)
            }
            VersionPolicy::Pinned(v) => {
                let server = opening.initialize(&wire, v).await?;
                (wire, server)
            }
            VersionPolicy::Auto => {
                let probe =
                    tokio::time::timeout(options.probe_timeout, opening.discover(&wire, ProtocolVersion::LATEST)).await;
                match probe {
                    Ok(Ok(server)) => (wire, server),
                    Ok(Err(
                        e @ (ClientError::Unreachable(_)
                        | ClientError::Unauthorized { .. }
                        | ClientError::Forbidden { .. }
                        | ClientError::InvalidInput(_)),
                    )) => return Err(e),
                    other => {
                        tracing::debug!(probe = ?other.map(|r| r.err()), "server/discover failed: falling back to initialize");
                        // A stdio server may have quit over the unknown method.
                        let wire = if wire.is_alive() {
                            wire
                        } else {
                            Wire::open(target, inbound).await?
                        };
                        let server = opening.initialize(&wire, ProtocolVersion::LATEST_HANDSHAKE).await?;
                        (wire, server)
                    }
                }
            }
        };
        Ok(Link {
            wire,
            server,
            listening: Mutex::new(None),
        })
    }

    pub(crate) fn is_alive(&self) -> bool {
        self.wire.is_alive()
    }

    /// Sends one request: the params already carry their `_meta`.
    pub(crate) async fn request(&self, request: Outbound<'_>) -> Result<Box<RawValue>, ClientError> {
        self.wire
            .request(
                request.method,
                request.params,
                self.server.protocol_version,
                request.extra_headers,
                request.input,
            )
            .await
    }

    /// Sends a notification (handshake era).
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.wire.notify(method, params).await
    }

    /// Ends the conversation.
    pub(crate) async fn close(&self) {
        if let Some(stop) = self.listening.lock().unwrap_or_else(|p| p.into_inner()).take() {
            stop.cancel();
        }
        match &self.wire {
            Wire::Stdio(w) => w.shutdown(Duration::from_secs(2)).await,
            Wire::Http(w) => w.close().await,
        }
    }
}

/// What the client says about itself when it opens a conversation.
struct Opening<'a> {
    capabilities: &'a ClientCapabilities,
    client_info: &'a Implementation,
}

impl Opening<'_> {
    /// `_meta` of a 2026-07-28 request.
    pub(crate) fn meta(&self, version: ProtocolVersion) -> Map<String, Value> {
        stateless_meta(version, self.capabilities, self.client_info)
    }

    /// `server/discover`, retried once with a version from a `-32022` answer.
    async fn discover(&self, wire: &Wire, version: ProtocolVersion) -> Result<ServerInfo, ClientError> {
        let mut version = version;
        for attempt in 0..2 {
            let params = Map::from_iter([("_meta".to_owned(), Value::Object(self.meta(version)))]);
            match wire
                .request(lifecycle::DISCOVER, params, version, Vec::new(), None)
                .await
            {
                Ok(raw) => return discovered(&raw, version),
                Err(ClientError::Remote(e)) if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && attempt == 0 => {
                    let supported = e.data.as_ref().and_then(|d| d.get("supported")).cloned();
                    let ours = supported
                        .and_then(|s| serde_json::from_value::<Vec<String>>(s).ok())
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|v| v.parse::<ProtocolVersion>().ok())
                        .filter(|v| v.era() == Era::Stateless)
                        .max();
                    match ours {
                        Some(v) => version = v,
                        None => return Err(ClientError::Remote(e)),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(ClientError::UnsupportedVersion(
            "the server refused every version it listed".into(),
        ))
    }

    /// `initialize` and `notifications/initialized`.
    async fn initialize(&self, wire: &Wire, version: ProtocolVersion) -> Result<ServerInfo, ClientError> {
        let params = InitializeRequestParams {
            protocol_version: version.as_str().to_owned(),
            capabilities: self.capabilities.clone(),
            client_info: self.client_info.clone(),
            meta: None,
        };
        let Value::Object(params) =
            serde_json::to_value(params).map_err(|e| ClientError::InvalidInput(e.to_string()))?
        else {
            unreachable!("params serialize to an object")
        };
        let raw = wire
            .request(lifecycle::INITIALIZE, params, version, Vec::new(), None)
            .await?;
        let result: InitializeResult = serde_json::from_str(raw.get())
            .map_err(|e| ClientError::Protocol(format!("the initialize result does not parse: {e}")))?;
        let negotiated = result
            .protocol_version
            .parse::<ProtocolVersion>()
            .ok()
            .filter(|v| v.era() == Era::Handshake)
            .ok_or_else(|| {
                ClientError::UnsupportedVersion(format!(
                    "the server answered initialize with version {:?}",
                    result.protocol_version
                ))
            })?;
        if let Wire::Http(w) = wire {
            w.set_version(negotiated);
        }
        wire.notify(lifecycle::INITIALIZED, None).await?;
        Ok(ServerInfo {
            protocol_version: negotiated,
            implementation: result.server_info,
            capabilities: result.capabilities,
            instructions: result.instructions,
        })
    }
}

/// The `_meta` every 2026-07-28 request carries.
pub(crate) fn stateless_meta(
    version: ProtocolVersion,
    capabilities: &ClientCapabilities,
    client_info: &Implementation,
) -> Map<String, Value> {
    Map::from_iter([
        (keys::PROTOCOL_VERSION.to_owned(), json!(version.as_str())),
        (
            keys::CLIENT_CAPABILITIES.to_owned(),
            serde_json::to_value(capabilities).unwrap_or_else(|_| json!({})),
        ),
        (
            keys::CLIENT_INFO.to_owned(),
            serde_json::to_value(client_info).unwrap_or_else(|_| json!({})),
        ),
    ])
}

/// Reads a `server/discover` result leniently: servers put `serverInfo` in
/// `_meta` (2026-07-28) or, in older drafts, in the body.
fn discovered(raw: &RawValue, asked: ProtocolVersion) -> Result<ServerInfo, ClientError> {
    let value: Value =
        serde_json::from_str(raw.get()).map_err(|e| ClientError::Protocol(format!("server/discover: {e}")))?;
    let result: DiscoverResult = serde_json::from_value(value.clone())
        .map_err(|e| ClientError::Protocol(format!("the server/discover result does not parse: {e}")))?;
    let version = if result.supported_versions.iter().any(|v| v == asked.as_str()) {
        asked
    } else {
        result
            .supported_versions
            .iter()
            .filter_map(|v| v.parse::<ProtocolVersion>().ok())
            .filter(|v| v.era() == Era::Stateless)
            .max()
            .ok_or_else(|| {
                ClientError::UnsupportedVersion(format!(
                    "server/discover lists {:?}, none of them a stateless version",
                    result.supported_versions
                ))
            })?
    };
    let info = value
        .get("_meta")
        .and_then(|m| m.get(keys::SERVER_INFO))
        .or_else(|| value.get("serverInfo"))
        .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok())
        .unwrap_or_else(|| Implementation::new("unknown", "unknown"));
    Ok(ServerInfo {
        protocol_version: version,
        implementation: info,
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}
