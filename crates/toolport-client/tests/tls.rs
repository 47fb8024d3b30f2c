//! `https://` through a TLS terminator (tokio-rustls) in front of a Toolport
//! server: the client trusts a private CA given in its options, refuses the
//! same server without it, and refuses options that hold no certificate.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use toolport_client::{Client, ClientError, ClientOptions};
use toolport_http::{HttpConfig, HttpServer};
use toolport_server::{Server, tool};

const CA: &[u8] = include_bytes!("tls/ca.pem");
const CERT: &[u8] = include_bytes!("tls/server.pem");
const KEY: &[u8] = include_bytes!("tls/server.key");

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    message: String,
}

/// A Toolport server on plain HTTP and a TLS terminator in front of it; the
/// terminator's port.
async fn tls_server() -> u16 {
    let server = Server::builder("tls", "1.0.0")
        .tool(tool("echo").handler(|a: EchoArgs| async move { a.message }))
        .build()
        .unwrap();
    let http = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::default()
    };
    let bound = HttpServer::new(server, http).bind().await.unwrap();
    let backend = bound.local_addr();
    tokio::spawn(bound.serve(std::future::pending()));

    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(CERT).map(Result::unwrap).collect();
    let key = PrivateKeyDer::from_pem_slice(KEY).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A failed handshake (the refusing client) just ends the connection.
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let mut plain = TcpStream::connect(backend).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn https_with_a_private_ca() {
    let port = tls_server().await;
    let url = format!("https://127.0.0.1:{port}/mcp");
    let trusting = ClientOptions {
        extra_root_certificates: CA.to_vec(),
        ..ClientOptions::default()
    };
    let client = Client::http(&url).options(trusting).connect().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    let answer = client.call_tool("echo", json!({"message": "over TLS"})).await.unwrap();
    assert_eq!(serde_json::to_value(&answer.content).unwrap()[0]["text"], "over TLS");
    client.close().await;

    // The Mozilla roots alone do not vouch for the private CA.
    let strict = ClientOptions {
        backoff: toolport_client::Backoff {
            max_attempts: 1,
            ..Default::default()
        },
        ..ClientOptions::default()
    };
    let refused = Client::http(&url).options(strict).connect().await.unwrap_err();
    assert!(matches!(&refused, ClientError::Unreachable(_)), "{refused}");
    assert!(refused.to_string().contains("certificate"), "{refused}");

    let junk = ClientOptions {
        extra_root_certificates: b"not a certificate".to_vec(),
        ..ClientOptions::default()
    };
    let err = Client::http(&url).options(junk).build().unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidInput(m) if m.contains("no PEM certificate")),
        "{err}"
    );
}
