//! The user agent of a native client (RFC 8252): the user's browser goes
//! to the authorization server, which sends it back to a listener on this
//! machine's loopback interface, where the client picks up the response.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::AuthError;
use super::authorize::UserAgent;
use crate::http::HttpFuture;
use crate::uri::split_origin;

/// Opens the authorization URL (in a browser, or by printing it) and waits
/// on the loopback redirect URI for the user to come back.
#[derive(Clone)]
pub struct LoopbackUserAgent {
    open: Arc<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
}

impl fmt::Debug for LoopbackUserAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackUserAgent")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackUserAgent {
    /// `open` shows the user the authorization URL (starts a browser, or
    /// prints it); the user has `timeout` to finish.
    pub fn new(open: impl Fn(&str) + Send + Sync + 'static, timeout: Duration) -> Self {
        LoopbackUserAgent {
            open: Arc::new(open),
            timeout,
        }
    }

    /// Prints the URL on stderr for the user to open; waits five minutes.
    pub fn printing() -> Self {
        LoopbackUserAgent::new(
            |url| eprintln!("Open this address in a browser to authorize:\n  {url}"),
            Duration::from_secs(300),
        )
    }
}

/// The port and path of a loopback redirect URI (`http://127.0.0.1:PORT/path`
/// or `http://localhost:PORT/path`, with an explicit port).
fn loopback(redirect_uri: &str) -> Result<(u16, String), AuthError> {
    let bad = || AuthError::Authorization(format!("{redirect_uri:?} is not a loopback redirect URI with a port"));
    let (origin, path) = split_origin(redirect_uri).ok_or_else(bad)?;
    let authority = origin.strip_prefix("http://").ok_or_else(bad)?;
    let (host, port) = authority.rsplit_once(':').ok_or_else(bad)?;
    if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return Err(bad());
    }
    let port: u16 = port.parse().map_err(|_| bad())?;
    if port == 0 {
        return Err(bad());
    }
    Ok((port, if path.is_empty() { "/".into() } else { path.to_owned() }))
}

const DONE_PAGE: &str = "<!doctype html><title>Authorized</title><p>Authorization complete; you may close this window.";

impl UserAgent for LoopbackUserAgent {
    fn authorize<'a>(&'a self, url: &'a str, redirect_uri: &'a str) -> HttpFuture<'a, Result<String, AuthError>> {
        Box::pin(async move {
            let (port, path) = loopback(redirect_uri)?;
            // Listen first, so the browser cannot come back before we do.
            let listener = TcpListener::bind(("127.0.0.1", port))
                .await
                .map_err(|e| AuthError::Authorization(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
            (self.open)(url);
            let wait = async {
                loop {
                    let Ok((mut stream, _)) = listener.accept().await else {
                        continue;
                    };
                    // One request head, bounded; the query is all we need.
                    let mut head = vec![0u8; 8192];
                    let mut read = 0;
                    while read < head.len() && !head[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut head[read..]).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => read += n,
                        }
                    }
                    let text = String::from_utf8_lossy(&head[..read]).into_owned();
                    let target = text
                        .lines()
                        .next()
                        .and_then(|line| line.strip_prefix("GET "))
                        .and_then(|rest| rest.split(' ').next())
                        .unwrap_or("");
                    if target.split('?').next() == Some(path.as_str()) {
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{DONE_PAGE}",
                            DONE_PAGE.len()
                        );
                        let _ = stream.write_all(answer.as_bytes()).await;
                        return format!("http://127.0.0.1:{port}{target}");
                    }
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                }
            };
            tokio::time::timeout(self.timeout, wait)
                .await
                .map_err(|_| AuthError::Authorization("the user did not come back in time".into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_redirects_with_a_port_are_accepted() {
        assert_eq!(
            loopback("http://127.0.0.1:8765/callback").unwrap(),
            (8765, "/callback".into())
        );
        assert_eq!(loopback("http://localhost:8765").unwrap(), (8765, "/".into()));
        for bad in [
            "https://127.0.0.1:8765/cb",
            "http://example.com:8765/cb",
            "http://127.0.0.1/cb",
            "http://127.0.0.1:0/cb",
        ] {
            assert!(loopback(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_browser_coming_back_hands_over_the_response() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let redirect = format!("http://127.0.0.1:{port}/callback");
        let back = format!("{redirect}?code=abc&state=xyz");
        // The "browser": the authorization server approved and redirected it.
        let agent = LoopbackUserAgent::new(
            move |_url| {
                let back = back.clone();
                tokio::spawn(async move {
                    let stray = format!("http://127.0.0.1:{port}/favicon.ico");
                    for target in [stray, back] {
                        let path = target.splitn(4, '/').nth(3).unwrap_or("").to_owned();
                        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                        let request = format!("GET /{path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
                        stream.write_all(request.as_bytes()).await.unwrap();
                        let mut answer = String::new();
                        stream.read_to_string(&mut answer).await.unwrap();
                    }
                });
            },
            Duration::from_secs(10),
        );
        let callback = agent
            .authorize("http://as.test/authorize?x=1", &redirect)
            .await
            .unwrap();
        assert_eq!(callback, format!("{redirect}?code=abc&state=xyz"));
        let late = LoopbackUserAgent::new(|_| {}, Duration::from_millis(50));
        assert!(late.authorize("http://as.test/authorize", &redirect).await.is_err());
    }
}
