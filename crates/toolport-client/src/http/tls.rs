//! HTTPS for the client: rustls (ring) trusting the Mozilla root
//! certificates, plus any private CA the options name. Without the `tls`
//! feature the client speaks plain `http://` only.

use hyper_util::client::legacy::connect::HttpConnector;

use crate::error::ClientError;

/// How connections are made: TLS or plain TCP.
#[cfg(feature = "tls")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
/// How connections are made: plain TCP (this build has no TLS).
#[cfg(not(feature = "tls"))]
pub(crate) type Connector = HttpConnector;

/// Whether `https://` URLs can be served by this build.
pub(crate) const HTTPS: bool = cfg!(feature = "tls");

/// Wraps `tcp` in TLS for `https://` URLs; `extra_roots_pem` are PEM
/// certificates trusted besides the Mozilla roots.
#[cfg(feature = "tls")]
pub(crate) fn connector(mut tcp: HttpConnector, extra_roots_pem: &[u8]) -> Result<Connector, ClientError> {
    use std::sync::Arc;

    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if !extra_roots_pem.is_empty() {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(extra_roots_pem) {
            let cert = cert.map_err(|e| ClientError::InvalidInput(format!("root certificates: not PEM ({e})")))?;
            roots
                .add(cert)
                .map_err(|e| ClientError::InvalidInput(format!("root certificate refused: {e}")))?;
            added += 1;
        }
        if added == 0 {
            return Err(ClientError::InvalidInput(
                "root certificates: no PEM certificate (-----BEGIN CERTIFICATE-----) found".into(),
            ));
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::InvalidInput(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tcp.enforce_http(false);
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .wrap_connector(tcp))
}

/// Plain TCP: this build has no TLS.
#[cfg(not(feature = "tls"))]
pub(crate) fn connector(tcp: HttpConnector, extra_roots_pem: &[u8]) -> Result<Connector, ClientError> {
    if !extra_roots_pem.is_empty() {
        return Err(ClientError::InvalidInput(
            "root certificates given, but this build has no TLS (feature `tls`)".into(),
        ));
    }
    Ok(tcp)
}
