//! Streamed request bodies: a [`BodySource`] is pulled chunk by chunk and
//! written behind the head, with an exact `Content-Length` when its size is
//! known up front and `Transfer-Encoding: chunked` otherwise. Nothing is
//! ever loaded whole. This file is the HTTP/1.1 writer; over HTTP/2 the same
//! source is sent as DATA frames under flow control (`h2/upload.rs`).
//!
//! A server may answer before the body is complete (413 Content Too Large,
//! 401, a redirect) and stop reading. Like curl and browsers we then read its
//! answer instead of failing with a write error: a streamed body checks for
//! an answer before each further piece and stops sending when one arrived; a
//! write that fails (the server closed: EPIPE, ECONNRESET) or times out with
//! an answer waiting is followed by reading that answer
//! ([`answer_after_failed_send`]). The connection is never reused after a
//! body cut short.

use std::io::IoSlice;

use nodelay_proto::ResponseHead;

use crate::deadline::Deadlines;
use crate::error::{Error, ErrorKind};
use crate::exchange::receive_head;
use crate::interrupt::Interrupt;
use crate::pool::PooledConn;

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
}

/// How a streamed body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFraming {
    /// Exactly this many bytes, announced with `Content-Length`.
    Length(u64),
    /// Unknown size: `Transfer-Encoding: chunked`, encoded here.
    Chunked,
}

impl StreamFraming {
    /// The body's size, when known.
    pub fn length(self) -> Option<u64> {
        match self {
            StreamFraming::Length(n) => Some(n),
            StreamFraming::Chunked => None,
        }
    }
}

/// The chunked-coding terminator: the last (empty) chunk and no trailers.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";
pub(crate) const CRLF: &[u8] = b"\r\n";

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
    let mut head: Option<&[u8]> = Some(wire);
    let mut sent: u64 = 0;
    loop {
        let chunk = source.next_chunk(buf)?;
        if chunk.is_some_and(<[u8]>::is_empty) {
            continue;
        }
        // Once the head is out, a readable socket before the next piece means
        // the server answered (or gave up) early: one zero-timeout poll per
        // piece of UPLOAD_CHUNK_BYTES, nothing next to the copy of the piece.
        if head.is_none() && !conn.is_reusable() {
            return Ok(false);
        }
        let mut write = |parts: &mut [IoSlice<'_>]| {
            conn.write_all(parts, deadlines, interrupt)
                .map_err(Error::before_response)
        };
        let head_part = IoSlice::new(head.take().unwrap_or_default());
        match (framing, chunk) {
            (StreamFraming::Length(expected), Some(data)) => {
                sent += data.len() as u64;
                if sent > expected {
                    return Err(length_mismatch(expected, "more"));
                }
                write(&mut [head_part, IoSlice::new(data)])?;
            }
            (StreamFraming::Length(expected), None) => {
                if sent != expected {
                    return Err(length_mismatch(expected, &sent.to_string()));
                }
                if !head_part.is_empty() {
                    write(&mut [head_part])?;
                }
                return Ok(true);
            }
            (StreamFraming::Chunked, Some(data)) => {
                let mut size = [0u8; 18];
                let size = chunk_size_line(data.len(), &mut size);
                write(&mut [
                    head_part,
                    IoSlice::new(size),
                    IoSlice::new(data),
                    IoSlice::new(CRLF),
                ])?;
            }
            (StreamFraming::Chunked, None) => {
                write(&mut [head_part, IoSlice::new(LAST_CHUNK)])?;
                return Ok(true);
            }
        }
    }
}

/// After sending the request failed with `failed`: the server's answer when
/// it sent one before it stopped reading, else `failed`. Only a failed write
/// (the peer closed or reset: its answer may be queued before the reset) or a
/// write timeout with bytes waiting to be read are worth a read; anything
/// else (a failing body source, Ctrl-C) is returned as is. An answer read
/// here closes the connection at the end of its body: the request on it was
/// cut short.
pub(crate) fn answer_after_failed_send(
    pooled: &mut PooledConn,
    request_was_head: bool,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
    failed: Error,
) -> Result<(ResponseHead, Box<[u8]>), Error> {
    let worth_reading = match failed.kind() {
        ErrorKind::Write => true,
        ErrorKind::WriteTimeout => !pooled.conn().is_reusable(),
        _ => false,
    };
    if !worth_reading {
        return Err(failed);
    }
    match receive_head(pooled, request_was_head, deadlines, interrupt) {
        Ok(answer) => Ok(closing(answer)),
        Err(e) if e.is_interrupted() => Err(e),
        Err(_) => Err(failed),
    }
}

/// Receives the answer to a request whose body was not sent whole (see
/// [`send_streamed`]'s `Ok(false)`); its connection is closed after it.
pub(crate) fn receive_early_answer(
    pooled: &mut PooledConn,
    request_was_head: bool,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<(ResponseHead, Box<[u8]>), Error> {
    receive_head(pooled, request_was_head, deadlines, interrupt).map(closing)
}

/// The connection carrying a request cut short is out of step with the
/// framing it announced: never reused after this answer.
fn closing((mut head, bytes): (ResponseHead, Box<[u8]>)) -> (ResponseHead, Box<[u8]>) {
    head.keep_alive = false;
    (head, bytes)
}

/// `{size in hex}\r\n` into `out`.
pub(crate) fn chunk_size_line(len: usize, out: &mut [u8; 18]) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut i = 16;
    let mut n = len;
    loop {
        i -= 1;
        out[i] = HEX[n & 0xf];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out[16] = b'\r';
    out[17] = b'\n';
    &out[i..]
}

pub(crate) fn length_mismatch(expected: u64, sent: &str) -> Error {
    Error::new(
        ErrorKind::LocalProtocol,
        format!(
            "the request body did not match its Content-Length: {expected} bytes announced, {sent} given (a file changed size during the upload?)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::chunk_size_line;

    #[test]
    fn chunk_size_lines_are_lowercase_hex() {
        let mut buf = [0u8; 18];
        assert_eq!(chunk_size_line(1, &mut buf), b"1\r\n");
        assert_eq!(chunk_size_line(0x10000, &mut buf), b"10000\r\n");
        assert_eq!(chunk_size_line(0xabc, &mut buf), b"abc\r\n");
        assert_eq!(
            chunk_size_line(usize::MAX, &mut buf),
            b"ffffffffffffffff\r\n"
        );
    }
}
