//! Idempotency records: a hash per key (`s`: `run` or `done`, `o`: the
//! owner, `d`: the arguments' digest, `r`: the result). A running claim
//! expires with its lease, so a crashed owner's key is claimed again once
//! the lease ends; a done one expires with the time to live. Completing or
//! abandoning publishes on the key's channel, which wakes the duplicates
//! waiting on any replica; they also look again when the lease would end.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use toolport_protocol::tools::CallToolResult;
use toolport_server::state::{ArgumentsDigest, Claim, ClaimTicket, IdempotencyStore, StateError};

use crate::conn::{Connection, hex, millis, random_hex};
use crate::hub::{Hub, HubSubscription};

/// The longest a waiting duplicate goes without looking again, in case the
/// word that the key was completed was lost (a dropped connection).
const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// KEYS: record. ARGV: owner, digest, lease ms.
/// {"first"} | {"conflict"} | {"done", result} | {"wait", ms left}
static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local r = redis.call('HMGET', KEYS[1], 's', 'd', 'r')
if not r[1] then
  redis.call('HSET', KEYS[1], 's', 'run', 'o', ARGV[1], 'd', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'first'}
end
if r[2] ~= ARGV[2] then return {'conflict'} end
if r[1] == 'done' then return {'done', r[3]} end
return {'wait', tostring(redis.call('PTTL', KEYS[1]))}",
    )
});

/// KEYS: record, channel. ARGV: owner, digest, result, ttl ms. Stores the
/// result unless another owner holds the key or it is already done.
static COMPLETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local r = redis.call('HMGET', KEYS[1], 's', 'o')
if r[1] == 'done' then return 0 end
if r[1] and r[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'done', 'd', ARGV[2], 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', KEYS[2], 'done')
return 1",
    )
});

/// KEYS: record, channel. ARGV: owner. Frees the key if this owner runs it.
static ABANDON: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local r = redis.call('HMGET', KEYS[1], 's', 'o')
if r[1] ~= 'run' or r[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], 'free')
return 1",
    )
});

#[derive(Debug)]
pub(crate) struct RedisIdempotencyStore {
    conn: Connection,
    hub: Arc<Hub>,
    ttl: Duration,
}

enum Answer {
    Claim(Claim),
    Wait(Duration),
}

impl RedisIdempotencyStore {
    pub(crate) fn new(conn: Connection, hub: Arc<Hub>, ttl: Duration) -> Self {
        RedisIdempotencyStore { conn, hub, ttl }
    }

    fn record(&self, key: &str) -> String {
        self.conn.key(&["idem", key])
    }

    fn channel(&self, key: &str) -> String {
        self.conn.key(&["idemdone", key])
    }

    async fn try_claim(&self, key: &str, digest: ArgumentsDigest, lease: Duration) -> Result<Answer, StateError> {
        let owner = random_hex(16);
        let lease_ms = millis(lease);
        let answer: Vec<String> = self
            .conn
            .script(
                &CLAIM,
                &[&self.record(key)],
                &[owner.as_bytes(), hex(&digest.0).as_bytes(), lease_ms.as_bytes()],
            )
            .await?;
        let corrupt = || StateError::Corrupt(format!("an idempotency record answered {answer:?}"));
        Ok(match answer.first().map(String::as_str) {
            Some("first") => Answer::Claim(Claim::First(ClaimTicket {
                key: key.to_owned(),
                owner,
                digest,
                lease,
            })),
            Some("conflict") => Answer::Claim(Claim::Conflict),
            Some("done") => {
                let result = answer.get(1).ok_or_else(corrupt)?;
                let result: CallToolResult = serde_json::from_str(result)
                    .map_err(|e| StateError::Corrupt(format!("a stored tool result: {e}")))?;
                Answer::Claim(Claim::Done(result))
            }
            Some("wait") => {
                // PTTL: -1 without expiry (never set so), -2 gone meanwhile.
                let left: i64 = answer.get(1).and_then(|t| t.parse().ok()).unwrap_or(0);
                Answer::Wait(Duration::from_millis(left.max(1) as u64))
            }
            _ => return Err(corrupt()),
        })
    }
}

#[async_trait]
impl IdempotencyStore for RedisIdempotencyStore {
    async fn claim(&self, key: &str, digest: ArgumentsDigest, lease: Duration) -> Result<Claim, StateError> {
        let mut woken: Option<HubSubscription> = None;
        loop {
            let wait = match self.try_claim(key, digest, lease).await? {
                Answer::Claim(claim) => return Ok(claim),
                Answer::Wait(wait) => wait,
            };
            let Some(subscription) = woken.as_mut() else {
                // Subscribed before looking again, so that a completion
                // between the look and the wait is not missed.
                woken = Some(self.hub.subscribe(&self.channel(key)).await?);
                continue;
            };
            let _ = tokio::time::timeout(wait.min(LOOK_AGAIN), subscription.messages.recv()).await;
        }
    }

    async fn complete(&self, ticket: &ClaimTicket, result: &CallToolResult) -> Result<(), StateError> {
        let result = serde_json::to_vec(result).map_err(|e| StateError::Corrupt(format!("a tool result: {e}")))?;
        let ttl = millis(self.ttl);
        let _: i64 = self
            .conn
            .script(
                &COMPLETE,
                &[&self.record(&ticket.key), &self.channel(&ticket.key)],
                &[
                    ticket.owner.as_bytes(),
                    hex(&ticket.digest.0).as_bytes(),
                    &result,
                    ttl.as_bytes(),
                ],
            )
            .await?;
        Ok(())
    }

    async fn abandon(&self, ticket: &ClaimTicket) -> Result<(), StateError> {
        let _: i64 = self
            .conn
            .script(
                &ABANDON,
                &[&self.record(&ticket.key), &self.channel(&ticket.key)],
                &[ticket.owner.as_bytes()],
            )
            .await?;
        Ok(())
    }
}
