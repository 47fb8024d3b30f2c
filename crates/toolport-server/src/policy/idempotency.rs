//! Idempotency keys for `tools/call`: the first call with a key runs; a
//! repeat with the same arguments gets the same result (waiting for it if the
//! first is still running); the same key with other arguments is refused.
//!
//! Keys are scoped to the principal and the tool, so one caller's key never
//! answers another caller's call. Only complete results are kept (a tool's
//! `isError` result included); a call that fails at the protocol level or is
//! cancelled frees its key for a retry. The records live in the server's
//! [`IdempotencyStore`] (in memory by default).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolport_protocol::ErrorObject;
use toolport_protocol::tools::CallToolResult;

use super::deadline::Deadlines;
use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use crate::error::ToolError;
use crate::state::{ArgumentsDigest, Claim, ClaimGuard, IdempotencyStore, StateError};

/// What claiming a call's key gave.
#[derive(Debug)]
pub(crate) enum Claimed {
    /// This call runs; report its end through the guard.
    Run(Guard),
    /// A finished call's result.
    Done(CallToolResult),
}

/// Held by the call that owns a key.
#[derive(Debug)]
pub(crate) struct Guard(ClaimGuard);

impl Guard {
    /// Stores a complete result for repeats, or frees the key after a
    /// protocol-level failure. A store that fails here costs repeats their
    /// answer, not this call its result, so the failure is logged only.
    pub(crate) async fn finish<E>(self, outcome: &Result<CallToolResult, E>) {
        let stored = match outcome {
            Ok(result) => self.0.complete(result).await,
            Err(_) => self.0.abandon().await,
        };
        if let Err(e) = stored {
            tracing::warn!(error = %e, "an idempotency record was not stored");
        }
    }
}

/// Idempotency keys of one server.
#[derive(Debug)]
pub(crate) struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
}

impl Idempotency {
    pub(crate) fn new(store: Arc<dyn IdempotencyStore>) -> Self {
        Idempotency { store }
    }

    /// Claims `key` of `principal` for a call of `tool` with these
    /// arguments, holding it for `lease` (how long the call may take).
    pub(crate) async fn claim(
        &self,
        principal: &str,
        tool: &str,
        key: &str,
        arguments: &Value,
        lease: Duration,
    ) -> Result<Claimed, ErrorObject> {
        let scoped = format!("{principal}\u{0}{tool}\u{0}{key}");
        let digest = ArgumentsDigest::of(arguments);
        match self.store.claim(&scoped, digest, lease).await.map_err(unavailable)? {
            Claim::First(ticket) => Ok(Claimed::Run(Guard(ClaimGuard::new(self.store.clone(), ticket)))),
            Claim::Done(result) => Ok(Claimed::Done(result)),
            Claim::Conflict => Err(ErrorObject::invalid_params(format!(
                "idempotency key {key:?} was already used for {tool} with other arguments; use a new key"
            ))),
        }
    }
}

/// Idempotency keys as a layer: a repeat is answered from the record and
/// takes no gate's place; the first call runs and its result is kept.
#[derive(Debug)]
pub(crate) struct IdempotencyLayer {
    pub(crate) keys: Idempotency,
    /// The `_meta` key that carries the idempotency key.
    pub(crate) meta_key: String,
    /// How long results are kept: the lease of a call without a deadline.
    pub(crate) ttl: Duration,
    /// How long a call may wait at the gates, added to its deadline for its lease.
    pub(crate) queue_timeout: Duration,
    pub(crate) deadlines: Deadlines,
}

impl IdempotencyLayer {
    /// How long a call holds its key: its time in the queue and its
    /// deadline; without a deadline, the time results are kept.
    fn lease(&self, tool: &str) -> Duration {
        match self.deadlines.of(tool) {
            0 => self.ttl,
            ms => Duration::from_millis(ms).saturating_add(self.queue_timeout),
        }
    }
}

impl CallLayer for IdempotencyLayer {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let key = call
            .meta
            .get(&self.meta_key)
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty());
        let Some(key) = key else {
            return next.run(call);
        };
        Box::pin(async move {
            let lease = self.lease(call.name);
            let claimed = self
                .keys
                .claim(call.subject(), call.name, key, call.arguments, lease)
                .await
                .map_err(ToolError::Protocol)?;
            let guard = match claimed {
                Claimed::Done(result) => return Ok(result),
                Claimed::Run(guard) => guard,
            };
            let outcome = next.run(call).await;
            guard.finish(&outcome).await;
            outcome
        })
    }
}

fn unavailable(e: StateError) -> ErrorObject {
    e.to_error_object("the idempotency key could not be checked")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::state::MemoryIdempotencyStore;

    fn keys() -> Idempotency {
        Idempotency::new(Arc::new(MemoryIdempotencyStore::new(Duration::from_secs(60))))
    }

    const LEASE: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn keys_are_scoped_to_principal_and_tool() {
        let keys = keys();
        let args = json!({"a": 1});
        let Claimed::Run(guard) = keys.claim("alice", "book", "k", &args, LEASE).await.unwrap() else {
            panic!("the first call runs")
        };
        guard.finish::<()>(&Ok(CallToolResult::text("alice's"))).await;
        for (principal, tool) in [("bob", "book"), ("alice", "cancel")] {
            assert!(
                matches!(
                    keys.claim(principal, tool, "k", &args, LEASE).await.unwrap(),
                    Claimed::Run(_)
                ),
                "{principal} calling {tool} does not get alice's result"
            );
        }
        let conflict = keys
            .claim("alice", "book", "k", &json!({"a": 2}), LEASE)
            .await
            .unwrap_err();
        assert!(conflict.message.contains("other arguments"), "{}", conflict.message);
    }

    #[tokio::test]
    async fn a_failed_call_frees_its_key_at_once() {
        let keys = keys();
        let args = json!({});
        let Claimed::Run(guard) = keys.claim("", "t", "k", &args, LEASE).await.unwrap() else {
            panic!("the first call runs")
        };
        guard.finish(&Err(())).await;
        // Without waiting: the key is free as soon as `finish` returns.
        let retry = tokio::time::timeout(Duration::ZERO, keys.claim("", "t", "k", &args, LEASE)).await;
        assert!(matches!(retry, Ok(Ok(Claimed::Run(_)))), "{retry:?}");
    }
}
