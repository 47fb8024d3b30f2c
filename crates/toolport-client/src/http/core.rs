//! The connection pool, the connection bound, the bearer token and the
//! 401/403 retries: what every HTTP link to one server shares.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolport_protocol::jsonrpc::RequestId;

use crate::auth::{AuthChallenge, AuthDecision, MAX_AUTH_ATTEMPTS, TokenProvider};
use crate::error::ClientError;

/// What every HTTP link to one server shares: the connection pool, the
/// connection bound, the token provider and the request ids.
pub(crate) struct HttpCore {
    client: HyperClient<super::tls::Connector, Full<Bytes>>,
    uri: http::Uri,
    /// The endpoint without query or fragment: what DPoP proofs name.
    htu: String,
    auth: Option<Arc<dyn TokenProvider>>,
    connections: Arc<Semaphore>,
    pub(super) max_message: usize,
    next_id: AtomicI64,
}

impl std::fmt::Debug for HttpCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCore")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl HttpCore {
    /// A pool for the MCP endpoint at `url` (`https://` with the `tls`
    /// feature, trusting `extra_roots_pem` besides the Mozilla roots).
    pub(crate) fn new(
        url: &str,
        max_connections: usize,
        max_message: usize,
        extra_roots_pem: &[u8],
        auth: Option<Arc<dyn TokenProvider>>,
    ) -> Result<HttpCore, ClientError> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| ClientError::InvalidInput(format!("{url:?} is not a URL: {e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") if super::tls::HTTPS => {}
            Some("https") => {
                return Err(ClientError::InvalidInput(format!(
                    "{url}: https needs the `tls` feature of toolport-client; use http:// on a trusted network or a build with TLS"
                )));
            }
            _ => {
                return Err(ClientError::InvalidInput(format!(
                    "{url:?} is not an http:// URL of an MCP endpoint (for example http://127.0.0.1:8080/mcp)"
                )));
            }
        }
        if uri.host().is_none() {
            return Err(ClientError::InvalidInput(format!("{url:?} has no host")));
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(10)));
        let connector = super::tls::connector(connector, extra_roots_pem)?;
        let max_connections = max_connections.max(1);
        let client = HyperClient::builder(TokioExecutor::new())
            .pool_max_idle_per_host(max_connections)
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        let htu = url.split(['?', '#']).next().unwrap_or(url).to_owned();
        Ok(HttpCore {
            client,
            htu,
            uri,
            auth,
            connections: Arc::new(Semaphore::new(max_connections)),
            max_message,
            next_id: AtomicI64::new(1),
        })
    }

    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends one HTTP request, holding a connection permit while it and its
    /// body last, with the bearer token and the 401/403 retries.
    /// `bounded` requests wait for a connection permit; answers to the
    /// server's own requests do not (the requests holding the permits may be
    /// the ones waiting for those answers).
    pub(super) async fn send(
        &self,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        bounded: bool,
    ) -> Result<Exchange, ClientError> {
        let permit = match bounded {
            true => Some(
                self.connections
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| ClientError::Closed)?,
            ),
            false => None,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = http::Request::builder().method(method.clone()).uri(self.uri.clone());
            for (name, value) in headers {
                request = request.header(name, value);
            }
            if let Some(auth) = &self.auth
                && let Some(credentials) = auth.credentials(method.as_str(), &self.htu).await
            {
                let unfit =
                    |_| ClientError::InvalidInput("the access token has characters a header cannot carry".into());
                request = request.header(
                    header::AUTHORIZATION,
                    HeaderValue::from_str(&credentials.authorization).map_err(unfit)?,
                );
                if let Some(proof) = &credentials.dpop {
                    request = request.header("dpop", HeaderValue::from_str(proof).map_err(unfit)?);
                }
            }
            let request = request
                .body(Full::new(body.clone()))
                .map_err(|e| ClientError::InvalidInput(format!("could not build the HTTP request: {e}")))?;
            let response = self.client.request(request).await.map_err(|e| {
                if e.is_connect() {
                    ClientError::Unreachable(format!("{}: {}", self.uri, source_chain(&e)))
                } else {
                    ClientError::Disconnected(format!("{}: {}", self.uri, source_chain(&e)))
                }
            })?;
            let status = response.status();
            let challenge = || {
                let www = response
                    .headers()
                    .get(header::WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let nonce = response
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                AuthChallenge::new(&self.uri.to_string(), status.as_u16(), www, attempt, nonce)
            };
            if status == StatusCode::UNAUTHORIZED {
                let challenge = challenge();
                if let Some(auth) = &self.auth
                    && attempt < MAX_AUTH_ATTEMPTS
                    && auth.on_unauthorized(&challenge).await == AuthDecision::Retry
                {
                    continue;
                }
                return Err(ClientError::Unauthorized {
                    www_authenticate: challenge.www_authenticate,
                });
            }
            if status == StatusCode::FORBIDDEN {
                let challenge = challenge();
                if let Some(auth) = &self.auth
                    && challenge.error() == Some("insufficient_scope")
                    && attempt < MAX_AUTH_ATTEMPTS
                    && auth.on_insufficient_scope(&challenge).await == AuthDecision::Retry
                {
                    continue;
                }
                if challenge.www_authenticate.is_some() {
                    return Err(ClientError::Forbidden {
                        www_authenticate: challenge.www_authenticate,
                    });
                }
            }
            let (parts, body) = response.into_parts();
            return Ok(Exchange {
                status: parts.status,
                headers: parts.headers,
                body,
                _permit: permit,
            });
        }
    }
}

/// The whole chain of an error's causes, which is where hyper keeps the reason.
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A response whose body is still to be read, with its connection permit.
pub(super) struct Exchange {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Incoming,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Exchange {
    pub(super) fn is_event_stream(&self) -> bool {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
    }

    pub(super) async fn bytes(self, limit: usize) -> Result<Bytes, ClientError> {
        Limited::new(self.body, limit)
            .collect()
            .await
            .map(|c| c.to_bytes())
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                    ClientError::Protocol(format!("the answer is larger than {limit} bytes"))
                } else {
                    ClientError::Disconnected(format!("reading the answer: {e}"))
                }
            })
    }
}
