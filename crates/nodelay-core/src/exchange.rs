//! The blocking driver of one HTTP/1.1 exchange on a checked-out connection:
//! send, receive the head, receive the body, then give the connection back
//! or close it. Every decision (where the head ends, interim responses,
//! body framing, reuse) is `nodelay_proto`'s; this file moves bytes between
//! the connection's read buffer and the phase types and waits on the socket
//! (`docs/http1.md`). The steps that do not wait are shared with the async
//! driver (`aio/exchange.rs`).

use std::io::IoSlice;
use std::time::Instant;

use nodelay_proto::limits::MAX_HEAD_BYTES;
use nodelay_proto::{
    BodyReader, HeadEvent, HeadReader, ProtoError, ReadBuffer, ResponseHead, Reuse,
};

use crate::deadline::Deadlines;
use crate::error::{Error, ErrorKind};
use crate::interrupt::Interrupt;
use crate::limits::{
    EXACT_PREALLOC_MAX_BYTES, QUOTED_STATUS_LINE_BYTES, READ_BUFFER_BYTES,
    UNKNOWN_BODY_INITIAL_BYTES,
};
use crate::pool::blocking::PooledConn;

/// Writes the request: `wire` holds the head (and a small body); a large
/// `body` follows in the same vectored write.
pub(crate) fn send_request(
    pooled: &mut PooledConn,
    wire: &[u8],
    body: Option<&[u8]>,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<(), Error> {
    let conn = pooled.conn();
    match body {
        Some(body) if !body.is_empty() => conn.write_all(
            &mut [IoSlice::new(wire), IoSlice::new(body)],
            deadlines,
            interrupt,
        ),
        _ => conn.write_all(&mut [IoSlice::new(wire)], deadlines, interrupt),
    }
}

/// Reads until a final (non-1xx) response head is complete, in the phase
/// `reader` starts (`Prepared::head_reader` for a request just sent; an
/// answer to a request cut short is read with `HeadReader::after_cut_request`).
/// Returns the head with its bytes copied out of the read buffer (they are
/// tiny and the buffer is about to be reused for the body). Called once the
/// request is sent: the read timeout bounds the whole wait from here, interim
/// responses included (`Deadlines::for_head`). Only moves bytes: the reader
/// finds the head, skips interim responses and says whether anything was
/// received.
pub(crate) fn receive_head_with(
    pooled: &mut PooledConn,
    mut reader: HeadReader,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<(ResponseHead, Box<[u8]>), Error> {
    let deadlines = &deadlines.for_head();
    let conn = pooled.conn();
    loop {
        match reader
            .advance(conn.buffered())
            .map_err(|e| refused_head(e, conn.buffered()))?
        {
            HeadEvent::Final(head) => return Ok(take_head(conn.read_buffer(), head)),
            HeadEvent::Interim(len) => conn.consume(len),
            HeadEvent::NeedMore => {
                let n = conn
                    .fill(MAX_HEAD_BYTES, deadlines, interrupt)
                    .map_err(|e| unanswered(&reader, e))?;
                if n == 0 {
                    return Err(unanswered(&reader, remote(reader.end_of_input())));
                }
            }
        }
    }
}

/// Moves a final head's bytes out of the read buffer.
pub(crate) fn take_head(buf: &mut ReadBuffer, head: ResponseHead) -> (ResponseHead, Box<[u8]>) {
    let bytes: Box<[u8]> = buf.buffered()[..head.head_len].into();
    buf.consume(head.head_len);
    (head, bytes)
}

/// `e` marked "nothing received" when no byte of a response arrived yet
/// (the mark the retry rule asks for).
pub(crate) fn unanswered(reader: &HeadReader, e: Error) -> Error {
    if reader.nothing_received() {
        e.before_response()
    } else {
        e
    }
}

pub(crate) fn remote(e: ProtoError) -> Error {
    Error::protocol(e, ErrorKind::RemoteProtocol)
}

/// The error for a response head the reader refused in `buffered` (the
/// response's bytes from its start): a refused status line is quoted in
/// the message, escaped and cut at `QUOTED_STATUS_LINE_BYTES`, so the
/// caller sees what the server sent (and a front can word it as its
/// incumbent does).
pub(crate) fn refused_head(e: ProtoError, buffered: &[u8]) -> Error {
    if !e.is_status_line() {
        return remote(e);
    }
    let line_end = buffered
        .iter()
        .position(|&b| b == b'\n')
        .map_or(buffered.len(), |lf| lf + 1);
    let line = &buffered[..line_end.min(QUOTED_STATUS_LINE_BYTES)];
    let message = format!("{e} (status line \"{}\")", line.escape_ascii());
    Error::new(ErrorKind::RemoteProtocol, message).with_source(e)
}

/// Reserves room in `out` for the rest of `body` before a read to the end:
/// an announced length within `EXACT_PREALLOC_MAX_BYTES` is reserved exactly
/// (one allocation of the final size); a larger one grows as bytes arrive
/// (a lying length allocates nothing big, docs/hostile.md A11).
pub(crate) fn presize(body: &BodyReader, out: &mut Vec<u8>) {
    if let Some(remaining) = body.content_length() {
        if remaining <= EXACT_PREALLOC_MAX_BYTES {
            out.reserve_exact(remaining as usize);
        }
    }
}

/// One step of a read to the end: de-frames every buffered byte of the body
/// into `out`. Returns true once the body is complete; false: read more
/// (a read returning 0 goes to `BodyReader::end_of_input`).
pub(crate) fn drain_buffered(
    body: &mut BodyReader,
    buf: &mut ReadBuffer,
    out: &mut Vec<u8>,
) -> Result<bool, Error> {
    if let Some(remaining) = body.content_length() {
        if out.capacity() - out.len() < UNKNOWN_BODY_INITIAL_BYTES {
            out.reserve((remaining as usize).min(UNKNOWN_BODY_INITIAL_BYTES.max(out.len())));
        }
    }
    let used = body
        .read_buffered(buf.buffered(), &mut |data| out.extend_from_slice(data))
        .map_err(remote)?;
    buf.consume(used);
    Ok(body.is_done())
}

/// What a driver does next to give the caller a piece of the body.
pub(crate) enum NextRead {
    /// This many body bytes are in the caller's memory (0: the body is complete).
    Delivered(usize),
    /// Read at most this many bytes straight into the caller's memory, then
    /// tell `BodyReader::direct_read`.
    Direct(usize),
    /// Fill the read buffer (a read returning 0 goes to
    /// `BodyReader::end_of_input`), then ask again.
    Fill,
}

/// One step of a piece-by-piece read into `dst` (not empty): buffered body
/// bytes first, else what to read.
pub(crate) fn next_read(
    body: &mut BodyReader,
    buf: &mut ReadBuffer,
    dst: &mut [u8],
) -> Result<NextRead, Error> {
    // Each turn uses at least one buffered byte unless the body is done:
    // a chunked body's framing may take several turns with a small `dst`.
    while !body.is_done() && !buf.is_empty() {
        let (used, written) = body
            .read_buffered_into(buf.buffered(), dst)
            .map_err(remote)?;
        buf.consume(used);
        if written > 0 {
            return Ok(NextRead::Delivered(written));
        }
    }
    Ok(match body.direct_read_len(dst.len()) {
        _ if body.is_done() => NextRead::Delivered(0),
        Some(len) => NextRead::Direct(len),
        None => NextRead::Fill,
    })
}

/// An HTTP/1.1 response whose head arrived; the body is still on the connection.
pub struct H1Exchange {
    pooled: PooledConn,
    pub(crate) head: ResponseHead,
    pub(crate) head_bytes: Box<[u8]>,
    body: BodyReader,
    deadlines: Deadlines,
    pub(crate) started: Instant,
}

impl H1Exchange {
    pub(crate) fn new(
        pooled: PooledConn,
        head: ResponseHead,
        head_bytes: Box<[u8]>,
        deadlines: Deadlines,
        started: Instant,
    ) -> Self {
        H1Exchange {
            pooled,
            body: BodyReader::new(head.framing),
            head,
            head_bytes,
            deadlines,
            started,
        }
    }

    /// The exact body size when the server announced one.
    pub fn content_length(&self) -> Option<u64> {
        self.body.content_length()
    }

    /// True when the whole remaining body is already in the read buffer, so
    /// reading it needs no syscall (callers skip releasing the GIL then).
    pub fn is_body_buffered(&self) -> bool {
        self.body.is_within(self.pooled.conn_ref().buffered().len())
    }

    /// Reads a Content-Length body of exactly `dst.len()` bytes into `dst`:
    /// what is buffered is copied, the rest is read from the socket straight
    /// into `dst` in large reads.
    pub fn read_exact_into(
        &mut self,
        dst: &mut [u8],
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        let Some(remaining) = self.body.content_length() else {
            return Err(Error::new(
                ErrorKind::RemoteProtocol,
                "body has no announced length",
            ));
        };
        assert_eq!(
            dst.len() as u64,
            remaining,
            "destination must match Content-Length"
        );
        let conn = self.pooled.conn();
        let (used, mut filled) = self
            .body
            .read_buffered_into(conn.buffered(), dst)
            .map_err(remote)?;
        conn.consume(used);
        while filled < dst.len() {
            let n = conn.read_direct(&mut dst[filled..], &self.deadlines, interrupt)?;
            self.body.direct_read(n).map_err(remote)?;
            filled += n;
        }
        Ok(())
    }

    /// Reads the rest of the body, appending it to `out`. An announced length
    /// within `EXACT_PREALLOC_MAX_BYTES` is read into one allocation of the
    /// exact size.
    pub fn read_to_end(
        &mut self,
        out: &mut Vec<u8>,
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        presize(&self.body, out);
        loop {
            let conn = self.pooled.conn();
            if drain_buffered(&mut self.body, conn.read_buffer(), out)? {
                return Ok(());
            }
            if conn.fill(READ_BUFFER_BYTES, &self.deadlines, interrupt)? == 0 {
                self.body.end_of_input().map_err(remote)?;
            }
        }
    }

    /// Whether `read_some` would return without waiting for the network: the
    /// body ended, or some of it has arrived. (A chunked body whose buffered
    /// bytes are framing only may still wait; rare, and never wrong.)
    pub fn body_ready(&mut self) -> bool {
        self.body.is_done() || self.pooled.conn().has_data_now()
    }

    /// True once the whole body was read.
    pub fn is_complete(&self) -> bool {
        self.body.is_done()
    }

    /// Reads the next piece of the body into `dst` (at most `dst.len()`
    /// bytes); 0 means the body is complete. Content-Length and close-delimited
    /// bodies go straight from the socket into `dst` when nothing is buffered,
    /// so streaming with large `dst` costs one syscall per chunk and no copy.
    pub fn read_some(&mut self, dst: &mut [u8], interrupt: &dyn Interrupt) -> Result<usize, Error> {
        if dst.is_empty() {
            return Ok(0);
        }
        loop {
            let conn = self.pooled.conn();
            match next_read(&mut self.body, conn.read_buffer(), dst)? {
                NextRead::Delivered(n) => return Ok(n),
                NextRead::Direct(len) => {
                    let n = conn.read_direct(&mut dst[..len], &self.deadlines, interrupt)?;
                    self.body.direct_read(n).map_err(remote)?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
                NextRead::Fill => {
                    if conn.fill(READ_BUFFER_BYTES, &self.deadlines, interrupt)? == 0 {
                        self.body.end_of_input().map_err(remote)?;
                    }
                }
            }
        }
    }

    /// Takes the trailer section of a chunked body read to its end (its
    /// lines, each ended by CRLF: `nodelay_proto::trailer_fields`); empty
    /// without one.
    pub fn take_trailers(&mut self) -> Vec<u8> {
        self.body.take_trailers()
    }

    /// Ends the exchange: the connection goes back to the pool when the
    /// protocol's verdict allows it (`BodyReader::verdict`: body read whole,
    /// keep-alive, nothing extra buffered), else it is closed.
    pub fn finish(self) {
        let leftover = self.pooled.conn_ref().buffered().len();
        if self.body.verdict(&self.head, leftover) == Reuse::Keep {
            self.pooled.return_to_pool();
        }
    }
}
