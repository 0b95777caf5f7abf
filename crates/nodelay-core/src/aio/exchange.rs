//! The async driver of one HTTP/1.1 exchange on a checked-out connection:
//! the sync driver's phases (`exchange.rs`) over the same `nodelay_proto`
//! phase types and the same non-waiting steps, awaiting where the sync
//! driver blocks.

use std::time::Instant;

use nodelay_proto::limits::MAX_HEAD_BYTES;
use nodelay_proto::{BodyReader, HeadEvent, HeadReader, HeaderSpan, ResponseHead, Reuse};

use crate::aio::pool::AsyncPooled;
use crate::deadline::Deadlines;
use crate::error::Error;
use crate::exchange::{
    drain_buffered, next_read, presize, refused_head, remote, take_head, unanswered, NextRead,
};
use crate::limits::READ_BUFFER_BYTES;

/// Reads until a final (non-1xx) response head is complete, in the phase
/// `reader` starts (the sync `exchange::receive_head_with`: same phase type, same
/// errors, same retry marking, the same deadline for the whole head).
pub(crate) async fn receive_head_with(
    pooled: &mut AsyncPooled,
    mut reader: HeadReader,
    deadlines: &Deadlines,
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
                    .fill(MAX_HEAD_BYTES, deadlines)
                    .await
                    .map_err(|e| unanswered(&reader, e))?;
                if n == 0 {
                    return Err(unanswered(&reader, remote(reader.end_of_input())));
                }
            }
        }
    }
}

/// A response whose head arrived over HTTP/1.1; the body is still on the
/// connection. Dropping it before the body was read closes the connection.
pub(crate) struct AsyncH1Exchange {
    pooled: AsyncPooled,
    head: ResponseHead,
    head_bytes: Box<[u8]>,
    body: BodyReader,
    deadlines: Deadlines,
    pub(crate) started: Instant,
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
            body: BodyReader::new(head.framing),
            head,
            head_bytes,
            deadlines,
            started,
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
        self.body.content_length()
    }

    /// True once the whole body was read.
    pub fn is_complete(&self) -> bool {
        self.body.is_done()
    }

    /// Reads the rest of the body, appending it to `out` (as the sync
    /// `read_to_end`: an announced length within `EXACT_PREALLOC_MAX_BYTES`
    /// is read into one allocation of the exact size).
    pub async fn read_to_end(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        presize(&self.body, out);
        loop {
            let conn = self.pooled.conn();
            if drain_buffered(&mut self.body, conn.read_buffer(), out)? {
                return Ok(());
            }
            if conn.fill(READ_BUFFER_BYTES, &self.deadlines).await? == 0 {
                self.body.end_of_input().map_err(remote)?;
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
            match next_read(&mut self.body, conn.read_buffer(), dst)? {
                NextRead::Delivered(n) => return Ok(n),
                NextRead::Direct(len) => {
                    let n = conn.read_direct(&mut dst[..len], &self.deadlines).await?;
                    self.body.direct_read(n).map_err(remote)?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
                NextRead::Fill => {
                    if conn.fill(READ_BUFFER_BYTES, &self.deadlines).await? == 0 {
                        self.body.end_of_input().map_err(remote)?;
                    }
                }
            }
        }
    }

    /// Ends the exchange: a connection the protocol's verdict allows to reuse
    /// is handed to the caller (to keep for its next request, or give back to
    /// the pool); anything else is closed (docs/hostile.md A10, H29): `None`.
    pub fn into_reusable(self) -> Option<AsyncPooled> {
        let leftover = self.pooled.conn_ref().buffered().len();
        (self.body.verdict(&self.head, leftover) == Reuse::Keep).then_some(self.pooled)
    }
}
