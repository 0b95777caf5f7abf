//! HTTPS for the server: a certificate chain and key (PEM) become a rustls
//! acceptor that offers `h2` and `http/1.1` by ALPN, or only `http/1.1`.

use std::io;
use std::sync::Arc;

use rustls::crypto::ring;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// ALPN id of HTTP/2 over TLS (RFC 9113 §3.2).
pub(crate) const ALPN_H2: &[u8] = b"h2";
/// ALPN id of HTTP/1.1 (RFC 7301 §6).
pub(crate) const ALPN_HTTP11: &[u8] = b"http/1.1";

/// The server's certificate chain and private key, both PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct TlsIdentity {
    /// Leaf certificate first, then intermediates.
    pub cert_chain_pem: Vec<u8>,
    /// PKCS#8, PKCS#1 or SEC1 private key of the leaf.
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for TlsIdentity {
    // The key never appears in logs or panic messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity").finish_non_exhaustive()
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// An acceptor for `identity`; ALPN offers `h2` first when `http2` is on.
pub(crate) fn acceptor(identity: &TlsIdentity, http2: bool) -> io::Result<TlsAcceptor> {
    let chain = CertificateDer::pem_slice_iter(&identity.cert_chain_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("bad certificate PEM: {e}")))?;
    if chain.is_empty() {
        return Err(invalid("no certificate in the PEM data".to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem)
        .map_err(|e| invalid(format!("bad private key PEM: {e}")))?;
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(format!("TLS setup failed: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| invalid(format!("certificate and key do not match: {e}")))?;
    config.alpn_protocols = if http2 {
        vec![ALPN_H2.to_vec(), ALPN_HTTP11.to_vec()]
    } else {
        vec![ALPN_HTTP11.to_vec()]
    };
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// PEM of the CA that signed [`TlsIdentity::localhost`]: trust it (a client's
/// CA bundle) to verify the built-in test certificate.
pub const TEST_CA_PEM: &str = include_str!("../certs/ca.pem");

impl TlsIdentity {
    /// The built-in test identity: a certificate for `localhost`, `127.0.0.1`
    /// and `::1`, signed by [`TEST_CA_PEM`], valid until 2126. Its key is
    /// public (it ships in the source), so it only suits loopback tests and
    /// the benchmark lab, which is all this server is for. The CA's own key
    /// was discarded after signing: nothing else can be signed by it.
    pub fn localhost() -> TlsIdentity {
        TlsIdentity {
            cert_chain_pem: include_bytes!("../certs/localhost.pem").to_vec(),
            key_pem: include_bytes!("../certs/localhost.key").to_vec(),
        }
    }
}
