//! Engine limits and defaults, each with its reason.

use std::time::Duration;

/// Size of a connection's read buffer: one `read` takes up to this much, so a
/// small response arrives in one syscall and big bodies in few (seeds: Ruby's
/// 1 KiB reads burned a core; 64 KiB reads did not).
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Request bodies up to this size are copied behind the head so head and body
/// leave in a single `write` (a second small write meets Nagle + delayed ACK).
/// Larger bodies go out with one vectored write instead of a copy.
pub const INLINE_BODY_MAX_BYTES: usize = 64 * 1024;

/// A Content-Length body up to this size is read straight into one buffer of
/// the exact size. Larger announced sizes grow a buffer as bytes really
/// arrive, so a lying `Content-Length: 1000000000000` allocates nothing big
/// (docs/hostile.md A11).
pub const EXACT_PREALLOC_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Initial reservation for bodies of unknown or untrusted size.
pub const UNKNOWN_BODY_INITIAL_BYTES: usize = 64 * 1024;

/// Idle connections older than this are closed instead of reused (httpx's default).
pub const DEFAULT_KEEPALIVE_EXPIRY: Duration = Duration::from_secs(5);

/// Most connections open at once per Client, across origins (httpx's default).
pub const DEFAULT_MAX_CONNECTIONS: usize = 100;

/// Most idle connections kept per Client (httpx's default).
pub const DEFAULT_MAX_KEEPALIVE: usize = 20;

/// How long a connection that comes back when `max_keepalive` connections
/// are already idle is kept anyway, for a request that may come right after
/// (the reaper thread closes it then). With many requests in flight, answers
/// and new requests come in bursts a fraction of a millisecond apart: closing
/// such connections at once meant reopening them for the next burst. A
/// server that stops accepting at a connection limit (waitress) waits this
/// long for them to close (docs/pool.md, "Keep-alive default").
pub const SURPLUS_IDLE_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// How many times a request is sent again on a fresh connection when a reused
/// connection failed before any response byte (stale keep-alive, docs/hostile.md H28).
pub const STALE_CONNECTION_RETRIES: usize = 1;

/// Size of one piece of a streamed upload (a file is read in pieces of this
/// size into one reused buffer): ≥ 64 KiB so a large upload is few syscalls
/// and few trips into Python, small enough that memory stays flat.
pub const UPLOAD_CHUNK_BYTES: usize = 256 * 1024;

/// Most name lookups allowed to be still running (each on its own thread, see
/// `resolve.rs`) after their callers gave up at the connect deadline; past it,
/// new lookups fail at once instead of piling up threads behind a dead DNS server.
pub const MAX_PENDING_LOOKUPS: usize = 64;

/// A rate limit's default burst is this long's worth of tokens (at least
/// one): after a quiet spell a host sees at most that many requests at once,
/// so no window of a second or two sees much more than the rate
/// (docs/pool.md, "Rate limit").
pub const DEFAULT_RATE_BURST_WINDOW: Duration = Duration::from_millis(200);

/// Once a client's rate limit holds this many per-host buckets, the full
/// ones (hosts not asked for a burst's time, which a new bucket would
/// equal) are dropped when a new host comes: memory stays bounded by the
/// hosts asked within a burst's time, not by every host a crawl visited.
pub const RATE_BUCKETS_PRUNE_AT: usize = 4096;

/// Bytes of a refused status line an error quotes: a real one (version,
/// code, a reason phrase) fits, and garbage (an HTTP/0.9 body, another
/// protocol's greeting) does not fill the message.
pub const QUOTED_STATUS_LINE_BYTES: usize = 128;
