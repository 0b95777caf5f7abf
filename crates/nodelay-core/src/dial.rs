//! How a client opens its connections: the per-client choice of a Unix
//! socket or a local address, read by the TCP connect (`connect.rs`,
//! `aconnect.rs`) and carried by the TLS setup of the pool (`tls.rs`).

use std::net::IpAddr;
use std::path::PathBuf;

/// How a client opens its connections (httpx's `HTTPTransport(uds=,
/// local_address=)`), fixed per client and so per pool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dial {
    /// Connect every origin to this Unix domain socket instead of resolving
    /// its host (the URL still names the host for `Host`, SNI and cookies).
    pub uds: Option<PathBuf>,
    /// Bind outgoing TCP connections to this local address (port chosen by
    /// the kernel) before connecting.
    pub local_address: Option<IpAddr>,
}
