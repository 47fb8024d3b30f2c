//! DPoP (RFC 9449): tokens bound to a key the client holds. Each request to
//! the token endpoint and to the MCP server carries a fresh proof, a JWT
//! signed with that key naming the method and URL (and, at the MCP server,
//! the hash of the access token), so a stolen token is useless without the
//! key. Servers may require a nonce: their `use_dpop_nonce` answer carries
//! one in `DPoP-Nonce`, and the request is sent again with it.

use std::fmt;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::AuthError;

/// The proof algorithm: ES256 (P-256), the one every DPoP server supports.
pub(crate) const ALGORITHM: &str = "ES256";

/// The client's DPoP key and the nonces the servers handed out.
pub(crate) struct Dpop {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
    jwk: Value,
    /// The authorization server's latest nonce.
    pub(crate) token_nonce: Mutex<Option<String>>,
    /// The MCP server's latest nonce.
    pub(crate) resource_nonce: Mutex<Option<String>>,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop").field("jwk", &self.jwk).finish_non_exhaustive()
    }
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

impl Dpop {
    /// A new P-256 key, made for this client and kept in memory only.
    pub(crate) fn generate() -> Result<Dpop, AuthError> {
        let failed = || AuthError::Token("cannot make a DPoP key".into());
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|_| failed())?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).map_err(|_| failed())?;
        // An uncompressed point: 0x04, then x and y.
        let point = pair.public_key().as_ref();
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..65])});
        Ok(Dpop {
            pair,
            rng,
            jwk,
            token_nonce: Mutex::default(),
            resource_nonce: Mutex::default(),
        })
    }

    /// A fresh proof for `method` on `url` (its query and fragment left
    /// out), with the nonce and, when presenting `access_token`, its hash.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk});
        let mut claims = json!({
            "jti": super::pkce::random(16),
            "htm": method,
            "htu": htu,
            "iat": jsonwebtoken::get_current_timestamp(),
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        if let Some(token) = access_token {
            claims["ath"] = b64(&Sha256::digest(token.as_bytes())).into();
        }
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let signature = self
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| AuthError::Token("cannot sign a DPoP proof".into()))?;
        Ok(format!("{input}.{}", b64(signature.as_ref())))
    }

    /// Remembers the nonce a server handed out.
    pub(crate) fn remember(slot: &Mutex<Option<String>>, nonce: &str) {
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(nonce.to_owned());
    }

    /// The nonce to send next.
    pub(crate) fn nonce(slot: &Mutex<Option<String>>) -> Option<String> {
        slot.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_with_its_own_key_and_names_the_request() {
        let dpop = Dpop::generate().unwrap();
        let proof = dpop
            .proof("POST", "https://mcp.example/mcp?x=1#f", Some("n-1"), Some("tok"))
            .unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(claims["ath"], b64(&Sha256::digest(b"tok")));
        // The signature verifies with the public key in the header.
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(header["jwk"].clone()).unwrap();
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        jsonwebtoken::decode::<Value>(&proof, &key, &validation).unwrap();
        // Every proof is fresh.
        let again = dpop.proof("POST", "https://mcp.example/mcp", None, None).unwrap();
        assert_ne!(proof.split('.').nth(1), again.split('.').nth(1));
    }
}
