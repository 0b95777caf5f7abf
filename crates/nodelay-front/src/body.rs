//! How a whole response body is read: into a buffer of the exact size when
//! the server announced one that can be trusted and nothing needs decoding
//! (the front allocates its final object, a Python `bytes` or a Perl scalar,
//! and the engine fills it in place), else into a growing buffer that is
//! then decoded under the size cap. The rule and the reading are the
//! engine's body pipeline (`nodelay_core::WholeBody`); this is a front's
//! view of it.

use nodelay_core::{Error, Exchange, Interrupt};

/// Content-Length bodies up to this size, in bytes, are read straight into
/// one buffer of the exact size; a larger announced size is not trusted for
/// a single allocation (docs/hostile.md A11) and grows as bytes really arrive.
pub const EXACT_BODY_MAX_BYTES: u64 = nodelay_core::limits::EXACT_PREALLOC_MAX_BYTES;

/// The way to read one whole body, chosen from its head.
pub enum WholeBody {
    /// Exactly `len` bytes, delivered as received: fill a buffer of that size
    /// with [`read_exact`].
    Exact {
        /// The body's size in bytes.
        len: usize,
        /// Every byte already arrived with the head: reading it needs no wait
        /// (a front skips releasing its interpreter lock then).
        buffered: bool,
    },
    /// Unknown size, an untrusted size or content codings: read with
    /// [`read_grown`].
    Grown {
        /// The engine's plan for it (the codings to undo, the size to
        /// reserve).
        body: nodelay_core::WholeBody,
    },
}

impl WholeBody {
    /// The strategy for the body of `exchange`. Fails (a decoding error)
    /// when the head announces more content codings than allowed.
    pub fn of(exchange: &Exchange) -> Result<WholeBody, Error> {
        let body = exchange.whole_body()?;
        Ok(match body.exact_len() {
            Some(len) => WholeBody::Exact {
                len,
                buffered: exchange.is_body_buffered(),
            },
            None => WholeBody::Grown { body },
        })
    }
}

/// Fills `dst` (of the size [`WholeBody::Exact`] gave) with the body.
pub fn read_exact(
    exchange: &mut Exchange,
    dst: &mut [u8],
    interrupt: &dyn Interrupt,
) -> Result<(), Error> {
    exchange.read_exact_into(dst, interrupt)
}

/// Reads the rest of the body and undoes its codings, with the decoded size
/// capped at `max_decoded_bytes` (and the ratio guard of the decoder).
pub fn read_grown(
    exchange: &mut Exchange,
    body: &nodelay_core::WholeBody,
    max_decoded_bytes: u64,
    interrupt: &dyn Interrupt,
) -> Result<Vec<u8>, Error> {
    body.read(exchange, interrupt, max_decoded_bytes)
}
