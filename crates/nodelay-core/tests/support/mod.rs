//! Settings shared by the integration tests: each test file says `mod support;` and
//! keeps its own one-line `client()`/`timeouts()` with the figures it needs.

// Each test binary compiles this module and uses its own subset of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use nodelay_core::{PoolConfig, Timeouts};
use nodelay_server::{ServerConfig, ServerHandle, TEST_CA_PEM};

/// How long the tests keep an idle connection: longer than any test runs.
pub const TEST_KEEPALIVE: Duration = Duration::from_secs(30);

/// The embedded hyper server with its default settings (HTTP/1.1, cleartext).
pub fn embedded_server() -> ServerHandle {
    nodelay_server::start(ServerConfig::default()).expect("start the embedded server")
}

/// A pool of `max_connections` (None: unbounded) keeping `max_keepalive` idle ones for
/// [`TEST_KEEPALIVE`].
pub fn pool(max_connections: Option<usize>, max_keepalive: usize) -> PoolConfig {
    PoolConfig {
        max_connections,
        max_keepalive: Some(max_keepalive),
        keepalive_expiry: Some(TEST_KEEPALIVE),
        ..PoolConfig::default()
    }
}

/// The same deadline for connect, read, write and the pool wait; no total deadline.
pub fn each_phase_within(limit: Duration) -> Timeouts {
    let t = Some(limit);
    Timeouts {
        connect: t,
        read: t,
        write: t,
        pool: t,
        total: None,
        total_configured: None,
    }
}

/// The embedded server's test CA as a PEM file, for `TlsOptions::ca_file`.
pub fn ca_file() -> PathBuf {
    let path = std::env::temp_dir().join(format!("nodelay-test-ca-{}.pem", std::process::id()));
    // Tests run in parallel and each writes the file: write a private copy and
    // rename it into place, so no test reads a half-written file (a flaky
    // TLS setup error under load).
    let unique = std::env::temp_dir().join(format!(
        "nodelay-test-ca-{}-{:?}.pem",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&unique, TEST_CA_PEM).unwrap();
    std::fs::rename(&unique, &path).unwrap();
    path
}
