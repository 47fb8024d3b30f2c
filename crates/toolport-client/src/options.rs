//! How a client behaves: which protocol version, its limits, and how it
//! retries.

use std::time::Duration;

use tokio::sync::mpsc;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::Implementation;
use toolport_protocol::progress::ProgressNotificationParams;

/// Which protocol version to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionPolicy {
    /// Try 2026-07-28 (`server/discover`) first and fall back to the
    /// `initialize` handshake when the server does not speak it.
    #[default]
    Auto,
    /// Speak exactly this version; fail if the server does not.
    Pinned(ProtocolVersion),
}

impl std::str::FromStr for VersionPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "auto" {
            return Ok(VersionPolicy::Auto);
        }
        s.parse::<ProtocolVersion>().map(VersionPolicy::Pinned).map_err(|_| {
            let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
            format!(
                "unknown protocol version {s:?}: use auto or one of {}",
                known.join(", ")
            )
        })
    }
}

/// Jittered exponential backoff for transport failures, with a give-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first delay (before jitter).
    pub initial: Duration,
    /// The longest delay.
    pub max: Duration,
    /// How many times one request is tried in all before the failure is
    /// handed to the caller.
    pub max_attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(5),
            max_attempts: 6,
        }
    }
}

impl Backoff {
    /// The delay before attempt `attempt` (1 is the first retry): "full
    /// jitter", a random delay between half and all of the exponential step,
    /// so many clients that failed together do not come back together.
    pub fn delay(&self, attempt: u32) -> Duration {
        let step = self
            .initial
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max);
        let half = step / 2;
        half + half.mul_f64(jitter())
    }
}

/// A number in [0, 1) that differs between calls and between processes.
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded randomly per process and per instance.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Settings of one client.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Who this client is (`clientInfo`).
    pub client_info: Implementation,
    /// Which protocol version to speak.
    pub version: VersionPolicy,
    /// How long a request waits for its answer unless the call says otherwise.
    /// No call waits forever.
    pub request_timeout: Duration,
    /// How long the era probe (`server/discover`) may take before the client
    /// falls back to the handshake.
    pub probe_timeout: Duration,
    /// Requests in flight at once; more wait for a free slot (the wait counts
    /// against their timeout).
    pub max_in_flight: usize,
    /// HTTP connections to the server at once (each request in flight and
    /// each open event stream holds one).
    pub max_connections: usize,
    /// Retries of transport failures.
    pub backoff: Backoff,
    /// Rounds of `InputRequiredResult` one request may go through.
    pub max_input_rounds: u32,
    /// Largest HTTP body or SSE event accepted from the server.
    pub max_message_bytes: usize,
    /// PEM certificates trusted for `https://` besides the Mozilla root
    /// certificates: a private CA's, for servers inside an organisation.
    pub extra_root_certificates: Vec<u8>,
    /// List and read results kept by their `ttlMs` hints; 0 keeps none.
    pub cache_capacity: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            client_info: Implementation::new("toolport-client", env!("CARGO_PKG_VERSION")),
            version: VersionPolicy::Auto,
            request_timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(10),
            max_in_flight: 256,
            max_connections: 32,
            backoff: Backoff::default(),
            max_input_rounds: 16,
            max_message_bytes: 16 * 1024 * 1024,
            extra_root_certificates: Vec::new(),
            cache_capacity: 256,
        }
    }
}

/// A progress notification for one call.
pub type Progress = ProgressNotificationParams;

/// Per-call settings.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Overrides the client's request timeout for this call.
    pub timeout: Option<Duration>,
    /// Where progress notifications for this call go. Setting it adds a
    /// `progressToken` to the request.
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// Extra `_meta` of the request: an idempotency key, a `traceparent`, ...
    pub meta: serde_json::Map<String, serde_json::Value>,
}

/// The `_meta` key of Toolport's idempotency keys (the server's default).
pub const IDEMPOTENCY_KEY: &str = "dev.toolport/idempotencyKey";

impl CallOptions {
    /// With a timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// With progress notifications sent to `sink`.
    pub fn progress(mut self, sink: mpsc::UnboundedSender<Progress>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// With an idempotency key: the server runs the call once however often
    /// it is sent, so the client may send it again after a retryable failure.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.meta
            .insert(IDEMPOTENCY_KEY.into(), serde_json::Value::String(key.into()));
        self
    }

    /// Continues the caller's W3C trace: `traceparent` (and `tracestate`)
    /// go in `_meta` and, over HTTP, in the headers of the same names.
    pub fn trace_context(mut self, traceparent: impl Into<String>, tracestate: Option<String>) -> Self {
        self.meta
            .insert("traceparent".into(), serde_json::Value::String(traceparent.into()));
        if let Some(state) = tracestate {
            self.meta.insert("tracestate".into(), serde_json::Value::String(state));
        }
        self
    }

    pub(crate) fn carries_idempotency_key(&self) -> bool {
        self.meta
            .get(IDEMPOTENCY_KEY)
            .and_then(serde_json::Value::as_str)
            .is_some_and(|k| !k.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_stays_under_the_cap() {
        let b = Backoff::default();
        for attempt in 1..20 {
            let d = b.delay(attempt);
            let step = (b.initial * (1 << (attempt - 1).min(16))).min(b.max);
            assert!(d >= step / 2 && d <= step, "attempt {attempt}: {d:?}");
        }
        let delays: std::collections::BTreeSet<Duration> = (0..20).map(|_| b.delay(3)).collect();
        assert!(delays.len() > 1, "jitter varies the delay");
    }

    #[test]
    fn versions_parse_with_a_helpful_error() {
        assert_eq!("auto".parse::<VersionPolicy>(), Ok(VersionPolicy::Auto));
        assert_eq!(
            "2025-06-18".parse::<VersionPolicy>(),
            Ok(VersionPolicy::Pinned(ProtocolVersion::V2025_06_18))
        );
        let err = "2024-01-01".parse::<VersionPolicy>().unwrap_err();
        assert!(err.contains("2026-07-28"), "{err}");
    }
}
