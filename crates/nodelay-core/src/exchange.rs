//! One request/response on a checked-out connection: send, receive the head,
//! receive the body, then give the connection back (or close it).

use std::io::IoSlice;
use std::time::Instant;

use nodelay_proto::limits::{MAX_HEAD_BYTES, MAX_INTERIM_RESPONSES};
use nodelay_proto::{parse_response_head, BodyFraming, ChunkedDecoder, ProtoError, ResponseHead};

use crate::deadline::Deadlines;
use crate::error::{Error, ErrorKind};
use crate::interrupt::Interrupt;
use crate::limits::UNKNOWN_BODY_INITIAL_BYTES;
use crate::pool::PooledConn;

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

/// Reads until a final (non-1xx) response head is complete. Returns the head
/// with its bytes copied out of the read buffer (they are tiny and the buffer
/// is about to be reused for the body). Called once the request is sent: the
/// read timeout bounds the whole wait from here, interim responses included
/// (`Deadlines::for_head`).
pub(crate) fn receive_head(
    pooled: &mut PooledConn,
    request_was_head: bool,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<(ResponseHead, Box<[u8]>), Error> {
    let deadlines = &deadlines.for_head();
    let conn = pooled.conn();
    let mut interim = 0;
    let mut received_any = !conn.buffered().is_empty();
    // Where to resume looking for the blank line that ends the head, so a
    // slowly dripped head costs linear, not quadratic, work.
    let mut scanned = 0;
    loop {
        let buffered = conn.buffered();
        // Reject a response that is not HTTP/1.x (HTTP/0.9, garbage, a leading
        // empty line) as soon as its first bytes show it, however they were
        // segmented, instead of waiting for a blank line.
        let prefix = buffered.len().min(STATUS_LINE_PREFIX.len());
        if buffered[..prefix] != STATUS_LINE_PREFIX[..prefix] {
            return Err(remote(ProtoError::InvalidHead(
                "not an HTTP/1.x status line",
            )));
        }
        // A head that arrived whole (the usual case) is parsed at once:
        // httparse finds its end while parsing, so the byte-by-byte search for
        // the blank line is only paid by heads that arrive in pieces.
        let whole = if scanned == 0 {
            parse_response_head(buffered, request_was_head)
                .ok()
                .flatten()
        } else {
            None
        };
        let head = match whole {
            Some(head) => Some(head),
            None => match find_head_end(buffered, scanned) {
                Some(end) => Some(
                    parse_response_head(&buffered[..end], request_was_head)
                        .map_err(remote)?
                        .ok_or_else(|| remote(ProtoError::InvalidHead("incomplete head")))?,
                ),
                None => None,
            },
        };
        if let Some(head) = head {
            if head.is_interim() {
                interim += 1;
                if interim > MAX_INTERIM_RESPONSES {
                    return Err(remote(ProtoError::TooManyInterimResponses));
                }
                conn.consume(head.head_len);
                scanned = 0;
                continue;
            }
            let bytes: Box<[u8]> = buffered[..head.head_len].into();
            conn.consume(head.head_len);
            return Ok((head, bytes));
        }
        if buffered.len() >= MAX_HEAD_BYTES {
            return Err(remote(ProtoError::HeadTooLarge));
        }
        scanned = buffered.len().saturating_sub(3);
        let n = conn
            .fill(MAX_HEAD_BYTES, deadlines, interrupt)
            .map_err(|e| if received_any { e } else { e.before_response() })?;
        if n == 0 {
            return Err(if received_any {
                Error::new(
                    ErrorKind::RemoteProtocol,
                    "server closed the connection in the middle of the response head",
                )
            } else {
                Error::new(
                    ErrorKind::RemoteProtocol,
                    "server disconnected without sending a response",
                )
                .before_response()
            });
        }
        received_any = true;
    }
}

/// End of the head (index just past the blank line), searching from `from`.
/// Bare-LF line ends are accepted here as httparse does; it validates the rest.
pub(crate) fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        let nl = i + buf[i..].iter().position(|&b| b == b'\n')?;
        if buf.get(nl + 1) == Some(&b'\n') {
            return Some(nl + 2);
        }
        if buf.get(nl + 1) == Some(&b'\r') && buf.get(nl + 2) == Some(&b'\n') {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
}

/// Every HTTP/1.x status line starts with these bytes.
pub(crate) const STATUS_LINE_PREFIX: &[u8] = b"HTTP/1.";

pub(crate) fn remote(e: ProtoError) -> Error {
    Error::protocol(e, ErrorKind::RemoteProtocol)
}

pub(crate) enum BodyState {
    Length { remaining: u64 },
    Chunked(ChunkedDecoder),
    UntilClose,
    Done,
}

impl BodyState {
    /// Where the body reader starts for a head's framing.
    pub(crate) fn for_framing(framing: BodyFraming) -> Self {
        match framing {
            BodyFraming::Empty | BodyFraming::Length(0) => BodyState::Done,
            BodyFraming::Length(n) => BodyState::Length { remaining: n },
            BodyFraming::Chunked => BodyState::Chunked(ChunkedDecoder::new()),
            BodyFraming::CloseDelimited => BodyState::UntilClose,
        }
    }
}

/// An HTTP/1.1 response whose head arrived; the body is still on the connection.
pub struct H1Exchange {
    pooled: PooledConn,
    pub(crate) head: ResponseHead,
    pub(crate) head_bytes: Box<[u8]>,
    body: BodyState,
    deadlines: Deadlines,
    pub(crate) started: Instant,
    received: u64,
}

impl H1Exchange {
    pub(crate) fn new(
        pooled: PooledConn,
        head: ResponseHead,
        head_bytes: Box<[u8]>,
        deadlines: Deadlines,
        started: Instant,
    ) -> Self {
        let body = BodyState::for_framing(head.framing);
        H1Exchange {
            pooled,
            head,
            head_bytes,
            body,
            deadlines,
            started,
            received: 0,
        }
    }

    /// The exact body size when the server announced one.
    pub fn content_length(&self) -> Option<u64> {
        match self.body {
            BodyState::Length { remaining } => Some(remaining),
            BodyState::Done => Some(0),
            _ => None,
        }
    }

    /// True when the whole remaining body is already in the read buffer, so
    /// reading it needs no syscall (callers skip releasing the GIL then).
    pub fn is_body_buffered(&self) -> bool {
        match self.body {
            BodyState::Done => true,
            BodyState::Length { remaining } => {
                self.pooled.conn_ref().buffered().len() as u64 >= remaining
            }
            _ => false,
        }
    }

    /// Reads a Content-Length body of exactly `dst.len()` bytes into `dst`:
    /// what is buffered is copied, the rest is read from the socket straight
    /// into `dst` in large reads.
    pub fn read_exact_into(
        &mut self,
        dst: &mut [u8],
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        let remaining = match self.body {
            BodyState::Length { remaining } => remaining,
            BodyState::Done => 0,
            _ => {
                return Err(Error::new(
                    ErrorKind::RemoteProtocol,
                    "body has no announced length",
                ))
            }
        };
        assert_eq!(
            dst.len() as u64,
            remaining,
            "destination must match Content-Length"
        );
        let expected = remaining;
        let conn = self.pooled.conn();
        let buffered = conn.buffered();
        let mut filled = buffered.len().min(dst.len());
        dst[..filled].copy_from_slice(&buffered[..filled]);
        conn.consume(filled);
        while filled < dst.len() {
            let n = conn.read_direct(&mut dst[filled..], &self.deadlines, interrupt)?;
            if n == 0 {
                return Err(incomplete(filled as u64, expected));
            }
            filled += n;
        }
        self.received = expected;
        self.body = BodyState::Done;
        Ok(())
    }

    /// Reads the rest of the body, appending it to `out`.
    pub fn read_to_end(
        &mut self,
        out: &mut Vec<u8>,
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        // Bytes the caller already had are not part of this body's count.
        let initial = out.len();
        loop {
            match &mut self.body {
                BodyState::Done => return Ok(()),
                BodyState::Length { remaining } => {
                    if out.capacity() - out.len() < UNKNOWN_BODY_INITIAL_BYTES {
                        out.reserve(
                            (*remaining as usize).min(UNKNOWN_BODY_INITIAL_BYTES.max(out.len())),
                        );
                    }
                    let conn = self.pooled.conn();
                    let buffered = conn.buffered();
                    let take = (*remaining).min(buffered.len() as u64) as usize;
                    out.extend_from_slice(&buffered[..take]);
                    conn.consume(take);
                    *remaining -= take as u64;
                    self.received += take as u64;
                    if *remaining == 0 {
                        self.body = BodyState::Done;
                        continue;
                    }
                    let expected = self.received + *remaining;
                    if conn.fill(crate::limits::READ_BUFFER_BYTES, &self.deadlines, interrupt)? == 0
                    {
                        return Err(incomplete(self.received, expected));
                    }
                }
                BodyState::Chunked(decoder) => {
                    let conn = self.pooled.conn();
                    let buffered = conn.buffered();
                    let used = decoder
                        .decode(buffered, &mut |data| out.extend_from_slice(data))
                        .map_err(remote)?;
                    conn.consume(used);
                    if decoder.is_done() {
                        self.body = BodyState::Done;
                        continue;
                    }
                    if conn.fill(crate::limits::READ_BUFFER_BYTES, &self.deadlines, interrupt)? == 0
                    {
                        return Err(Error::new(
                            ErrorKind::RemoteProtocol,
                            format!("peer closed connection without sending complete message body: chunked body cut after {} bytes", out.len() - initial),
                        ));
                    }
                }
                BodyState::UntilClose => {
                    let conn = self.pooled.conn();
                    let buffered = conn.buffered();
                    out.extend_from_slice(buffered);
                    let n = buffered.len();
                    conn.consume(n);
                    if conn.fill(crate::limits::READ_BUFFER_BYTES, &self.deadlines, interrupt)? == 0
                    {
                        self.body = BodyState::Done;
                    }
                }
            }
        }
    }

    /// Whether `read_some` would return without waiting for the network: the
    /// body ended, or some of it has arrived. (A chunked body whose buffered
    /// bytes are framing only may still wait; rare, and never wrong.)
    pub fn body_ready(&mut self) -> bool {
        matches!(self.body, BodyState::Done) || self.pooled.conn().has_data_now()
    }

    /// True once the whole body was read.
    pub fn is_complete(&self) -> bool {
        matches!(self.body, BodyState::Done)
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
            match &mut self.body {
                BodyState::Done => return Ok(0),
                BodyState::Length { remaining } => {
                    let want = (*remaining).min(dst.len() as u64) as usize;
                    let n = take_buffered(conn, &mut dst[..want]);
                    let n = if n > 0 {
                        n
                    } else {
                        match conn.read_direct(&mut dst[..want], &self.deadlines, interrupt)? {
                            0 => return Err(incomplete(self.received, self.received + *remaining)),
                            n => n,
                        }
                    };
                    *remaining -= n as u64;
                    self.received += n as u64;
                    if *remaining == 0 {
                        self.body = BodyState::Done;
                    }
                    return Ok(n);
                }
                BodyState::Chunked(decoder) => {
                    if conn.buffered().is_empty()
                        && conn.fill(
                            crate::limits::READ_BUFFER_BYTES,
                            &self.deadlines,
                            interrupt,
                        )? == 0
                    {
                        return Err(chunked_cut(self.received));
                    }
                    // Chunk data is never longer than the input that carries
                    // it, so feeding at most dst.len() bytes bounds the output.
                    let buffered = conn.buffered();
                    let input = &buffered[..buffered.len().min(dst.len())];
                    let mut written = 0;
                    let used = decoder
                        .decode(input, &mut |data| {
                            dst[written..written + data.len()].copy_from_slice(data);
                            written += data.len();
                        })
                        .map_err(remote)?;
                    conn.consume(used);
                    self.received += written as u64;
                    if decoder.is_done() {
                        self.body = BodyState::Done;
                    }
                    if written > 0 {
                        return Ok(written);
                    }
                }
                BodyState::UntilClose => {
                    let n = take_buffered(conn, dst);
                    if n > 0 {
                        self.received += n as u64;
                        return Ok(n);
                    }
                    match conn.read_direct(dst, &self.deadlines, interrupt)? {
                        0 => self.body = BodyState::Done,
                        n => {
                            self.received += n as u64;
                            return Ok(n);
                        }
                    }
                }
            }
        }
    }

    /// Ends the exchange: a fully read body on a keep-alive connection with
    /// nothing extra buffered goes back to the pool; anything else is closed.
    /// Extra bytes after a complete body are a second response nobody asked
    /// for (HOSTILE.md A10): never read as the next response.
    pub fn finish(self) {
        let reusable = matches!(self.body, BodyState::Done)
            && self.head.keep_alive
            && self.head.framing != BodyFraming::CloseDelimited
            && self.pooled.conn_ref().buffered().is_empty();
        if reusable {
            self.pooled.return_to_pool();
        }
    }
}

/// Copies buffered bytes into `dst`; returns how many.
fn take_buffered(conn: &mut crate::conn::Connection, dst: &mut [u8]) -> usize {
    let buffered = conn.buffered();
    let n = buffered.len().min(dst.len());
    dst[..n].copy_from_slice(&buffered[..n]);
    conn.consume(n);
    n
}

pub(crate) fn chunked_cut(received: u64) -> Error {
    Error::new(
        ErrorKind::RemoteProtocol,
        format!("peer closed connection without sending complete message body: chunked body cut after {received} bytes"),
    )
}

pub(crate) fn incomplete(received: u64, expected: u64) -> Error {
    Error::new(
        ErrorKind::RemoteProtocol,
        format!("peer closed connection without sending complete message body: received {received} of {expected} bytes"),
    )
}
