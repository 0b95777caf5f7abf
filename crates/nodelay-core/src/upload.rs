//! Streamed request bodies: a [`BodySource`] is pulled chunk by chunk and
//! written behind the head, with an exact `Content-Length` when its size is
//! known up front and `Transfer-Encoding: chunked` otherwise. Nothing is
//! ever loaded whole. This file is the HTTP/1.1 writer; over HTTP/2 the same
//! source is sent as DATA frames under flow control (`h2/upload.rs`).
//!
//! The framing (`nodelay_proto::BodyWriter`) and the early-answer rule
//! (`nodelay_proto::answer_may_follow`) are the protocol crate's; this file
//! pulls the source, writes and waits.
//!
//! A server may answer before the body is complete (413 Content Too Large,
//! 401, a redirect) and stop reading. Like curl and browsers we then read its
//! answer instead of failing with a write error: a streamed body checks for
//! an answer before each further piece and stops sending when one arrived; a
//! write that fails (the server closed: EPIPE, ECONNRESET) or times out with
//! an answer waiting is followed by reading that answer
//! (the exchange sequence, `sequence.rs`). The connection is never reused after a
//! body cut short.

use std::io::IoSlice;

use nodelay_proto::{BodyWriter, Frame, ProtoError, CHUNK_SIZE_LINE_BYTES};

use crate::deadline::Deadlines;
use crate::error::{Error, ErrorKind};
use crate::exchange::send_request;
use crate::interrupt::Interrupt;
use crate::pool::blocking::PooledConn;
use crate::sequence::Sent;

/// A request body produced piece by piece (an iterator, a file, a multipart
/// form with files). Implementations live where the data lives (the Python
/// binding pulls from Python objects).
pub trait BodySource: Send {
    /// The next piece of the body, or `None` at its end. `buf` is a buffer
    /// the engine reuses across calls (capacity [`UPLOAD_CHUNK_BYTES`]); a
    /// source may fill and return it, or return bytes it holds itself.
    /// Empty pieces are skipped.
    ///
    /// [`UPLOAD_CHUNK_BYTES`]: crate::limits::UPLOAD_CHUNK_BYTES
    fn next_chunk<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error>;

    /// Goes back to the first byte so the body can be sent again (a stale
    /// keep-alive connection). Returns false when it cannot (an iterator
    /// already consumed): the request is then not replayed.
    fn rewind(&mut self) -> Result<bool, Error>;

    /// Trailer fields to send after the last piece, asked once when
    /// `next_chunk` said the body ended (a chunked body carries them after
    /// its last chunk, HTTP/2 in a HEADERS frame). None by default; a body
    /// framed by `Content-Length` cannot carry any and fails if given some.
    fn trailers(&mut self) -> Result<Vec<(String, String)>, Error> {
        Ok(Vec::new())
    }
}

/// `(name, value)` pairs borrowed from owned trailer fields.
pub(crate) fn borrowed(fields: &[(String, String)]) -> Vec<(&str, &str)> {
    fields
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect()
}

pub use nodelay_proto::StreamFraming;

/// Writes `wire` (the head) and the whole body of `source`. The head leaves
/// in the same (vectored) write as the first piece of the body, so a small
/// body costs one syscall and one segment.
///
/// Returns whether the whole body went out: `Ok(false)` means the server
/// answered before the end and the rest was not sent (read the answer, then
/// close the connection).
///
/// Write failures are marked "nothing received" (the caller may replay on a
/// fresh connection when the source rewinds); a failing source or a body
/// whose size differs from its announced length is returned as is.
pub(crate) fn send_streamed(
    pooled: &mut PooledConn,
    wire: &[u8],
    framing: StreamFraming,
    source: &mut dyn BodySource,
    buf: &mut Vec<u8>,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<bool, Error> {
    let conn = pooled.conn();
    let mut writer = BodyWriter::new(framing);
    let mut size_line = [0u8; CHUNK_SIZE_LINE_BYTES];
    let mut head: Option<&[u8]> = Some(wire);
    // The last chunk with its trailer fields, when the source has some.
    let mut end = Vec::new();
    loop {
        let chunk = source.next_chunk(buf)?;
        if chunk.is_some_and(<[u8]>::is_empty) {
            continue;
        }
        // Once the head is out, a readable socket before the next piece means
        // the server answered (or gave up) early: one zero-timeout poll per
        // piece of UPLOAD_CHUNK_BYTES, nothing next to the copy of the piece.
        // A body of announced length whose every byte is out is a whole
        // request: the answer that follows it is the response, not an
        // early one.
        if head.is_none() && !writer.is_complete() && !conn.is_reusable() {
            return Ok(false);
        }
        let frame = match chunk {
            Some(_) => writer.frame(chunk, &mut size_line),
            None => {
                let trailers = source.trailers()?;
                writer.finish_with_trailers(&borrowed(&trailers), &mut end, &mut size_line)
            }
        }
        .map_err(local)?;
        let mut parts = [IoSlice::new(&[]); FRAME_PARTS];
        let count = frame_parts(head.take().unwrap_or_default(), &frame, &mut parts);
        if count > 0 {
            conn.write_all(&mut parts[..count], deadlines, interrupt)
                .map_err(Error::before_response)?;
        }
        if frame.last {
            return Ok(true);
        }
    }
}

/// Slices of one write of a streamed body: the head (first write only) and
/// a frame's prefix, data and suffix.
pub(crate) const FRAME_PARTS: usize = 4;

/// Puts the non-empty ones of `head` and `frame`'s parts, in order, into
/// `parts`; returns how many (a single slice is then a plain write, and an
/// empty frame no write at all).
pub(crate) fn frame_parts<'a>(
    head: &'a [u8],
    frame: &Frame<'a>,
    parts: &mut [IoSlice<'a>; FRAME_PARTS],
) -> usize {
    let mut count = 0;
    for part in [head, frame.prefix, frame.data, frame.suffix] {
        if !part.is_empty() {
            parts[count] = IoSlice::new(part);
            count += 1;
        }
    }
    count
}

/// A framing rule the body's source broke (a length that is not kept).
pub(crate) fn local(e: ProtoError) -> Error {
    Error::protocol(e, ErrorKind::LocalProtocol)
}

/// The body of a request on the blocking driver, as `Client::drive`
/// writes it behind the head, with the step's outcome for the exchange
/// sequence (`sequence.rs`).
pub(crate) enum Outgoing<'a> {
    /// Bytes not inlined in the head's write (`None`: none, or inlined).
    Bytes(Option<&'a [u8]>),
    /// Pulled from `source` on this thread, through `buf`.
    Streamed {
        source: &'a mut dyn BodySource,
        framing: StreamFraming,
        buf: &'a mut Vec<u8>,
    },
}

impl Outgoing<'_> {
    /// Writes `wire` (the head, with a small body) and the body on `pooled`.
    pub(crate) fn send(
        &mut self,
        pooled: &mut PooledConn,
        wire: &[u8],
        deadlines: &Deadlines,
        interrupt: &dyn Interrupt,
    ) -> Sent {
        match self {
            Outgoing::Bytes(body) => {
                match send_request(pooled, wire, *body, deadlines, interrupt) {
                    Ok(()) => Sent::Whole,
                    // A failed write of bytes received nothing of a response.
                    Err(e) => Sent::Failed(e.before_response()),
                }
            }
            Outgoing::Streamed {
                source,
                framing,
                buf,
            } => match send_streamed(
                pooled,
                wire,
                *framing,
                &mut **source,
                buf,
                deadlines,
                interrupt,
            ) {
                Ok(true) => Sent::Whole,
                Ok(false) => Sent::Cut,
                Err(e) => Sent::Failed(e),
            },
        }
    }

    /// Starts the body over for a retry: bytes always can, a stream when its
    /// source rewinds.
    pub(crate) fn rewind(&mut self) -> Result<bool, Error> {
        match self {
            Outgoing::Bytes(_) => Ok(true),
            Outgoing::Streamed { source, .. } => source.rewind(),
        }
    }

    /// Whether the body is streamed (a retry must rewind it first).
    pub(crate) fn is_streamed(&self) -> bool {
        matches!(self, Outgoing::Streamed { .. })
    }
}

/// A streamed body that did not keep the length announced for it:
/// `given` is what its source gave (`None`: more than announced).
pub(crate) fn length_mismatch(announced: u64, given: Option<u64>) -> Error {
    local(ProtoError::BodyLengthMismatch { announced, given })
}
