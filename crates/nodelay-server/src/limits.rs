//! Every bound the server puts on its inputs, in one place.
//!
//! The server is reachable by anything that can open a socket on its host, so a
//! number in a path or a request body must never make it allocate or wait without
//! bound. Requests beyond these limits get `400 Bad Request` (`413` for bodies).

use std::time::Duration;

/// Largest body `/bytes/{n}` and `/chunked/{n}` serve: 1 GiB. Big enough for any
/// download benchmark, small enough that the shared pattern buffer fits in memory.
pub const MAX_PAYLOAD_BYTES: u64 = 1 << 30;

/// Largest chunk `/chunked/{n}` emits: 8 KiB, so a client sees many chunk headers
/// (RFC 9112 §7.1) instead of one giant chunk.
pub const CHUNK_BYTES: usize = 8 * 1024;

/// Size of the pattern buffer built at start-up: 1 MiB covers the common
/// benchmark sizes, so they never take the lock-and-grow path.
pub const INITIAL_PATTERN_BYTES: usize = 1 << 20;

/// Largest document `/json/{n}` builds: 64 MiB. Generating JSON costs CPU per item,
/// unlike the byte pattern, so the bound is lower.
pub const MAX_JSON_BYTES: u64 = 64 << 20;

/// How many distinct `/json/{n}` sizes are cached. A benchmark uses a handful; a
/// client looping over sizes must not grow the cache without bound (beyond this,
/// documents are built per request and not kept).
pub const JSON_CACHE_ENTRIES: usize = 64;

/// Largest request body `/echo` buffers and sends back: 1 GiB, matching the
/// largest download so upload benchmarks are symmetric.
pub const MAX_ECHO_BODY_BYTES: usize = 1 << 30;

/// Largest request body `/anything` inlines into its JSON answer: 64 MiB. The
/// body is decoded and escaped, which can multiply its size by six.
pub const MAX_ANYTHING_BODY_BYTES: usize = 64 << 20;

/// Longest wait `/delay/{ms}` accepts: 60 s, longer than any client timeout a
/// test would want to provoke.
pub const MAX_DELAY: Duration = Duration::from_secs(60);

/// Longest redirect chain `/redirect/{n}` starts: 100 hops, beyond any client's
/// default redirect limit (httpx and requests stop at 20 and 30).
pub const MAX_REDIRECTS: u64 = 100;

/// Pending-connection queue of the listening socket. The OS default (128 via std)
/// drops SYNs when a benchmark opens hundreds of connections at once.
pub const LISTEN_BACKLOG: u32 = 1024;

/// Pause after a failed `accept` (typically EMFILE: out of file descriptors)
/// before trying again, so the accept loop does not spin at 100% CPU.
pub const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(10);

/// Largest body the compressed routes (`/gzip/{n}`, `/brotli/{n}`, ...) encode:
/// they compress per request, so the bound keeps one request's CPU small.
pub const MAX_ENCODED_PAYLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// Largest `/login` form body: 64 KiB, far above any login form; the form is
/// parsed, so an unbounded body would only cost memory.
pub const MAX_LOGIN_BODY_BYTES: usize = 64 << 10;

/// Most pieces `/drip/{n}` sends: with the longest pause that is still a bounded
/// wait, and more than any streaming test reads.
pub const MAX_DRIP_PIECES: u64 = 1000;

/// Longest pause between two `/drip` pieces (the same bound as `/delay`).
pub const MAX_DRIP_INTERVAL: Duration = MAX_DELAY;

/// Pause between two `/drip` pieces when the query names none.
pub const DEFAULT_DRIP_INTERVAL: Duration = Duration::from_millis(100);
