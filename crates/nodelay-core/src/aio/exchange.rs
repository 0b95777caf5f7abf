//! One request/response on a checked-out async connection: the sync
//! exchange's phases (send, receive head, receive body, give back or close)
//! over the same sans-IO parsing, framing and limits, awaiting where the
//! sync driver blocks.

use std::time::Instant;

use nodelay_proto::limits::{MAX_HEAD_BYTES, MAX_INTERIM_RESPONSES};
use nodelay_proto::{parse_response_head, BodyFraming, HeaderSpan, ProtoError, ResponseHead};

use crate::aio::pool::AsyncPooled;
use crate::deadline::Deadlines;
use crate::error::{Error, ErrorKind};
use crate::exchange::{
    chunked_cut, find_head_end, incomplete, remote, BodyState, STATUS_LINE_PREFIX,
};
use crate::limits::{READ_BUFFER_BYTES, UNKNOWN_BODY_INITIAL_BYTES};

/// Reads until a final (non-1xx) response head is complete (see the sync
/// `receive_head`: same checks, same errors, same retry marking, the same
/// deadline for the whole head).
pub(crate) async fn receive_head(
    pooled: &mut AsyncPooled,
    request_was_head: bool,
    deadlines: &Deadlines,
) -> Result<(ResponseHead, Box<[u8]>), Error> {
    let deadlines = &deadlines.for_head();
    let conn = pooled.conn();
    let mut interim = 0;
    let mut received_any = !conn.buffered().is_empty();
    let mut scanned = 0;
    loop {
        let buffered = conn.buffered();
        let prefix = buffered.len().min(STATUS_LINE_PREFIX.len());
        if buffered[..prefix] != STATUS_LINE_PREFIX[..prefix] {
            return Err(remote(ProtoError::InvalidHead(
                "not an HTTP/1.x status line",
            )));
        }
        if let Some(end) = find_head_end(buffered, scanned) {
            let head = parse_response_head(&buffered[..end], request_was_head)
                .map_err(remote)?
                .ok_or_else(|| remote(ProtoError::InvalidHead("incomplete head")))?;
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
        let n = conn.fill(MAX_HEAD_BYTES, deadlines).await.map_err(|e| {
            if received_any {
                e
            } else {
                e.before_response()
            }
        })?;
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

/// A response whose head arrived over HTTP/1.1; the body is still on the
/// connection. Dropping it before the body was read closes the connection.
pub(crate) struct AsyncH1Exchange {
    pooled: AsyncPooled,
    head: ResponseHead,
    head_bytes: Box<[u8]>,
    body: BodyState,
    deadlines: Deadlines,
    pub(crate) started: Instant,
    received: u64,
}

impl AsyncH1Exchange {
    pub(crate) fn new(
        pooled: AsyncPooled,
        head: ResponseHead,
        head_bytes: Box<[u8]>,
        deadlines: Deadlines,
        started: Instant,
    ) -> Self {
        AsyncH1Exchange {
            pooled,
            body: BodyState::for_framing(head.framing),
            head,
            head_bytes,
            deadlines,
            started,
            received: 0,
        }
    }

    /// The head and the bytes its spans index into.
    pub fn head(&self) -> (&ResponseHead, &[u8]) {
        (&self.head, &self.head_bytes)
    }

    /// Moves the head out (for building a response object without copying).
    pub fn take_head(&mut self) -> (Box<[u8]>, Vec<HeaderSpan>) {
        (
            std::mem::take(&mut self.head_bytes),
            std::mem::take(&mut self.head.headers),
        )
    }

    /// The exact body size when the server announced one.
    pub fn content_length(&self) -> Option<u64> {
        match self.body {
            BodyState::Length { remaining } => Some(remaining),
            BodyState::Done => Some(0),
            _ => None,
        }
    }

    /// True once the whole body was read.
    pub fn is_complete(&self) -> bool {
        matches!(self.body, BodyState::Done)
    }

    /// Reads the rest of the body, appending it to `out`. A Content-Length
    /// body within `EXACT_PREALLOC_MAX_BYTES` is read into one allocation of
    /// the exact size.
    pub async fn read_to_end(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        if let BodyState::Length { remaining } = self.body {
            if remaining <= crate::limits::EXACT_PREALLOC_MAX_BYTES {
                out.reserve_exact(remaining as usize);
            }
        }
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
                    if conn.fill(READ_BUFFER_BYTES, &self.deadlines).await? == 0 {
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
                    if conn.fill(READ_BUFFER_BYTES, &self.deadlines).await? == 0 {
                        return Err(chunked_cut((out.len() - initial) as u64));
                    }
                }
                BodyState::UntilClose => {
                    let conn = self.pooled.conn();
                    let buffered = conn.buffered();
                    out.extend_from_slice(buffered);
                    let n = buffered.len();
                    conn.consume(n);
                    if conn.fill(READ_BUFFER_BYTES, &self.deadlines).await? == 0 {
                        self.body = BodyState::Done;
                    }
                }
            }
        }
    }

    /// Reads the next piece of the body into `dst` (at most `dst.len()`
    /// bytes); 0 means the body is complete. As the sync `read_some`.
    pub async fn read_some(&mut self, dst: &mut [u8]) -> Result<usize, Error> {
        if dst.is_empty() {
            return Ok(0);
        }
        loop {
            let conn = self.pooled.conn();
            match &mut self.body {
                BodyState::Done => return Ok(0),
                BodyState::Length { remaining } => {
                    let want = (*remaining).min(dst.len() as u64) as usize;
                    let n = take_buffered(conn.buffered(), &mut dst[..want]);
                    let n = if n > 0 {
                        conn.consume(n);
                        n
                    } else {
                        match conn.read_direct(&mut dst[..want], &self.deadlines).await? {
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
                        && conn.fill(READ_BUFFER_BYTES, &self.deadlines).await? == 0
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
                    let n = take_buffered(conn.buffered(), dst);
                    if n > 0 {
                        conn.consume(n);
                        self.received += n as u64;
                        return Ok(n);
                    }
                    match conn.read_direct(dst, &self.deadlines).await? {
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
    /// nothing extra buffered goes back to the pool; anything else is closed
    /// (HOSTILE.md A10, H29).
    pub fn finish(self) {
        if let Some(pooled) = self.into_reusable() {
            pooled.return_to_pool();
        }
    }

    /// Ends the exchange like [`AsyncH1Exchange::finish`], but hands a
    /// reusable connection to the caller (to keep for its next request, or
    /// give back to the pool) instead of the pool; `None`: it was closed.
    pub fn into_reusable(self) -> Option<AsyncPooled> {
        let reusable = matches!(self.body, BodyState::Done)
            && self.head.keep_alive
            && self.head.framing != BodyFraming::CloseDelimited
            && self.pooled.conn_ref().buffered().is_empty();
        reusable.then_some(self.pooled)
    }

    /// The content codings to undo, in the order applied; `None` when one is
    /// unknown (the body is then delivered as received).
    pub fn content_codings(&self) -> Result<Option<Vec<crate::decode::Coding>>, Error> {
        let bytes = &self.head_bytes;
        crate::decode::parse_codings(self.head.headers.iter().filter_map(|span| {
            let field = &bytes[span.name.0 as usize..span.name.1 as usize];
            field
                .eq_ignore_ascii_case(b"content-encoding")
                .then(|| &bytes[span.value.0 as usize..span.value.1 as usize])
        }))
    }
}

/// Copies buffered bytes into `dst`; returns how many (the caller consumes).
fn take_buffered(buffered: &[u8], dst: &mut [u8]) -> usize {
    let n = buffered.len().min(dst.len());
    dst[..n].copy_from_slice(&buffered[..n]);
    n
}
