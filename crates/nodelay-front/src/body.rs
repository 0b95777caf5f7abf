//! How a whole response body is read: into a buffer of the exact size when
//! the server announced one that can be trusted and nothing needs decoding
//! (the front allocates its final object, a Python `bytes` or a Perl scalar,
//! and the engine fills it in place), else into a growing buffer that is
//! then decoded under the size cap.

use nodelay_core::decode::{decode, Coding};
use nodelay_core::{Error, Exchange, Interrupt};

/// Content-Length bodies up to this size, in bytes, are read straight into
/// one buffer of the exact size; a larger announced size is not trusted for
/// a single allocation (HOSTILE.md A11) and grows as bytes really arrive.
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
        /// The content codings to undo, in the order applied (`None`: none,
        /// or one unknown, and the body is delivered as received).
        codings: Option<Vec<Coding>>,
    },
}

impl WholeBody {
    /// The strategy for the body of `exchange`. Fails (a decoding error)
    /// when the head announces more content codings than allowed.
    pub fn of(exchange: &Exchange) -> Result<WholeBody, Error> {
        let codings = exchange.content_codings()?.filter(|c| !c.is_empty());
        Ok(match (codings, exchange.content_length()) {
            (None, Some(len)) if len <= EXACT_BODY_MAX_BYTES => WholeBody::Exact {
                len: len as usize,
                buffered: exchange.is_body_buffered(),
            },
            (codings, _) => WholeBody::Grown { codings },
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

/// Reads the rest of the body and undoes `codings`, with the decoded size
/// capped at `max_decoded_bytes` (and the ratio guard of the decoders).
pub fn read_grown(
    exchange: &mut Exchange,
    codings: Option<&[Coding]>,
    max_decoded_bytes: u64,
    interrupt: &dyn Interrupt,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, interrupt)?;
    match codings.filter(|_| !out.is_empty()) {
        Some(codings) => decode(codings, out, max_decoded_bytes),
        None => Ok(out),
    }
}
