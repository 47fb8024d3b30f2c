//! The command connection: options, bounded calls, errors.

use std::future::Future;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, FromRedisValue, RedisError, Script};
use toolport_server::state::StateError;

/// How the stores use Redis.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// Put before every key and channel, so that several deployments (or
    /// tests) can share one Redis: `toolport` by default.
    pub prefix: String,
    /// The longest any call may take, connecting included; then it fails as
    /// [`StateError::Unavailable`].
    pub timeout: Duration,
    /// How long a session's record and events outlive its last use, in case
    /// no replica is left to reap it (the replicas' idle timeout ends
    /// sessions much sooner).
    pub record_ttl: Duration,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            prefix: "toolport".into(),
            timeout: Duration::from_secs(2),
            record_ttl: Duration::from_secs(24 * 3600),
        }
    }
}

/// The connection manager for commands, with the options.
#[derive(Clone)]
pub(crate) struct Connection {
    pub(crate) manager: ConnectionManager,
    pub(crate) options: RedisOptions,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("Connection")
            .field("prefix", &self.options.prefix)
            .finish_non_exhaustive()
    }
}

/// How the connection managers reconnect: quickly and briefly, so that a
/// call during an outage fails within its timeout instead of queueing
/// behind a long back-off, and the next call tries again.
pub(crate) fn manager_config(options: &RedisOptions) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_number_of_retries(1)
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_millis(500))
        .set_connection_timeout(Some(options.timeout))
        .set_response_timeout(Some(options.timeout))
}

/// A Redis error as the stores report it: the kind of failure, never the
/// address or credentials.
pub(crate) fn unavailable(e: RedisError) -> StateError {
    StateError::Unavailable(format!("redis: {e}"))
}

impl Connection {
    pub(crate) fn open(url: &str, options: RedisOptions) -> Result<Self, StateError> {
        let client = Client::open(url).map_err(|e| StateError::Unavailable(format!("not a Redis URL: {e}")))?;
        let manager = ConnectionManager::new_lazy_with_config(client, manager_config(&options)).map_err(unavailable)?;
        Ok(Connection { manager, options })
    }

    /// A key or channel name under the prefix.
    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut key = self.options.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    /// Runs a call within the timeout.
    pub(crate) async fn bounded<T>(&self, call: impl Future<Output = Result<T, RedisError>>) -> Result<T, StateError> {
        match tokio::time::timeout(self.options.timeout, call).await {
            Ok(result) => result.map_err(unavailable),
            Err(_) => Err(StateError::Unavailable(format!(
                "redis: no answer within {} ms",
                self.options.timeout.as_millis()
            ))),
        }
    }

    /// Runs a script with these keys and arguments.
    pub(crate) async fn script<T: FromRedisValue>(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T, StateError> {
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut manager = self.manager.clone();
        self.bounded(async move { invocation.invoke_async(&mut manager).await })
            .await
    }

    /// Runs one command.
    pub(crate) async fn command<T: FromRedisValue>(&self, command: redis::Cmd) -> Result<T, StateError> {
        let mut manager = self.manager.clone();
        self.bounded(async move { command.query_async(&mut manager).await })
            .await
    }

    pub(crate) async fn ping(&self) -> Result<(), StateError> {
        let pong: String = self.command(redis::cmd("PING")).await?;
        if pong == "PONG" {
            Ok(())
        } else {
            Err(StateError::Unavailable(format!("redis answered PING with {pong:?}")))
        }
    }
}

/// A duration in milliseconds, at least 1 (Redis refuses 0 as an expiry).
pub(crate) fn millis(duration: Duration) -> String {
    duration.as_millis().clamp(1, u128::from(u64::MAX)).to_string()
}

/// Redis's clock in milliseconds, in a script: every replica reads one clock.
pub(crate) const NOW_MS: &str = "local t = redis.call('TIME'); local now = t[1] * 1000 + t[2] / 1000\n";

/// Bytes as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `bytes` random bytes as hex: owners of claims, origins of events.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random source is available");
    hex(&buf)
}
