//! What the resource server adds to a request: verifying an RS256 or ES256
//! access token (keys cached; and a token seen before, from the cache of
//! verified tokens), authorizing a `tools/call`, and trimming a
//! 100-tool `tools/list` result; beside a floor that only base64-decodes and
//! parses the token's payload, the least any check of a JWT must do.
//!
//! `cargo bench -p toolport-auth --bench verify`

use std::hint::black_box;
use std::path::PathBuf;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use toolport_auth::resource::{JwksSource, ResourceServer, ResourceServerConfig};
use toolport_server::Principal;
use toolport_server::admission::{Authorizer, TargetKind};

fn keys() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/keys")
}

fn token(key: &str, alg: Algorithm) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({"iss": "https://as.test", "aud": "http://127.0.0.1:8080/mcp", "sub": "alice",
        "client_id": "c", "scope": "mcp:tools files:write", "iat": now, "exp": now + 3600});
    let pem = std::fs::read(keys().join(format!("{key}.pem"))).unwrap();
    let encoding = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem).unwrap(),
        _ => EncodingKey::from_rsa_pem(&pem).unwrap(),
    };
    let mut header = Header::new(alg);
    header.kid = Some(key.into());
    jsonwebtoken::encode(&header, &claims, &encoding).unwrap()
}

fn bench(c: &mut Criterion) {
    let jwks = JwkSet {
        keys: ["rsa-1", "ec-1"]
            .iter()
            .map(|k| {
                serde_json::from_str(&std::fs::read_to_string(keys().join(format!("{k}.jwk.json"))).unwrap()).unwrap()
            })
            .collect(),
    };
    let mut config =
        ResourceServerConfig::new("http://127.0.0.1:8080/mcp", "https://as.test", JwksSource::Static(jwks));
    for i in (0..100).step_by(2) {
        config
            .tool_scopes
            .insert(format!("tool_{i:03}"), vec!["files:write".into()]);
    }
    let cached = ResourceServer::new(config.clone()).unwrap();
    config.verified_token_ttl = std::time::Duration::ZERO;
    let rs = ResourceServer::new(config).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let rsa = token("rsa-1", Algorithm::RS256);
    let ec = token("ec-1", Algorithm::ES256);
    c.bench_function("floor: decode the payload", |b| {
        b.iter(|| {
            let payload = rsa.split('.').nth(1).unwrap();
            let bytes = URL_SAFE_NO_PAD.decode(black_box(payload)).unwrap();
            black_box(serde_json::from_slice::<Value>(&bytes).unwrap())
        })
    });
    c.bench_function("verify RS256", |b| {
        b.iter(|| runtime.block_on(rs.verify(black_box(&rsa))).unwrap())
    });
    c.bench_function("verify ES256", |b| {
        b.iter(|| runtime.block_on(rs.verify(black_box(&ec))).unwrap())
    });
    c.bench_function("verify RS256, already verified", |b| {
        b.iter(|| runtime.block_on(cached.verify(black_box(&rsa))).unwrap())
    });
    let principal = Principal {
        subject: "alice".into(),
        client_id: Some("c".into()),
        scopes: vec!["mcp:tools".into()],
        credential: None,
    };
    c.bench_function("authorize tools/call", |b| {
        b.iter(|| {
            black_box(
                rs.authorize(
                    &principal,
                    "tools/call",
                    Some((TargetKind::Tool, black_box("tool_042"))),
                )
                .is_err(),
            )
        })
    });
    // Lists are trimmed before they are paginated: one visibility per
    // request, asked once per entry.
    let names: Vec<String> = (0..100).map(|i| format!("tool_{i:03}")).collect();
    c.bench_function("decide the visibility of 100 tools", |b| {
        b.iter(|| {
            let visible = rs.visible(&principal);
            black_box(names.iter().filter(|n| visible((TargetKind::Tool, n))).count())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
