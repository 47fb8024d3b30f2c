//! TLS for the client and for push notifications: rustls (ring) with the
//! Mozilla root certificates.

use std::sync::Arc;

/// TLS to `host` over `tcp`, checked against the Mozilla roots.
pub(crate) async fn connect(
    tcp: tokio::net::TcpStream,
    host: &str,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    });
    let name =
        rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|e| format!("TLS name {host:?}: {e}"))?;
    tokio_rustls::TlsConnector::from(config.clone())
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with {host}: {e}"))
}
