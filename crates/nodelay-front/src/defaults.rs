//! The one table of client defaults. The Python package (through
//! `nodelay._core.DEFAULTS`), the pyo3 signatures of `nodelay-py` and the C
//! ABI (`nodelay-ffi`'s `NODELAY_DEFAULT_*` and `nodelay_options_init`) all
//! read these values; none of them spells one again. Every timeout is finite,
//! so a silent peer can never hang a program forever (docs/hostile.md).

/// Seconds to establish a TCP connection (and TLS): long enough for a slow
/// network, short enough that an unroutable address fails in reasonable time.
pub const CONNECT_TIMEOUT_SECS: f64 = 10.0;

/// Seconds of read *inactivity* (between two received bytes), not a total
/// deadline.
pub const READ_TIMEOUT_SECS: f64 = 30.0;

/// Seconds a write may block (the peer not reading).
pub const WRITE_TIMEOUT_SECS: f64 = 30.0;

/// Seconds to wait for a free connection when all `MAX_CONNECTIONS` are busy.
pub const POOL_TIMEOUT_SECS: f64 = 30.0;

/// Redirects followed before giving up (`TooManyRedirects`), as browsers,
/// curl and httpx do.
pub const MAX_REDIRECTS: u32 = 20;

/// Connections per client (busy and idle), over all origins.
pub const MAX_CONNECTIONS: u32 = 100;

/// Idle connections kept in the pool for reuse (httpx's default).
/// Connections beyond it are closed as they come back, so after a burst a
/// client does not sit on more connections than it needs: a server with a
/// connection limit (waitress serves 98 at a time by default) stops accepting
/// at that limit, and requests whose connections wait in its listen backlog
/// are served only once a kept connection closes; with 100 kept, 2 of 200
/// concurrent requests waited for their read timeout (docs/pool.md,
/// "Keep-alive default").
pub const MAX_KEEPALIVE: u32 = 20;

// Kept idle connections are counted in `MAX_CONNECTIONS` (checked when built).
const _: () = assert!(MAX_KEEPALIVE <= MAX_CONNECTIONS);

/// Seconds an idle connection stays pooled. Servers commonly close idle
/// connections after 5-60 s; expiring first avoids most races with a closing
/// server.
pub const KEEPALIVE_EXPIRY_SECS: f64 = 5.0;

/// The `User-Agent` a request gets when neither the client nor the request
/// sets one.
pub const USER_AGENT: &str = concat!("nodelay/", env!("CARGO_PKG_VERSION"));

/// The `Accept` a Python client sends by default (as httpx and requests do).
pub const ACCEPT: &str = "*/*";

/// The `Accept-Encoding` a request gets when it has none: every coding the
/// engine decodes (gzip incl. multi-member, zlib/raw deflate, brotli, zstd).
pub const ACCEPT_ENCODING: &str = nodelay_core::decode::ACCEPT_ENCODING;

/// Cap on a decoded (decompressed) body, in bytes (docs/hostile.md).
pub const MAX_DECODED_SIZE: u64 = nodelay_core::decode::DEFAULT_MAX_DECODED_BYTES;

/// Requests a batch (`get_many`, `map`) runs at once.
pub const BATCH_CONCURRENCY: u32 = 32;

/// One default of the table, by type, for a front that exports the table
/// as a whole (the Python package reads it as a dict).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A number of seconds.
    Seconds(f64),
    /// A count.
    Count(u64),
    /// A header value.
    Text(&'static str),
}

/// The whole table, name → value, in the order above. The names are the
/// Python package's (`DEFAULT_<NAME>` in `nodelay._config`, upper-cased).
pub const TABLE: &[(&str, Value)] = &[
    ("connect_timeout", Value::Seconds(CONNECT_TIMEOUT_SECS)),
    ("read_timeout", Value::Seconds(READ_TIMEOUT_SECS)),
    ("write_timeout", Value::Seconds(WRITE_TIMEOUT_SECS)),
    ("pool_timeout", Value::Seconds(POOL_TIMEOUT_SECS)),
    ("max_redirects", Value::Count(MAX_REDIRECTS as u64)),
    ("max_connections", Value::Count(MAX_CONNECTIONS as u64)),
    ("max_keepalive", Value::Count(MAX_KEEPALIVE as u64)),
    ("keepalive_expiry", Value::Seconds(KEEPALIVE_EXPIRY_SECS)),
    ("user_agent", Value::Text(USER_AGENT)),
    ("accept", Value::Text(ACCEPT)),
    ("accept_encoding", Value::Text(ACCEPT_ENCODING)),
    ("max_decoded_size", Value::Count(MAX_DECODED_SIZE)),
    ("batch_concurrency", Value::Count(BATCH_CONCURRENCY as u64)),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_timeout_is_finite_and_positive() {
        for (name, value) in TABLE {
            if let Value::Seconds(s) = value {
                assert!(s.is_finite() && *s > 0.0, "{name} = {s}");
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = TABLE.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        assert!(USER_AGENT.starts_with("nodelay/"));
    }
}
