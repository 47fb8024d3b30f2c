//! The outgoing HTTP this crate does (JWKS, introspection, metadata
//! discovery, token and registration requests), behind a small trait so an
//! application can bring its own client (TLS, proxies, mTLS).
//!
//! The default [`HyperClient`] speaks HTTP/1.1, over TLS (rustls, the
//! Mozilla roots) with the default `tls` feature, follows no redirects
//! (the authorization-code flow reads `Location` itself), bounds every answer
//! to [`MAX_BODY`] bytes and every exchange to a timeout.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The largest response body read: metadata and token answers are small.
pub const MAX_BODY: usize = 1024 * 1024;

/// A boxed future, as the trait returns them.
pub type HttpFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an exchange failed before an answer arrived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The URL cannot be used (not absolute, unsupported scheme).
    #[error("unusable URL {0:?}: {1}")]
    Url(String, &'static str),
    /// Connecting, sending or receiving failed.
    #[error("request to {0} failed: {1}")]
    Transport(String, String),
    /// No answer within the timeout.
    #[error("request to {0} timed out")]
    Timeout(String),
    /// The answer was larger than [`MAX_BODY`].
    #[error("the answer from {0} is larger than {MAX_BODY} bytes")]
    TooLarge(String),
}

/// Sends one HTTP request and returns the whole answer. Redirects are not
/// followed.
pub trait HttpClient: Send + Sync + fmt::Debug + 'static {
    /// Sends `request`.
    fn send(&self, request: Request<Bytes>) -> HttpFuture<'_, Result<Response<Bytes>, HttpError>>;
}

#[cfg(feature = "tls")]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "tls"))]
type Connector = HttpConnector;

/// HTTP/1.1 over hyper: `https` and `http` with the `tls` feature, `http`
/// only without it.
#[derive(Debug, Clone)]
pub struct HyperClient {
    client: Client<Connector, Full<Bytes>>,
    timeout: Duration,
}

impl Default for HyperClient {
    fn default() -> Self {
        HyperClient::new(Duration::from_secs(10))
    }
}

impl HyperClient {
    /// With this timeout per exchange.
    pub fn new(timeout: Duration) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(timeout));
        #[cfg(feature = "tls")]
        let connector = {
            connector.enforce_http(false);
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_webpki_roots()
                .https_or_http()
                .enable_http1()
                .wrap_connector(connector)
        };
        HyperClient {
            client: Client::builder(TokioExecutor::new()).build(connector),
            timeout,
        }
    }
}

impl HttpClient for HyperClient {
    fn send(&self, request: Request<Bytes>) -> HttpFuture<'_, Result<Response<Bytes>, HttpError>> {
        Box::pin(async move {
            let url = request.uri().to_string();
            match request.uri().scheme_str() {
                Some("http") => {}
                Some("https") if cfg!(feature = "tls") => {}
                Some("https") => {
                    return Err(HttpError::Url(
                        url,
                        "https needs the `tls` feature of toolport-auth, or an HttpClient with TLS",
                    ));
                }
                _ => return Err(HttpError::Url(url, "not an absolute http URL")),
            }
            let (parts, body) = request.into_parts();
            let request = Request::from_parts(parts, Full::new(body));
            let exchange = async {
                let response = self
                    .client
                    .request(request)
                    .await
                    .map_err(|e| HttpError::Transport(url.clone(), e.to_string()))?;
                let (parts, body) = response.into_parts();
                let body = Limited::new(body, MAX_BODY).collect().await.map_err(|e| {
                    if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                        HttpError::TooLarge(url.clone())
                    } else {
                        HttpError::Transport(url.clone(), e.to_string())
                    }
                })?;
                Ok(Response::from_parts(parts, body.to_bytes()))
            };
            tokio::time::timeout(self.timeout, exchange)
                .await
                .map_err(|_| HttpError::Timeout(url.clone()))?
        })
    }
}

/// A GET asking for JSON.
pub(crate) fn get_json(url: &str) -> Result<Request<Bytes>, HttpError> {
    Request::builder()
        .method(Method::GET)
        .uri(url)
        .header(header::ACCEPT, "application/json")
        .body(Bytes::new())
        .map_err(|_| HttpError::Url(url.to_owned(), "not a valid URI"))
}

/// A POST of an `application/x-www-form-urlencoded` body.
pub(crate) fn post_form(
    url: &str,
    pairs: &[(&str, &str)],
    authorization: Option<&str>,
) -> Result<Request<Bytes>, HttpError> {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter())
        .finish();
    let mut builder = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json");
    if let Some(value) = authorization {
        builder = builder.header(header::AUTHORIZATION, value);
    }
    builder
        .body(Bytes::from(body))
        .map_err(|_| HttpError::Url(url.to_owned(), "not a valid URI"))
}

/// A POST of a JSON body.
pub(crate) fn post_json(url: &str, body: &serde_json::Value) -> Result<Request<Bytes>, HttpError> {
    Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json")
        .body(Bytes::from(body.to_string()))
        .map_err(|_| HttpError::Url(url.to_owned(), "not a valid URI"))
}

/// Whether an answer is a success with a JSON body.
pub(crate) fn is_json_ok(response: &Response<Bytes>) -> bool {
    response.status().is_success() && is_json(response.headers())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .is_some_and(|media| media.eq_ignore_ascii_case("application/json") || media.ends_with("+json"))
}

/// The status an answer carried, for error messages.
pub(crate) fn status_text(status: StatusCode) -> String {
    status.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn schemes_are_checked_and_https_speaks_tls() {
        let client = HyperClient::new(Duration::from_secs(5));
        let ftp = client.send(get_json("ftp://127.0.0.1/x").unwrap()).await;
        assert!(matches!(ftp, Err(HttpError::Url(..))), "{ftp:?}");
        // A plain-TCP listener: an https request fails in the TLS handshake,
        // which shows the client tried TLS rather than refusing the scheme.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                use tokio::io::AsyncWriteExt;
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\n\r\nnot tls").await;
            }
        });
        let https = client
            .send(get_json(&format!("https://127.0.0.1:{port}/")).unwrap())
            .await;
        if cfg!(feature = "tls") {
            assert!(matches!(https, Err(HttpError::Transport(..))), "{https:?}");
        } else {
            assert!(matches!(https, Err(HttpError::Url(..))), "{https:?}");
        }
    }

    #[tokio::test]
    async fn answers_are_bounded() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            if let Ok((mut stream, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request).await;
                let body = vec![b'x'; MAX_BODY + 1];
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(&body).await;
            }
        });
        let client = HyperClient::new(Duration::from_secs(5));
        let big = client
            .send(get_json(&format!("http://127.0.0.1:{port}/")).unwrap())
            .await;
        assert!(matches!(big, Err(HttpError::TooLarge(_))), "{big:?}");
    }
}
