//! PKCE (RFC 7636, S256 only) and the random values of a flow.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// `n` random bytes, base64url.
pub(crate) fn random(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A code verifier (43 characters of 32 random bytes) and its S256 challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    pub(crate) fn new() -> Self {
        let verifier = random(32);
        let challenge = challenge_of(&verifier);
        Pkce { verifier, challenge }
    }
}

/// BASE64URL(SHA256(verifier)).
pub(crate) fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_base64url_of_sha256() {
        // Computed independently: base64.urlsafe_b64encode(hashlib.sha256(v).digest()) in Python.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mJ92K1hJmh-TWkLRyyAXj2VLcPWQVM"),
            "ZIjTSmqA_cxL-HMNaukBVTjbcVgJpDEje2YNqXuQOMY"
        );
        let p = Pkce::new();
        assert_eq!(p.verifier.len(), 43);
        assert_ne!(p.verifier, Pkce::new().verifier);
    }
}
