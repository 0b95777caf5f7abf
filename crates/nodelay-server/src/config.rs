//! What the caller chooses about a server: where it listens, how many threads,
//! which protocols.

use crate::tls::TlsIdentity;

/// Where the server listens and how many runtime threads it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Host name or IP address to bind, `"127.0.0.1"` by default.
    pub host: String,
    /// TCP port to bind; `0` lets the OS choose a free one (see [`crate::ServerHandle::addr`]).
    pub port: u16,
    /// Tokio worker threads. `1` (the default) runs everything on one thread with a
    /// current-thread runtime: no cross-thread wake-ups, which is the fastest setup
    /// for a benchmark whose client is on the same 2-core machine. `0` counts as `1`.
    pub workers: usize,
    /// Serve HTTP/2 too: h2c with prior knowledge next to HTTP/1.1 on a plain
    /// port, `h2` by ALPN on a TLS port. Off by default (HTTP/1.1 only).
    pub http2: bool,
    /// Serve HTTPS with this certificate instead of plain HTTP.
    pub tls: Option<TlsIdentity>,
}

/// Default host: loopback only, so tests never expose the server to the network.
pub const DEFAULT_HOST: &str = "127.0.0.1";

/// Default worker count (see [`ServerConfig::workers`]).
pub const DEFAULT_WORKERS: usize = 1;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: DEFAULT_HOST.to_owned(),
            port: 0,
            workers: DEFAULT_WORKERS,
            http2: false,
            tls: None,
        }
    }
}
