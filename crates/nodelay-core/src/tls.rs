//! TLS with rustls: client configurations built once and shared, the
//! handshake bounded by the connect deadline, and certificate failures
//! reported with their reason.

use std::io;
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
    StreamOwned,
};

use crate::deadline::{Budget, Deadlines, Phase};
use crate::dial::Dial;
use crate::error::{Error, ErrorKind};
use crate::interrupt::Interrupt;

/// ALPN id of HTTP/1.1 (RFC 7301 §6): what the blocking HTTP/1.1 path offers.
pub const ALPN_HTTP11: &[u8] = b"http/1.1";
/// ALPN id of HTTP/2 over TLS (RFC 9113 §3.2).
pub const ALPN_H2: &[u8] = b"h2";

/// ALPN protocols the blocking HTTP/1.1 connect offers.
const ALPN_PROTOCOLS: &[&[u8]] = &[ALPN_HTTP11];

/// TLS ≥ 1.2 only (docs/hostile.md D).
static PROTOCOL_VERSIONS: &[&rustls::SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

/// A client's TLS settings. They are fixed per client, and so per pool:
/// a `verify=False` client never lends connections to a verifying one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TlsOptions {
    /// Verify the server certificate chain and name (default true).
    pub verify: bool,
    /// PEM bundle that replaces the system trust store.
    pub ca_file: Option<PathBuf>,
    /// Directory of PEM certificates (OpenSSL's `CApath`) that replaces the
    /// system trust store; with `ca_file`, both are trusted.
    pub ca_dir: Option<PathBuf>,
    /// Whether the `SSL_CERT_FILE` / `SSL_CERT_DIR` environment variables
    /// replace the system trust store when neither `ca_file` nor `ca_dir` is
    /// given (rustls-native-certs' rule, OpenSSL's too). A front that decides
    /// about the environment itself (Python's `trust_env`) turns this off and
    /// passes what it read as `ca_file` / `ca_dir`.
    pub trust_store_env: bool,
    /// PEM client certificate chain, and its key (which may sit in the same file).
    pub client_cert: Option<PathBuf>,
    /// PEM private key of `client_cert`, when not in the same file.
    pub client_key: Option<PathBuf>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            verify: true,
            ca_file: None,
            ca_dir: None,
            trust_store_env: true,
            client_cert: None,
            client_key: None,
        }
    }
}

pub(crate) type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// TLS with the origin inside a TLS session with an `https://` proxy.
pub(crate) type NestedTlsStream = StreamOwned<ClientConnection, TlsStream>;

/// What a TLS session can run over: a byte stream whose TCP socket carries
/// the timeouts (plain TCP, or TLS to a proxy for a tunnel inside it).
pub(crate) trait OverTcp: io::Read + io::Write {
    fn tcp(&self) -> &TcpStream;
}

impl OverTcp for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl OverTcp for TlsStream {
    fn tcp(&self) -> &TcpStream {
        &self.sock
    }
}

/// Builds the client configuration on first use (a client that never speaks
/// https never reads the trust store) and shares the default one process-wide
/// (loading the system store costs milliseconds; a new client must not pay it).
pub(crate) struct TlsSetup {
    options: TlsOptions,
    config: OnceLock<Result<Arc<ClientConfig>, String>>,
    /// The same configuration with other ALPN lists (the async connect: `h2`
    /// and `http/1.1`), derived once per list.
    with_alpn: Mutex<Vec<AlpnConfig>>,
    /// How connections are opened before TLS (a Unix socket, a local address):
    /// kept here because every connect path already receives this setup.
    dial: Dial,
}

/// An ALPN list (protocol ids in preference order) and the configuration offering it.
type AlpnConfig = (Vec<Vec<u8>>, Arc<ClientConfig>);

/// A built configuration, or why it could not be built.
type BuiltConfig = Result<Arc<ClientConfig>, String>;

/// The default configuration, shared process-wide; the second one ignores
/// `SSL_CERT_FILE` / `SSL_CERT_DIR` (`TlsOptions::trust_store_env` off).
static DEFAULT_CONFIG: OnceLock<BuiltConfig> = OnceLock::new();
static DEFAULT_CONFIG_WITHOUT_ENV: OnceLock<BuiltConfig> = OnceLock::new();

impl TlsSetup {
    /// A setup whose connections are opened as `dial` says.
    pub fn dialing(options: TlsOptions, dial: Dial) -> Self {
        TlsSetup {
            options,
            config: OnceLock::new(),
            with_alpn: Mutex::new(Vec::new()),
            dial,
        }
    }

    /// How this client opens its connections (`connect.rs`, `aconnect.rs`).
    pub(crate) fn dial(&self) -> &Dial {
        &self.dial
    }

    /// The shared client configuration (ALPN: `ALPN_PROTOCOLS`), built on first use.
    pub(crate) fn config(&self) -> Result<Arc<ClientConfig>, Error> {
        let shared = TlsOptions {
            trust_store_env: self.options.trust_store_env,
            ..TlsOptions::default()
        };
        let built = if self.options != shared {
            &self.config
        } else if shared.trust_store_env {
            &DEFAULT_CONFIG
        } else {
            &DEFAULT_CONFIG_WITHOUT_ENV
        }
        .get_or_init(|| build_config(&self.options));
        built.clone().map_err(|m| Error::new(ErrorKind::Tls, m))
    }

    /// The configuration offering `alpn` (in preference order); every other
    /// setting (verification, CA, client certificate) is this client's.
    pub fn config_with_alpn(&self, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, Error> {
        let base = self.config()?;
        if base
            .alpn_protocols
            .iter()
            .map(Vec::as_slice)
            .eq(alpn.iter().copied())
        {
            return Ok(base);
        }
        let mut cache = self.with_alpn.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, config)) = cache
            .iter()
            .find(|(list, _)| list.iter().map(Vec::as_slice).eq(alpn.iter().copied()))
        {
            return Ok(Arc::clone(config));
        }
        let mut config = (*base).clone();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let config = Arc::new(config);
        cache.push((config.alpn_protocols.clone(), Arc::clone(&config)));
        Ok(config)
    }

    /// Runs the TLS handshake on a connected socket within the connect deadline.
    pub fn handshake<S: OverTcp>(
        &self,
        host: &str,
        mut sock: S,
        deadlines: &Deadlines,
        interrupt: &dyn Interrupt,
    ) -> Result<StreamOwned<ClientConnection, S>, Error> {
        let config = self.config()?;
        let name = server_name(host)?;
        let mut conn = ClientConnection::new(config, name)
            .map_err(|e| Error::new(ErrorKind::Tls, format!("TLS setup failed: {e}")))?;
        while conn.is_handshaking() {
            let budget = match deadlines.budget(deadlines.timeouts.connect) {
                Budget::Expired => return Err(tls_timed_out(host, deadlines)),
                Budget::Wait(t) => t,
            };
            let tcp = sock.tcp();
            tcp.set_read_timeout(budget)
                .and_then(|()| tcp.set_write_timeout(budget))
                .map_err(|e| {
                    Error::new(ErrorKind::Connect, format!("socket setup failed: {e}"))
                        .with_source(e)
                })?;
            // One read or write per turn, driven here rather than by
            // rustls' `complete_io`, which retries on EINTR by itself: a
            // Ctrl-C during a handshake with a server that never answers
            // would wait for the whole connect timeout.
            let step = if conn.wants_write() {
                conn.write_tls(&mut sock)
            } else {
                match conn.read_tls(&mut sock) {
                    Ok(0) => Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection during the TLS handshake",
                    )),
                    Ok(n) => match conn.process_new_packets() {
                        Ok(_) => Ok(n),
                        Err(e) => {
                            // Tell the server why (the alert rustls queued), as
                            // `complete_io` does; the handshake fails anyway.
                            let _ = conn.write_tls(&mut sock);
                            Err(io::Error::new(io::ErrorKind::InvalidData, e))
                        }
                    },
                    Err(e) => Err(e),
                }
            };
            match step {
                Ok(_) => {}
                // A signal interrupted the read or write: nothing was lost
                // (rustls consumed no bytes of the failed call), so the
                // handshake carries on unless the caller must stop.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if interrupt.should_abort() {
                        return Err(crate::interrupt::interrupted());
                    }
                }
                Err(e) if is_timeout(&e) => {
                    return Err(tls_timed_out(host, deadlines).with_source(e))
                }
                Err(e) => return Err(handshake_error(e)),
            }
        }
        // The client's last handshake flight (its Finished) may still be
        // queued: it leaves with the request's first write, which writes
        // pending TLS data first.
        Ok(StreamOwned::new(conn, sock))
    }
}

/// The name the certificate must match. A trailing dot is the same host for
/// DNS but not for certificates. An IP literal becomes
/// `ServerName::IpAddress`, for which rustls sends no SNI (RFC 6066 §3 forbids
/// literal addresses in SNI).
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, Error> {
    let host = host.strip_suffix('.').unwrap_or(host);
    ServerName::try_from(host.to_owned()).map_err(|e| {
        Error::new(
            ErrorKind::InvalidUrl,
            format!("invalid TLS server name {host:?}: {e}"),
        )
    })
}

pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// The connect timeout's error for a TLS handshake with `host`.
pub(crate) fn tls_timed_out(host: &str, deadlines: &Deadlines) -> Error {
    deadlines.timed_out(Phase::connect(&format!(
        "performing the TLS handshake with {host}"
    )))
}

/// The error of a failed handshake: a certificate failure with its reason,
/// another TLS failure, or a connection failure (a timeout is the caller's:
/// `tls_timed_out`).
pub(crate) fn handshake_error(e: io::Error) -> Error {
    let tls_failure = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .cloned();
    match tls_failure {
        Some(rustls::Error::InvalidCertificate(reason)) => Error::new(
            ErrorKind::Tls,
            format!(
                "certificate verify failed: {}",
                describe_certificate_error(&reason)
            ),
        ),
        Some(other) => Error::new(ErrorKind::Tls, format!("TLS handshake failed: {other}")),
        None => Error::new(
            ErrorKind::Connect,
            format!("connection failed during the TLS handshake: {e}"),
        )
        .with_source(e),
    }
}

fn describe_certificate_error(e: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    match e {
        C::Expired | C::ExpiredContext { .. } => "certificate has expired".to_owned(),
        C::NotValidYet | C::NotValidYetContext { .. } => "certificate is not valid yet".to_owned(),
        C::UnknownIssuer => "self-signed certificate or unknown issuer".to_owned(),
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            "certificate is not valid for this host name".to_owned()
        }
        C::Revoked => "certificate has been revoked".to_owned(),
        C::BadSignature => "bad certificate signature".to_owned(),
        other => format!("{other:?}"),
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}

fn build_config(options: &TlsOptions) -> Result<Arc<ClientConfig>, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(PROTOCOL_VERSIONS)
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let builder = if options.verify {
        builder.with_root_certificates(root_store(options)?)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                algorithms: provider.signature_verification_algorithms,
            }))
    };
    let mut config = match &options.client_cert {
        None => builder.with_no_client_auth(),
        Some(cert_path) => {
            let chain = CertificateDer::pem_file_iter(cert_path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| {
                    format!(
                        "cannot read client certificate {}: {e}",
                        cert_path.display()
                    )
                })?;
            let key_path = options.client_key.as_ref().unwrap_or(cert_path);
            let key = PrivateKeyDer::from_pem_file(key_path)
                .map_err(|e| format!("cannot read client key {}: {e}", key_path.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("invalid client certificate: {e}"))?
        }
    };
    config.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

fn root_store(options: &TlsOptions) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    // A user bundle or directory replaces the system store, as with curl
    // --cacert / --capath.
    if let Some(path) = &options.ca_file {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("cannot read CA bundle {}: {e}", path.display()))?;
        let (added, _) = store.add_parsable_certificates(certs);
        if added == 0 {
            return Err(format!("no usable CA certificate in {}", path.display()));
        }
    }
    if let Some(dir) = &options.ca_dir {
        let found = rustls_native_certs::load_certs_from_paths(None, Some(dir));
        let (added, _) = store.add_parsable_certificates(found.certs);
        if added == 0 {
            let why = found
                .errors
                .first()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            return Err(format!(
                "no usable CA certificate in the directory {}{why}",
                dir.display()
            ));
        }
    }
    if options.ca_file.is_none() && options.ca_dir.is_none() {
        let found = if options.trust_store_env {
            rustls_native_certs::load_native_certs()
        } else {
            system_certs_ignoring_env()
        };
        store.add_parsable_certificates(found.certs);
        if store.is_empty() {
            return Err("no trusted CA certificates found in the system store".to_owned());
        }
    }
    Ok(store)
}

/// The environment variables with which rustls-native-certs (and OpenSSL)
/// replace the system trust store by a file or a list of directories.
const TRUST_STORE_ENV: [&str; 2] = ["SSL_CERT_FILE", "SSL_CERT_DIR"];

/// The system trust store, whatever `SSL_CERT_FILE` / `SSL_CERT_DIR` say.
/// On Linux and the BSDs it is every certificate in the system's certificate
/// directories (`/etc/ssl/certs`, `/etc/pki/tls/certs`...), which hold the
/// distribution's bundle file too; elsewhere the store is the operating
/// system's, which rustls-native-certs only reads when neither variable is set.
fn system_certs_ignoring_env() -> rustls_native_certs::CertificateResult {
    if TRUST_STORE_ENV
        .iter()
        .all(|name| std::env::var_os(name).is_none())
    {
        return rustls_native_certs::load_native_certs();
    }
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let mut all = rustls_native_certs::CertificateResult::default();
        for dir in openssl_probe::candidate_cert_dirs() {
            let found = rustls_native_certs::load_certs_from_paths(None, Some(dir));
            all.certs.extend(found.certs);
            all.errors.extend(found.errors);
        }
        all
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        // The platform store has no public entry point that skips the
        // variables: they are honoured (docs/tls.md says so).
        rustls_native_certs::load_native_certs()
    }
}

/// `verify=False`: accept any certificate, but still check the handshake
/// signatures so the connection is at least bound to the presented key.
#[derive(Debug)]
struct AcceptAnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
