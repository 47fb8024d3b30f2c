//! The JWKS cache: a rotated key is picked up without a restart, unknown key
//! ids cannot make the server fetch more than once per interval, and an
//! issuer that is briefly down does not lock everyone out.
//!
//! The issuer here is an in-process stand-in serving a JWK set over the
//! `HttpClient` trait (the real authorization server is in `oidc_provider.rs`).

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::JwkSet;
use toolport_auth::http::{HttpClient, HttpError, HttpFuture};
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig, TokenError};

use common::*;

#[derive(Debug)]
struct FakeIssuer {
    keys: Mutex<JwkSet>,
    requests: AtomicU64,
    down: AtomicBool,
}

impl HttpClient for FakeIssuer {
    fn send(&self, request: Request<Bytes>) -> HttpFuture<'_, Result<Response<Bytes>, HttpError>> {
        Box::pin(async move {
            assert_eq!(request.uri(), "https://as.test/jwks");
            self.requests.fetch_add(1, Ordering::SeqCst);
            if self.down.load(Ordering::SeqCst) {
                return Err(HttpError::Transport(
                    "https://as.test/jwks".into(),
                    "connection refused".into(),
                ));
            }
            let body = serde_json::to_vec(&*self.keys.lock().unwrap()).unwrap();
            Ok(Response::builder()
                .header("content-type", "application/json")
                .body(Bytes::from(body))
                .unwrap())
        })
    }
}

fn issuer(keys: &[&str]) -> Arc<FakeIssuer> {
    Arc::new(FakeIssuer {
        keys: Mutex::new(jwks(keys)),
        requests: AtomicU64::new(0),
        down: AtomicBool::new(false),
    })
}

fn resource_server(issuer: Arc<FakeIssuer>, refetch: Duration) -> ResourceServer {
    let mut config = ResourceServerConfig::new(RESOURCE, ISSUER, JwksSource::Url("https://as.test/jwks".into()));
    config.jwks_refetch_interval = refetch;
    ResourceServer::with_http_client(config, issuer).unwrap()
}

fn signed_by(key: &str) -> String {
    sign(key, Algorithm::RS256, Some(key), &claims("alice", "mcp"))
}

#[tokio::test]
async fn a_rotated_key_is_picked_up_without_a_restart() {
    let issuer = issuer(&["rsa-1"]);
    let rs = resource_server(issuer.clone(), Duration::ZERO);
    assert_eq!(rs.verify(&signed_by("rsa-1")).await.unwrap().subject, "alice");
    assert_eq!(rs.jwks_fetches(), 1);
    assert_eq!(rs.verify(&signed_by("rsa-1")).await.unwrap().subject, "alice");
    assert_eq!(rs.jwks_fetches(), 1, "known keys come from the cache");

    // The issuer rotates: rsa-2 signs from now on, rsa-1 is withdrawn.
    *issuer.keys.lock().unwrap() = jwks(&["rsa-2"]);
    assert_eq!(rs.verify(&signed_by("rsa-2")).await.unwrap().subject, "alice");
    assert_eq!(rs.jwks_fetches(), 2, "the unknown kid caused one refetch");
    // rsa-1 is still in no cache the server trusts once it refetches.
    assert_eq!(rs.verify(&signed_by("rsa-1")).await, Err(TokenError::UnknownKey));
}

#[tokio::test]
async fn unknown_key_ids_refetch_at_a_bounded_rate() {
    let issuer = issuer(&["rsa-1"]);
    let rs = resource_server(issuer.clone(), Duration::from_secs(3600));
    assert!(rs.verify(&signed_by("rsa-1")).await.is_ok());
    for i in 0..20 {
        let forged = sign(
            "attacker",
            Algorithm::RS256,
            Some(&format!("kid-{i}")),
            &claims("eve", "mcp"),
        );
        assert_eq!(rs.verify(&forged).await, Err(TokenError::UnknownKey));
    }
    assert_eq!(issuer.requests.load(Ordering::SeqCst), 1, "no fetch per forged kid");
    assert!(rs.verify(&signed_by("rsa-1")).await.is_ok());
}

#[tokio::test]
async fn an_issuer_that_is_down_leaves_the_cached_keys_in_use() {
    let issuer = issuer(&["rsa-1"]);
    let rs = resource_server(issuer.clone(), Duration::ZERO);
    assert!(rs.verify(&signed_by("rsa-1")).await.is_ok());
    issuer.down.store(true, Ordering::SeqCst);
    // An unknown kid tries a refetch, which fails; the known key still works.
    assert_eq!(rs.verify(&signed_by("rsa-2")).await, Err(TokenError::UnknownKey));
    assert!(rs.verify(&signed_by("rsa-1")).await.is_ok());
    // With nothing cached at all, the keys are unavailable.
    let cold = resource_server(issuer.clone(), Duration::ZERO);
    assert_eq!(cold.verify(&signed_by("rsa-1")).await, Err(TokenError::KeysUnavailable));
}
