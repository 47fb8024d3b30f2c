//! Asking the user, the model or the client's roots for input, in both eras.
//!
//! A handler calls [`RequestContext::elicit`](crate::RequestContext::elicit)
//! (or `sample`, `roots`, `input`) the same way in both eras:
//!
//! - handshake era: the request goes to the client over the connection and the
//!   handler waits for the answer;
//! - 2026-07-28 (MRTR, `basic/patterns/mrtr`): if the retried request carries
//!   the answer, it is returned; otherwise the handler stops with
//!   [`ToolError::InputRequired`](crate::ToolError::InputRequired), the client
//!   gets an `InputRequiredResult`, and on its retry the handler runs again from
//!   the top and finds the answer. Answers from earlier rounds travel in the
//!   integrity-protected `requestState`, so a multi-round handler sees all of them.
//!
//! `requestState` is attacker-controlled input. It is sealed with HMAC-SHA256
//! by the server's [`KeyRing`] (whose key id travels in the state) and bound to the method, the tool/prompt/resource, a digest of the
//! arguments, the principal and an expiry; anything that fails is refused.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use toolport_protocol::mrtr::InputRequests;

use crate::state::{KeyRing, KeyRingError};

/// What a handler needs before it can finish.
#[derive(Debug, Clone, Default)]
pub struct InputRequired {
    /// Key → request. Keys are the handler's own and must be stable across retries.
    pub requests: InputRequests,
    /// Extra state to find again on the retry ([`crate::RequestContext::request_state`]).
    pub state: Option<Value>,
}

impl InputRequired {
    /// Input required for these requests.
    pub fn new(requests: InputRequests) -> Self {
        InputRequired { requests, state: None }
    }

    /// Carries `state` to the retry.
    pub fn with_state(mut self, state: impl Serialize) -> Self {
        self.state = serde_json::to_value(state).ok();
        self
    }
}

/// What binds a sealed state to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateBinding {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) arguments_digest: String,
    pub(crate) principal: Option<String>,
}

impl StateBinding {
    pub(crate) fn new(method: &str, target: &str, arguments: Option<&Value>, principal: Option<&str>) -> Self {
        // serde_json maps are sorted by key, so this encoding is canonical.
        let encoded = arguments
            .map(|a| serde_json::to_vec(a).unwrap_or_default())
            .unwrap_or_default();
        StateBinding {
            method: method.to_owned(),
            target: target.to_owned(),
            arguments_digest: URL_SAFE_NO_PAD.encode(Sha256::digest(&encoded)),
            principal: principal.map(str::to_owned),
        }
    }
}

/// What a sealed state carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatePayload {
    /// Answers gathered in earlier rounds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) responses: BTreeMap<String, Value>,
    /// The handler's own state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<Value>,
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    v: u8,
    exp: u64,
    m: String,
    t: String,
    d: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
    body: StatePayload,
}

/// Why a `requestState` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StateError {
    #[error("requestState is malformed")]
    Malformed,
    #[error("requestState failed its integrity check")]
    Tampered,
    #[error("requestState has expired; start the request again without it")]
    Expired,
    #[error("requestState belongs to another request")]
    WrongRequest,
    #[error("requestState belongs to another principal")]
    WrongPrincipal,
}

/// Seals and opens `requestState` with the server's key ring.
#[derive(Clone, Debug)]
pub(crate) struct StateSealer {
    /// Its Debug never shows a key.
    keys: KeyRing,
    ttl: Duration,
}

/// Longest `requestState` accepted; a sealed state grows with the answers it
/// carries, and an attacker must not make us verify megabytes.
const MAX_STATE_LEN: usize = 256 * 1024;

impl StateSealer {
    pub(crate) fn new(keys: KeyRing, ttl: Duration) -> Self {
        StateSealer { keys, ttl }
    }

    /// A sealer with a random key: states survive only this process. Servers
    /// behind a load balancer configure shared keys instead.
    #[cfg(test)]
    pub(crate) fn random(ttl: Duration) -> Self {
        StateSealer::new(KeyRing::random(), ttl)
    }

    pub(crate) fn seal(&self, binding: &StateBinding, body: StatePayload) -> String {
        let exp = now_secs() + self.ttl.as_secs();
        let envelope = Envelope {
            v: 1,
            exp,
            m: binding.method.clone(),
            t: binding.target.clone(),
            d: binding.arguments_digest.clone(),
            p: binding.principal.clone(),
            body,
        };
        self.keys
            .seal(&serde_json::to_vec(&envelope).expect("state serializes"))
    }

    pub(crate) fn open(&self, sealed: &str, binding: &StateBinding) -> Result<StatePayload, StateError> {
        if sealed.len() > MAX_STATE_LEN {
            return Err(StateError::Malformed);
        }
        let bytes = self.keys.open(sealed).map_err(|e| match e {
            KeyRingError::Tampered => StateError::Tampered,
            _ => StateError::Malformed,
        })?;
        let envelope: Envelope = serde_json::from_slice(&bytes).map_err(|_| StateError::Malformed)?;
        if envelope.v != 1 {
            return Err(StateError::Malformed);
        }
        if envelope.exp < now_secs() {
            return Err(StateError::Expired);
        }
        if envelope.p != binding.principal {
            return Err(StateError::WrongPrincipal);
        }
        if envelope.m != binding.method || envelope.t != binding.target || envelope.d != binding.arguments_digest {
            return Err(StateError::WrongRequest);
        }
        Ok(envelope.body)
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn binding(args: Value, principal: Option<&str>) -> StateBinding {
        StateBinding::new("tools/call", "book", Some(&args), principal)
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_own_request() {
        let sealer = StateSealer::random(Duration::from_secs(60));
        let body = StatePayload {
            responses: BTreeMap::from([("a".into(), json!({"action": "accept"}))]),
            state: Some(json!(3)),
        };
        let sealed = sealer.seal(&binding(json!({"x": 1}), Some("alice")), body.clone());
        assert_eq!(sealer.open(&sealed, &binding(json!({"x": 1}), Some("alice"))), Ok(body));
        assert_eq!(
            sealer.open(&sealed, &binding(json!({"x": 2}), Some("alice"))),
            Err(StateError::WrongRequest)
        );
        assert_eq!(
            sealer.open(&sealed, &binding(json!({"x": 1}), Some("bob"))),
            Err(StateError::WrongPrincipal)
        );
        assert_eq!(
            sealer.open(&sealed, &binding(json!({"x": 1}), None)),
            Err(StateError::WrongPrincipal)
        );
    }

    #[test]
    fn tampering_and_garbage_are_refused() {
        let sealer = StateSealer::random(Duration::from_secs(60));
        let b = binding(json!({}), None);
        let sealed = sealer.seal(&b, StatePayload::default());
        let (head, tag) = sealed.rsplit_once('.').unwrap();
        let mut forged = head.as_bytes().to_vec();
        forged[5] ^= 1;
        let forged = format!("{}.{tag}", String::from_utf8_lossy(&forged));
        assert_eq!(sealer.open(&forged, &b), Err(StateError::Tampered));
        let other = StateSealer::random(Duration::from_secs(60));
        assert_eq!(other.open(&sealed, &b), Err(StateError::Tampered));
        for garbage in ["", "abc", "a.b", "....", &"x".repeat(MAX_STATE_LEN + 1)] {
            assert!(sealer.open(garbage, &b).is_err(), "{garbage:.20}");
        }
    }

    #[test]
    fn expired_states_are_refused() {
        let keys = KeyRing::new("k", [7; 32]).unwrap();
        let sealer = StateSealer::new(keys.clone(), Duration::ZERO);
        let b = binding(json!({}), None);
        let sealed = sealer.seal(&b, StatePayload::default());
        // Sealed with an expiry of "now": one second later it has lapsed.
        let mut envelope: Envelope = serde_json::from_slice(&keys.open(&sealed).unwrap()).unwrap();
        assert!(envelope.exp <= now_secs());
        envelope.exp = now_secs() - 1;
        let resealed = keys.seal(&serde_json::to_vec(&envelope).unwrap());
        assert_eq!(sealer.open(&resealed, &b), Err(StateError::Expired));
    }

    #[test]
    fn a_state_sealed_before_a_key_rotation_still_opens() {
        let old = KeyRing::new("old", [1; 32]).unwrap();
        let rotated = KeyRing::new("new", [2; 32]).unwrap().with_key("old", [1; 32]).unwrap();
        let b = binding(json!({"x": 1}), None);
        let sealed = StateSealer::new(old, Duration::from_secs(60)).seal(&b, StatePayload::default());
        let sealer = StateSealer::new(rotated, Duration::from_secs(60));
        assert_eq!(sealer.open(&sealed, &b), Ok(StatePayload::default()));
        let resealed = sealer.seal(&b, StatePayload::default());
        assert!(resealed.starts_with("new."), "the first key seals");
        let without_new = StateSealer::new(KeyRing::new("old", [1; 32]).unwrap(), Duration::from_secs(60));
        assert_eq!(
            without_new.open(&resealed, &b),
            Err(StateError::Tampered),
            "an unknown key id"
        );
    }
}
