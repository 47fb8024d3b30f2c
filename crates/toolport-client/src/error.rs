//! Why a call did not get its result, sorted by what the caller can do about it.

use std::time::Duration;

use toolport_protocol::{ErrorCode, ErrorObject};

/// Why a request did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Remote(ErrorObject),
    /// No answer within the request's timeout; the request was cancelled.
    #[error("no answer within {0:?}; the request was cancelled")]
    Timeout(Duration),
    /// The server could not be reached at all: the request was not sent.
    #[error("cannot reach the server: {0}")]
    Unreachable(String),
    /// The connection broke while the request was in flight; the server may
    /// or may not have run it.
    #[error("the connection to the server broke before the answer came: {0}")]
    Disconnected(String),
    /// The server's handshake-era session ended (HTTP 404): the request was
    /// not run. The client starts a new session and sends it again.
    #[error("the server's session ended or expired")]
    SessionExpired,
    /// HTTP 401, and no token provider could fix it.
    #[error("the server requires authorization (HTTP 401){}", challenge_suffix(.www_authenticate))]
    Unauthorized {
        /// The `WWW-Authenticate` challenge, when there was one.
        www_authenticate: Option<String>,
    },
    /// HTTP 403, and no token provider could fix it.
    #[error("the server refused access (HTTP 403){}", challenge_suffix(.www_authenticate))]
    Forbidden {
        /// The `WWW-Authenticate` challenge, when there was one.
        www_authenticate: Option<String>,
    },
    /// Any other HTTP status without a JSON-RPC error in its body.
    #[error("HTTP {status}: {body}")]
    Http {
        /// The status code.
        status: u16,
        /// The start of the body, as text.
        body: String,
        /// The `Retry-After` of a 429 or 503, in seconds, when it had one.
        retry_after: Option<Duration>,
    },
    /// The server sent something that is not a valid MCP answer.
    #[error("the server's answer is not valid MCP: {0}")]
    Protocol(String),
    /// The server speaks no protocol version this client speaks.
    #[error("the server speaks no protocol version this client supports: {0}")]
    UnsupportedVersion(String),
    /// The server asked for input (elicitation, sampling, roots) the client's
    /// handler could not give.
    #[error("the server needs input this client cannot give: {0}")]
    InputUnavailable(String),
    /// The caller's own input is unusable (bad URL, arguments that are not an
    /// object, an unknown `--protocol`).
    #[error("{0}")]
    InvalidInput(String),
    /// The tool's definition is new or changed since it was approved
    /// (tool pinning); it is not called until someone approves it.
    #[error("the tool {0:?} is quarantined: its definition is new or changed since it was approved")]
    Quarantined(String),
    /// The server command could not be started.
    #[error("could not start the server command: {0}")]
    Spawn(String),
    /// The client was closed.
    #[error("the client is closed")]
    Closed,
}

fn challenge_suffix(challenge: &Option<String>) -> String {
    challenge.as_ref().map(|c| format!(": {c}")).unwrap_or_default()
}

impl ClientError {
    /// Whether the request certainly did not reach the server, so sending it
    /// again cannot run it twice.
    pub fn was_not_sent(&self) -> bool {
        matches!(self, ClientError::Unreachable(_) | ClientError::SessionExpired)
            || matches!(self, ClientError::Http { status: 502..=504, .. })
            || matches!(self, ClientError::Remote(e) if e.code == ErrorCode::OVERLOADED)
    }

    /// How long the server asked the client to wait before trying again:
    /// `data.retryAfterMs` of an overload error, or HTTP `Retry-After`.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Remote(e) => e
                .data
                .as_ref()
                .and_then(|d| d.get("retryAfterMs"))
                .and_then(serde_json::Value::as_u64)
                .map(Duration::from_millis),
            ClientError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the connection is gone and must be made again.
    pub(crate) fn breaks_link(&self) -> bool {
        matches!(
            self,
            ClientError::Unreachable(_) | ClientError::Disconnected(_) | ClientError::SessionExpired
        )
    }

    /// The JSON-RPC error code, for remote errors.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Remote(e) => Some(e.code),
            _ => None,
        }
    }

    /// What a person can do about this error, in one sentence.
    pub fn hint(&self) -> &'static str {
        match self {
            ClientError::Remote(e) if e.code == ErrorCode::METHOD_NOT_FOUND => {
                "the server does not offer this; list what it has (`toolport tools`, `resources`, `prompts`)"
            }
            ClientError::Remote(e) if e.code == ErrorCode::INVALID_PARAMS => {
                "check the name and the arguments against what the server lists"
            }
            ClientError::Remote(_) => "the server refused the request; its message says why",
            ClientError::Timeout(_) => {
                "the server is slow or stuck; raise the limit with --timeout, or check the server's logs"
            }
            ClientError::Unreachable(_) => {
                "check that the server is running and that the URL (scheme, host, port, path) is right"
            }
            ClientError::Disconnected(_) => "the server went away mid-request; check its logs and try again",
            ClientError::SessionExpired => "try again: a new session is started automatically",
            ClientError::Unauthorized { .. } => {
                "the server needs a token: pass one with --bearer (or TOOLPORT_BEARER), or OAuth client credentials with --client-id and --client-secret"
            }
            ClientError::Forbidden { .. } => "the token lacks the rights (scope) this request needs",
            ClientError::Http { .. } => "the URL may not be an MCP endpoint (usually it ends in /mcp)",
            ClientError::Protocol(_) => "the server is not speaking MCP correctly; report it to its authors",
            ClientError::UnsupportedVersion(_) => "pin another version with --protocol, or upgrade one side",
            ClientError::InputUnavailable(_) => {
                "the tool asks the user or a model for input; run it from a terminal or an agent that can answer"
            }
            ClientError::InvalidInput(_) => "fix the command line and try again",
            ClientError::Spawn(_) => "check the command after `--`: is it installed and on PATH?",
            ClientError::Quarantined(_) => {
                "review the definition now on offer (the pins' snapshot) and approve it before calling the tool"
            }
            ClientError::Closed => "open a new client",
        }
    }
}

impl From<ErrorObject> for ClientError {
    fn from(e: ErrorObject) -> Self {
        ClientError::Remote(e)
    }
}
