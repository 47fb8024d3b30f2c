//! Push notifications (§4.3): every change of a task with push
//! configurations is POSTed to each webhook as a `StreamResponse`, in order,
//! with the configuration's credentials, a timeout and retries with backoff.
//!
//! Webhook URLs are checked against server-side request forgery: a URL whose
//! host resolves to a loopback, private, link-local, shared or otherwise
//! non-public address is refused when the configuration is created and again
//! at every delivery (the address is pinned for the connection, so a name
//! that changes its answer in between cannot slip through), unless the policy
//! allows it. Redirects are never followed: a 3xx answer is a failed delivery.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::sync::{broadcast::error::RecvError, mpsc};
use toolport_tasks::{TaskEngine, TaskEvent};

use crate::book::{Extras, event_of};
use crate::error::A2aError;
use crate::types::{PushConfig, StreamResponse};

/// The longest webhook URL taken.
const MAX_URL_LEN: usize = 2048;

/// Where and how pushes may go.
#[derive(Debug, Clone)]
pub struct PushPolicy {
    /// Allow targets on loopback, private and link-local addresses (a
    /// receiver on the same machine or network). Off by default.
    pub allow_private: bool,
    /// Host names (or IP literals) allowed whatever they resolve to.
    pub allow_hosts: Vec<String>,
    /// How long one delivery may take.
    pub timeout: Duration,
    /// How many times a delivery is tried.
    pub attempts: u32,
    /// The wait before the first retry; doubled for each next one.
    pub backoff: Duration,
}

impl Default for PushPolicy {
    fn default() -> Self {
        PushPolicy {
            allow_private: false,
            allow_hosts: Vec::new(),
            timeout: Duration::from_secs(10),
            attempts: 4,
            backoff: Duration::from_millis(250),
        }
    }
}

/// Why an address may not be a webhook's, or `None` when it may.
pub(crate) fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Some("a loopback address")
            } else if v4.is_private() {
                Some("a private address")
            } else if v4.is_link_local() {
                Some("a link-local address (cloud metadata lives there)")
            } else if v4.is_unspecified() || a == 0 {
                Some("an unspecified address")
            } else if v4.is_broadcast() || v4.is_multicast() {
                Some("a broadcast or multicast address")
            } else if a == 100 && (64..128).contains(&b) {
                Some("a shared (carrier-grade NAT) address")
            } else if v4.is_documentation() || (a == 198 && (b == 18 || b == 19)) || a >= 240 {
                Some("a reserved address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("a loopback address")
            } else if v6.is_unspecified() {
                Some("an unspecified address")
            } else if v6.is_multicast() {
                Some("a multicast address")
            } else if first & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else {
                None
            }
        }
    }
}

/// A webhook URL, checked: its address to connect to and what to send.
#[derive(Debug)]
struct Target {
    uri: Uri,
    address: SocketAddr,
    tls: bool,
    host: String,
}

impl PushPolicy {
    /// Checks `url` and resolves it to the one address a delivery connects to.
    async fn target(&self, url: &str) -> Result<Target, A2aError> {
        let refuse = |why: String| A2aError::InvalidParams(format!("push notification url {url:?} refused: {why}"));
        if url.len() > MAX_URL_LEN {
            return Err(refuse(format!("it is longer than {MAX_URL_LEN} bytes")));
        }
        let uri: Uri = url.parse().map_err(|_| refuse("it is not a URL".into()))?;
        let tls = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(refuse("only http:// and https:// webhooks are taken".into())),
        };
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err(refuse(
                "credentials in the URL are not taken; use authentication".into(),
            ));
        }
        let host = uri.host().ok_or_else(|| refuse("it names no host".into()))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| refuse(format!("its host does not resolve ({e})")))?
            .collect();
        let allowed = self.allow_private || self.allow_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host));
        if !allowed {
            // Every address must be public: a name with one private answer
            // among public ones is refused too.
            if let Some((address, why)) = addresses.iter().find_map(|a| forbidden(a.ip()).map(|why| (a, why))) {
                return Err(refuse(format!(
                    "{host} resolves to {}, {why}; allow it in the push policy if that is meant",
                    address.ip()
                )));
            }
        }
        let address = *addresses
            .first()
            .ok_or_else(|| refuse("its host resolves to nothing".into()))?;
        Ok(Target {
            uri,
            address,
            tls,
            host,
        })
    }
}

/// Delivers pushes for one engine's tasks.
#[derive(Debug, Clone)]
pub(crate) struct Pusher {
    policy: Arc<PushPolicy>,
}

impl Pusher {
    /// Follows `engine`'s changes and pushes those of tasks with webhooks.
    pub(crate) fn start(engine: TaskEngine, policy: PushPolicy) -> Pusher {
        let policy = Arc::new(policy);
        let mut changes = engine.subscribe();
        let dispatcher_policy = policy.clone();
        tokio::spawn(async move {
            // One queue per task keeps each task's pushes in order.
            let mut queues: HashMap<String, mpsc::UnboundedSender<(PushConfig, Arc<StreamResponse>)>> = HashMap::new();
            loop {
                let record = match changes.recv().await {
                    Ok(TaskEvent::Changed(record)) => record,
                    Ok(TaskEvent::Deleted { .. }) => continue,
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "push notifications: fell behind the task changes; some were not pushed"
                        );
                        continue;
                    }
                    Err(RecvError::Closed) => return,
                };
                let configs = Extras::of(&record).push;
                let Some(event) = (!configs.is_empty()).then(|| event_of(&record)).flatten() else {
                    continue;
                };
                let event = Arc::new(event);
                let id = record.id.to_string();
                queues.retain(|_, queue| !queue.is_closed());
                let queue = queues.entry(id.clone()).or_insert_with(|| {
                    let (tx, rx) = mpsc::unbounded_channel();
                    tokio::spawn(deliver_in_order(dispatcher_policy.clone(), rx));
                    tx
                });
                for config in configs {
                    let _ = queue.send((config, event.clone()));
                }
                if record.status.is_terminal() {
                    // The worker ends once its queue is drained.
                    queues.remove(&id);
                }
            }
        });
        Pusher { policy }
    }

    /// Refuses a webhook URL the policy does not allow, saying why.
    pub(crate) async fn check(&self, url: &str) -> Result<(), A2aError> {
        self.policy.target(url).await.map(drop)
    }
}

async fn deliver_in_order(
    policy: Arc<PushPolicy>,
    mut queue: mpsc::UnboundedReceiver<(PushConfig, Arc<StreamResponse>)>,
) {
    while let Some((config, event)) = queue.recv().await {
        let body = Bytes::from(serde_json::to_vec(&*event).unwrap_or_default());
        let mut wait = policy.backoff;
        for attempt in 1..=policy.attempts.max(1) {
            match tokio::time::timeout(policy.timeout, deliver(&policy, &config, body.clone())).await {
                Ok(Ok(())) => break,
                Ok(Err(why)) => {
                    tracing::warn!(task = %config.task_id, config = %config.id, attempt, %why, "push notification not delivered")
                }
                Err(_) => {
                    tracing::warn!(task = %config.task_id, config = %config.id, attempt, "push notification timed out")
                }
            }
            if attempt < policy.attempts {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
    }
}

/// One POST of `body` to the config's webhook.
async fn deliver(policy: &PushPolicy, config: &PushConfig, body: Bytes) -> Result<(), String> {
    let target = policy.target(&config.url).await.map_err(|e| e.to_string())?;
    let tcp = tokio::net::TcpStream::connect(target.address)
        .await
        .map_err(|e| format!("connecting to {}: {e}", target.address))?;
    let path = target.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = http::Request::post(path)
        .header(
            http::header::HOST,
            target.uri.authority().map_or(target.host.as_str(), |a| a.as_str()),
        )
        .header(http::header::CONTENT_TYPE, "application/a2a+json")
        .header("A2A-Version", crate::types::PROTOCOL_VERSION);
    if let Some(auth) = &config.authentication {
        let value = match &auth.credentials {
            Some(credentials) => format!("{} {credentials}", auth.scheme),
            None => auth.scheme.clone(),
        };
        request = request.header(http::header::AUTHORIZATION, value);
    }
    if let Some(token) = &config.token {
        request = request.header("X-A2A-Notification-Token", token);
    }
    let request = request
        .body(Full::new(body))
        .map_err(|e| format!("building the request: {e}"))?;
    let status = if target.tls {
        let stream = crate::tls::connect(tcp, &target.host).await?;
        send(TokioIo::new(stream), request).await?
    } else {
        send(TokioIo::new(tcp), request).await?
    };
    match status.as_u16() {
        200..=299 => Ok(()),
        300..=399 => Err(format!("the webhook answered {status}; redirects are not followed")),
        _ => Err(format!("the webhook answered {status}")),
    }
}

async fn send<T>(io: T, request: http::Request<Full<Bytes>>) -> Result<http::StatusCode, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("HTTP handshake: {e}"))?;
    tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("sending: {e}"))?;
    let status = response.status();
    // Read (a bounded amount of) the answer so the connection closes cleanly.
    let _ = http_body_util::Limited::new(response.into_body(), 64 * 1024)
        .collect()
        .await;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn webhooks_on_internal_addresses_are_refused_with_the_reason() {
        let policy = PushPolicy::default();
        for (url, why) in [
            ("http://127.0.0.1:9/hook", "loopback"),
            ("http://169.254.169.254/latest/meta-data", "link-local"),
            ("http://10.0.0.1/hook", "private"),
            ("http://192.168.1.1/hook", "private"),
            ("http://100.64.0.1/hook", "shared"),
            ("http://0.0.0.0/hook", "unspecified"),
            ("http://[::1]/hook", "loopback"),
            ("http://[fd00::1]/hook", "unique local"),
            ("http://[::ffff:127.0.0.1]/hook", "loopback"),
            ("http://localhost:9/hook", "loopback"),
            ("ftp://example.com/hook", "only http"),
            ("http://user:pw@example.com/hook", "credentials"),
            ("not a url", "not a URL"),
        ] {
            let err = policy.target(url).await.unwrap_err();
            assert!(matches!(err, A2aError::InvalidParams(_)), "{url}: {err:?}");
            assert!(err.to_string().contains(why), "{url}: {err}");
        }
    }

    #[tokio::test]
    async fn the_policy_can_allow_private_targets_or_named_hosts() {
        let open = PushPolicy {
            allow_private: true,
            ..PushPolicy::default()
        };
        assert!(open.target("http://127.0.0.1:9/hook").await.is_ok());
        let named = PushPolicy {
            allow_hosts: vec!["localhost".into()],
            ..PushPolicy::default()
        };
        assert!(named.target("http://localhost:9/hook").await.is_ok());
        assert!(named.target("http://127.0.0.1:9/hook").await.is_err());
    }

    #[test]
    fn public_addresses_pass() {
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"] {
            assert_eq!(forbidden(ip.parse().unwrap()), None, "{ip}");
        }
    }
}
