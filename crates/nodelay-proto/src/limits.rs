//! Every limit the parser enforces. Values come from docs/hostile.md; each
//! bounds memory or work a hostile server can make us spend.

/// Largest header block (status line + fields + blank line) we buffer, in bytes.
/// A server sending more gets `ProtoError::HeadTooLarge`.
pub const MAX_HEAD_BYTES: usize = 256 * 1024;

/// Largest single header line, in bytes (RFC 9112 §2.3 leaves it to us).
pub const MAX_HEADER_LINE_BYTES: usize = 64 * 1024;

/// Most header fields in one response head.
pub const MAX_HEADERS: usize = 128;

/// Most interim (1xx) responses before the final one (RFC 9110 §15.2).
pub const MAX_INTERIM_RESPONSES: usize = 10;

/// Total bytes of chunk extensions per message (RFC 9112 §7.1.1).
pub const MAX_CHUNK_EXTENSION_BYTES: usize = 16 * 1024;

/// Total bytes of trailer section per message (RFC 9112 §7.1.2).
pub const MAX_TRAILER_BYTES: usize = 16 * 1024;

/// Hex digits in a chunk size: 16 fill a u64; more is an overflow attempt.
pub const MAX_CHUNK_SIZE_DIGITS: usize = 16;

/// Decimal digits in Content-Length: 19 always fit a u64.
pub const MAX_CONTENT_LENGTH_DIGITS: usize = 19;
