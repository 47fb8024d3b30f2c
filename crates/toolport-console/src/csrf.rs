//! Protection of the admin API's state-changing calls against cross-site
//! requests: such a call must carry `X-Toolport-Csrf`, a token the console
//! reads from `/admin/overview`.
//!
//! A foreign page can make a browser send a request, but cannot read the
//! answer (no CORS headers are ever sent) nor add a custom header without a
//! preflight that is never approved; so it never has the token, and a
//! request without it is refused. The token is an HMAC of the caller's
//! identity under a key made at start-up: one caller's token is worth
//! nothing for another, and a restart retires every token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use toolport_server::Principal;

/// The header that carries the token.
pub(crate) const HEADER: &str = "x-toolport-csrf";

/// The key tokens are made with.
pub(crate) struct CsrfKey([u8; 32]);

impl std::fmt::Debug for CsrfKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CsrfKey([redacted])")
    }
}

impl CsrfKey {
    /// A fresh random key.
    pub(crate) fn random() -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is available");
        CsrfKey(key)
    }

    /// The token of a caller (`None`: the anonymous caller of an
    /// unprotected server).
    pub(crate) fn token(&self, principal: Option<&Principal>) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("any key length");
        match principal {
            None => mac.update(b"anonymous"),
            Some(p) => {
                mac.update(b"principal\0");
                mac.update(p.subject.as_bytes());
                mac.update(b"\0");
                mac.update(p.client_id.as_deref().unwrap_or_default().as_bytes());
            }
        }
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// Whether `presented` is the caller's token, compared in constant time.
    pub(crate) fn check(&self, principal: Option<&Principal>, presented: Option<&[u8]>) -> bool {
        let Some(presented) = presented else {
            return false;
        };
        let expected = self.token(principal);
        let expected = expected.as_bytes();
        expected.len() == presented.len() && expected.iter().zip(presented).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_worth_something_only_for_its_caller_and_key() {
        let key = CsrfKey::random();
        let alice = Principal {
            subject: "alice".into(),
            client_id: Some("console".into()),
            scopes: vec![],
            credential: None,
        };
        let bob = Principal {
            subject: "bob".into(),
            ..alice.clone()
        };
        let token = key.token(Some(&alice));
        assert!(key.check(Some(&alice), Some(token.as_bytes())));
        assert!(!key.check(Some(&bob), Some(token.as_bytes())));
        assert!(!key.check(None, Some(token.as_bytes())));
        assert!(!key.check(Some(&alice), None));
        assert!(!key.check(Some(&alice), Some(b"")));
        assert!(!key.check(Some(&alice), Some(&token.as_bytes()[1..])));
        assert!(!CsrfKey::random().check(Some(&alice), Some(token.as_bytes())));
        assert!(key.check(None, Some(key.token(None).as_bytes())));
        assert!(!format!("{key:?}").contains(&format!("{:?}", key.0)));
    }
}
