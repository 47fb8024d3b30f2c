//! A2A served beside the MCP endpoint: the Agent Card (public), the
//! JSON-RPC binding and the HTTP+JSON binding (authenticated like the MCP
//! endpoint), behind the transport's Origin, Host, body-size and
//! authentication checks.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use toolport_http::auth::AuthFuture;
use toolport_http::{Access, Mount, MountBody, MountRequest};

use crate::agent::Caller;
use crate::error::A2aError;
use crate::service::A2aService;
use crate::types::PROTOCOL_VERSION;
use crate::{jsonrpc, rest, sse};

pub use crate::card::{AGENT_CARD_PATH, JSONRPC_PATH, REST_PATH};

/// The A2A paths of a server (see the module docs).
#[derive(Debug, Clone)]
pub struct A2aMount {
    service: A2aService,
}

impl A2aMount {
    /// Serves `service`.
    pub fn new(service: A2aService) -> A2aMount {
        A2aMount { service }
    }
}

enum Binding {
    Card,
    JsonRpc,
    Rest,
}

fn binding(path: &str) -> Option<Binding> {
    if path == AGENT_CARD_PATH {
        Some(Binding::Card)
    } else if path.trim_end_matches('/') == JSONRPC_PATH {
        Some(Binding::JsonRpc)
    } else if path == REST_PATH || path.starts_with(&format!("{REST_PATH}/")) {
        Some(Binding::Rest)
    } else {
        None
    }
}

impl Mount for A2aMount {
    fn route(&self, path: &str) -> Option<Access> {
        match binding(path)? {
            Binding::Card => Some(Access::Public),
            Binding::JsonRpc | Binding::Rest => Some(Access::Authenticated),
        }
    }

    fn serve<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<Bytes>> {
        Box::pin(async move {
            let (parts, body) = self.answer(request).await.into_parts();
            let bytes = match body {
                MountBody::Full(bytes) => bytes,
                MountBody::Stream(mut chunks) => {
                    let mut whole = Vec::new();
                    while let Some(chunk) = chunks.recv().await {
                        whole.extend_from_slice(&chunk);
                    }
                    Bytes::from(whole)
                }
            };
            http::Response::from_parts(parts, bytes)
        })
    }

    fn serve_streaming<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<MountBody>> {
        Box::pin(self.answer(request))
    }
}

impl A2aMount {
    async fn answer(&self, request: MountRequest<'_>) -> http::Response<MountBody> {
        let caller = Caller::new(request.principal.clone(), request.authorizer.clone());
        let base = request_base(request.headers);
        match binding(request.path) {
            Some(Binding::Card) if request.method == Method::GET => {
                sse::json(StatusCode::OK, "application/json", &self.service.card(&base))
            }
            Some(Binding::Card) => rest::error(&A2aError::MethodNotFound("the agent card is read with GET".into())),
            Some(Binding::JsonRpc) => {
                if request.method != Method::POST {
                    return sse::json(
                        StatusCode::METHOD_NOT_ALLOWED,
                        "application/json",
                        &serde_json::json!({"error": "the JSON-RPC binding takes POST"}),
                    );
                }
                let refused = check_content_type(request.headers)
                    .and_then(|()| check_version(request.headers, request.query))
                    .err();
                jsonrpc::answer(&self.service, &caller, &base, &request.body, refused).await
            }
            Some(Binding::Rest) => {
                let checked = check_version(request.headers, request.query).and_then(|()| match request.method {
                    &Method::POST if !request.body.is_empty() => check_content_type(request.headers),
                    _ => Ok(()),
                });
                if let Err(e) = checked {
                    return rest::error(&e);
                }
                let path = &request.path[REST_PATH.len()..];
                let request = rest::RestRequest {
                    caller: &caller,
                    base: &base,
                    method: request.method,
                    path,
                    query: request.query,
                    body: &request.body,
                };
                rest::answer(&self.service, request).await
            }
            None => rest::error(&A2aError::MethodNotFound(format!("no A2A path {}", request.path))),
        }
    }
}

/// `http://` and the `Host` the request came to (checked by the transport
/// against the hosts it serves): where the card's interfaces are, unless a
/// base URL is configured.
fn request_base(headers: &HeaderMap) -> String {
    let host = headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// The `A2A-Version` header (or query parameter) must name 1.0; none or
/// an empty one means 0.3, which this agent does not speak (§3.6.2).
fn check_version(headers: &HeaderMap, query: Option<&str>) -> Result<(), A2aError> {
    let from_query = || {
        form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .find(|(k, _)| k.eq_ignore_ascii_case("A2A-Version"))
            .map(|(_, v)| v.into_owned())
    };
    let version = match headers.get("a2a-version") {
        Some(value) => value.to_str().unwrap_or("?").trim().to_owned(),
        None => from_query().unwrap_or_default(),
    };
    let major_minor: String = version.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
    match major_minor.as_str() {
        v if v == PROTOCOL_VERSION => Ok(()),
        "" => Err(A2aError::VersionNotSupported(format!(
            "no A2A-Version was sent, which means 0.3; this agent speaks {PROTOCOL_VERSION}: send A2A-Version: {PROTOCOL_VERSION}"
        ))),
        _ => Err(A2aError::VersionNotSupported(format!(
            "A2A-Version {version:?} is not supported; this agent speaks {PROTOCOL_VERSION}"
        ))),
    }
}

/// Bodies are JSON: `application/json` or `application/a2a+json`.
fn check_content_type(headers: &HeaderMap) -> Result<(), A2aError> {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/json" | "application/a2a+json" => Ok(()),
        _ => Err(A2aError::ContentTypeNotSupported(format!(
            "Content-Type {content_type:?} is not taken; send application/json or application/a2a+json"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_must_be_1_0() {
        let mut headers = HeaderMap::new();
        assert_eq!(check_version(&headers, None).unwrap_err().code(), -32009);
        assert!(check_version(&headers, Some("A2A-Version=1.0")).is_ok());
        for (value, ok) in [
            ("1.0", true),
            ("1.0.1", true),
            (" 1.0 ", true),
            ("0.3", false),
            ("9.9", false),
            ("", false),
        ] {
            headers.insert("a2a-version", value.parse().unwrap());
            assert_eq!(check_version(&headers, None).is_ok(), ok, "{value:?}");
        }
    }

    #[test]
    fn bodies_must_be_json() {
        let mut headers = HeaderMap::new();
        assert_eq!(check_content_type(&headers).unwrap_err().code(), -32005);
        for (value, ok) in [
            ("application/json", true),
            ("application/a2a+json; charset=utf-8", true),
            ("text/plain", false),
        ] {
            headers.insert(http::header::CONTENT_TYPE, value.parse().unwrap());
            assert_eq!(check_content_type(&headers).is_ok(), ok, "{value}");
        }
    }

    #[test]
    fn paths_route_to_their_binding() {
        assert!(matches!(binding("/a2a/jsonrpc/"), Some(Binding::JsonRpc)));
        assert!(matches!(binding("/a2a/rest/tasks/x:cancel"), Some(Binding::Rest)));
        assert!(binding("/a2a/restless").is_none());
        assert!(binding("/mcp").is_none());
    }
}
