//! The keys that seal `requestState`: several may open, the first seals.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Longest key id: it travels in every sealed state.
const MAX_KEY_ID_LEN: usize = 16;

/// HMAC-SHA256 keys, each with a short id. The first key seals; every key
/// opens. A sealed blob is `<key id>.<payload>.<tag>`, the tag covering the
/// id and the payload, so opening picks its key directly.
///
/// To rotate the key of replicas behind one load balancer: add the new key
/// second on every replica, then move it first, then drop the old one once
/// the states it sealed have expired.
#[derive(Clone)]
pub struct KeyRing {
    keys: Vec<(String, [u8; 32])>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a key; the ids say which are configured.
        f.debug_struct("KeyRing")
            .field("key_ids", &self.keys.iter().map(|(id, _)| id).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Why a key ring could not be built, or a blob not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRingError {
    /// A key id must be 1 to 16 characters of `A-Z a-z 0-9 _ -`.
    #[error("key id {0:?} must be 1 to 16 characters of A-Z, a-z, 0-9, '_' and '-'")]
    InvalidKeyId(String),
    /// Two keys with one id.
    #[error("key id {0:?} is used twice")]
    DuplicateKeyId(String),
    /// The blob is not `<key id>.<payload>.<tag>` in base64url.
    #[error("sealed data is malformed")]
    Malformed,
    /// Unknown key id, or the tag does not match: altered, or sealed by
    /// someone else. The two are one error, so that probing key ids tells an
    /// attacker nothing.
    #[error("sealed data failed its integrity check")]
    Tampered,
}

fn valid_key_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_KEY_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl KeyRing {
    /// A ring of one key, which seals and opens.
    pub fn new(id: impl Into<String>, key: [u8; 32]) -> Result<Self, KeyRingError> {
        let id = id.into();
        if !valid_key_id(&id) {
            return Err(KeyRingError::InvalidKeyId(id));
        }
        Ok(KeyRing { keys: vec![(id, key)] })
    }

    /// A ring of one random key: sealed data survives only this process.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is available");
        KeyRing::new("r", key).expect("a valid key id")
    }

    /// Adds a key that opens (but does not seal), for example the previous
    /// key during a rotation.
    pub fn with_key(mut self, id: impl Into<String>, key: [u8; 32]) -> Result<Self, KeyRingError> {
        let id = id.into();
        if !valid_key_id(&id) {
            return Err(KeyRingError::InvalidKeyId(id));
        }
        if self.keys.iter().any(|(known, _)| *known == id) {
            return Err(KeyRingError::DuplicateKeyId(id));
        }
        self.keys.push((id, key));
        Ok(self)
    }

    /// The id of the key that seals.
    pub fn sealing_key_id(&self) -> &str {
        &self.keys[0].0
    }

    fn mac(key: &[u8; 32], key_id: &str, payload: &str) -> HmacSha256 {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
        mac.update(key_id.as_bytes());
        mac.update(b".");
        mac.update(payload.as_bytes());
        mac
    }

    /// Seals `data` with the first key.
    pub fn seal(&self, data: &[u8]) -> String {
        let (id, key) = &self.keys[0];
        let payload = URL_SAFE_NO_PAD.encode(data);
        let tag = URL_SAFE_NO_PAD.encode(Self::mac(key, id, &payload).finalize().into_bytes());
        format!("{id}.{payload}.{tag}")
    }

    /// Opens a blob sealed by any key of the ring.
    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, KeyRingError> {
        let mut parts = sealed.splitn(3, '.');
        let (Some(id), Some(payload), Some(tag)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(KeyRingError::Malformed);
        };
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| KeyRingError::Malformed)?;
        let (_, key) = self
            .keys
            .iter()
            .find(|(known, _)| known == id)
            .ok_or(KeyRingError::Tampered)?;
        Self::mac(key, id, payload)
            .verify_slice(&tag)
            .map_err(|_| KeyRingError::Tampered)?;
        URL_SAFE_NO_PAD.decode(payload).map_err(|_| KeyRingError::Malformed)
    }
}
