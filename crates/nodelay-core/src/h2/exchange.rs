//! An HTTP/2 response read by a blocking caller: the head in the same
//! raw-bytes-plus-spans form as HTTP/1.1 (so the Python side builds responses
//! one way), the body pulled from the stream on the process runtime.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::{Buf, Bytes};
use nodelay_proto::{BodyFraming, HeaderSpan, ResponseHead, Version};

use super::response::H2Response;
use crate::error::{Error, ErrorKind};
use crate::executor::block_on;
use crate::interrupt::Interrupt;

/// Bodies announced up to this size are read together with the head, in the
/// same wait on the runtime: a small response then costs one hand-over
/// between the caller's thread and the runtime instead of two.
pub const PREFETCH_BODY_MAX_BYTES: u64 = 64 * 1024;

/// A response whose head arrived over HTTP/2.
pub struct H2Exchange {
    pub(crate) head: ResponseHead,
    pub(crate) head_bytes: Box<[u8]>,
    response: H2Response,
    /// Received body pieces not handed out yet.
    pending: VecDeque<Bytes>,
    pub(crate) started: Instant,
    received: u64,
    ended: bool,
    /// An error `body_ready` found, reported by the next read.
    failed: Option<Error>,
}

/// Reason phrase, then every field as `name: value\r\n`; spans index into it.
pub(crate) fn head_of(response: &H2Response) -> (ResponseHead, Box<[u8]>) {
    let reason = http::StatusCode::from_u16(response.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut bytes = Vec::with_capacity(reason.len() + response.headers.len() * 48);
    bytes.extend_from_slice(reason.as_bytes());
    let mut spans = Vec::with_capacity(response.headers.len());
    let span = |bytes: &mut Vec<u8>, data: &[u8]| {
        let start = bytes.len() as u32;
        bytes.extend_from_slice(data);
        (start, bytes.len() as u32)
    };
    for (name, value) in &response.headers {
        bytes.extend_from_slice(b"\r\n");
        let name = span(&mut bytes, name.as_str().as_bytes());
        bytes.extend_from_slice(b": ");
        let value = span(&mut bytes, value.as_bytes());
        spans.push(HeaderSpan { name, value });
    }
    let framing = match response.content_length() {
        Some(0) => BodyFraming::Empty,
        Some(n) => BodyFraming::Length(n),
        // HTTP/2 frames the body itself; "until the stream ends" is the
        // nearest HTTP/1.1 notion.
        None => BodyFraming::CloseDelimited,
    };
    let head = ResponseHead {
        version: Version::Http2,
        status: response.status,
        reason: (0, reason.len() as u32),
        headers: spans,
        head_len: bytes.len(),
        framing,
        keep_alive: true,
    };
    (head, bytes.into_boxed_slice())
}

impl H2Exchange {
    pub(crate) fn new(response: H2Response, started: Instant) -> H2Exchange {
        let (head, head_bytes) = head_of(&response);
        H2Exchange {
            head,
            head_bytes,
            ended: response.is_end_stream(),
            response,
            pending: VecDeque::new(),
            started,
            received: 0,
            failed: None,
        }
    }

    /// Reads the whole body into `pending` when it is small and announced
    /// (see [`PREFETCH_BODY_MAX_BYTES`]). Runs inside the caller's runtime wait.
    /// A body of unknown size (no Content-Length: typically a server's
    /// chunked answer) gets what already arrived with the head, up to the
    /// same size, without waiting: a small one is then complete too.
    pub(crate) async fn prefetch_small_body(&mut self) -> Result<(), Error> {
        match self.response.content_length() {
            Some(n) if n <= PREFETCH_BODY_MAX_BYTES => {
                while !self.ended {
                    self.pull().await?;
                }
            }
            Some(_) => {}
            None => {
                while !self.ended && self.received <= PREFETCH_BODY_MAX_BYTES {
                    match self.response.chunk_ready() {
                        None => break,
                        Some(next) => self.took(next?),
                    }
                }
            }
        }
        Ok(())
    }

    /// Receives the next piece into `pending`; marks the end of the body.
    async fn pull(&mut self) -> Result<(), Error> {
        // An error `body_ready` found comes after the pieces it left in `pending`.
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let next = self.response.chunk().await?;
        self.took(next);
        Ok(())
    }

    /// Queues a piece of the body (`H2Response` never yields an empty one:
    /// an empty piece left in `pending` would never be taken, and the body
    /// would look longer than it is), or marks the end.
    fn took(&mut self, next: Option<Bytes>) {
        match next {
            Some(data) => {
                debug_assert!(!data.is_empty(), "an empty piece of an HTTP/2 body");
                self.received += data.len() as u64;
                self.pending.push_back(data);
            }
            None => self.ended = true,
        }
    }

    /// The response's `Content-Length`, when it gave one.
    pub fn content_length(&self) -> Option<u64> {
        self.response.content_length()
    }

    /// True when no more waiting is needed to read the body.
    pub fn is_body_buffered(&self) -> bool {
        self.ended
    }

    /// True once the stream ended and every body byte was read.
    pub fn is_complete(&self) -> bool {
        self.ended && self.pending.is_empty()
    }

    /// Copies pending bytes into `dst`; returns how many.
    fn take_pending(&mut self, dst: &mut [u8]) -> usize {
        let mut filled = 0;
        while filled < dst.len() {
            let Some(front) = self.pending.front_mut() else {
                break;
            };
            let n = front.len().min(dst.len() - filled);
            dst[filled..filled + n].copy_from_slice(&front[..n]);
            front.advance(n);
            if front.is_empty() {
                self.pending.pop_front();
            }
            filled += n;
        }
        filled
    }

    /// Reads a body of exactly `dst.len()` bytes (its Content-Length).
    pub fn read_exact_into(
        &mut self,
        dst: &mut [u8],
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        let mut filled = self.take_pending(dst);
        if filled < dst.len() || !self.ended {
            block_on(
                async {
                    while !self.ended {
                        self.pull().await?;
                        filled += self.take_pending(&mut dst[filled..]);
                    }
                    Ok(())
                },
                interrupt,
            )?;
        }
        // h2 checks DATA against Content-Length; this only catches a body
        // that ended short of the size the caller was given.
        if filled < dst.len() || !self.pending.is_empty() {
            return Err(Error::new(
                ErrorKind::RemoteProtocol,
                format!(
                    "HTTP/2 body length differs from Content-Length: received {} of {} bytes",
                    self.received,
                    dst.len()
                ),
            ));
        }
        Ok(())
    }

    /// Reads the rest of the body, appending it to `out`.
    pub fn read_to_end(
        &mut self,
        out: &mut Vec<u8>,
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        for piece in self.pending.drain(..) {
            out.extend_from_slice(&piece);
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.ended {
            return Ok(());
        }
        block_on(
            async {
                while let Some(data) = self.response.chunk().await? {
                    self.received += data.len() as u64;
                    out.extend_from_slice(&data);
                }
                self.ended = true;
                Ok(())
            },
            interrupt,
        )
    }

    /// Whether `read_some` would return without waiting: some of the body
    /// has arrived (taken into `pending` here) or it ended. An error found
    /// here is kept for the next read.
    pub fn body_ready(&mut self) -> bool {
        if !self.pending.is_empty() || self.ended || self.failed.is_some() {
            return true;
        }
        match self.response.chunk_ready() {
            None => false,
            Some(Ok(next)) => {
                self.took(next);
                true
            }
            Some(Err(e)) => {
                self.failed = Some(e);
                true
            }
        }
    }

    /// Reads the next piece of the body into `dst`; 0 at its end.
    pub fn read_some(&mut self, dst: &mut [u8], interrupt: &dyn Interrupt) -> Result<usize, Error> {
        if dst.is_empty() {
            return Ok(0);
        }
        if self.pending.is_empty() && !self.ended {
            block_on(self.pull(), interrupt)?;
        }
        // 0 only at the end: a pull gives a piece or the end.
        Ok(self.take_pending(dst))
    }
}
