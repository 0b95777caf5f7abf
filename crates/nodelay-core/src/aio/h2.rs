//! A response received over HTTP/2 by an async caller: the head in the same
//! raw-bytes-plus-spans form as HTTP/1.1 (`h2::head_of`), the body awaited
//! frame by frame from the shared connection. Dropping it before the end
//! of the body resets the stream (RST_STREAM CANCEL, sent by the h2 crate
//! when the last handle of a stream goes): the connection stays up for the
//! other requests.

use std::time::Instant;

use bytes::{Buf, Bytes};
use nodelay_proto::{HeaderSpan, ResponseHead};

use crate::error::{Error, ErrorKind};
use crate::h2::{head_of, H2Response};

pub(crate) struct AsyncH2Exchange {
    pub head: ResponseHead,
    pub head_bytes: Box<[u8]>,
    response: H2Response,
    /// Received body bytes not handed out yet.
    pending: Bytes,
    pub started: Instant,
    received: u64,
}

impl AsyncH2Exchange {
    pub fn new(response: H2Response, started: Instant) -> Self {
        let (head, head_bytes) = head_of(&response);
        AsyncH2Exchange {
            head,
            head_bytes,
            response,
            pending: Bytes::new(),
            started,
            received: 0,
        }
    }

    pub fn take_head(&mut self) -> (Box<[u8]>, Vec<HeaderSpan>) {
        (
            std::mem::take(&mut self.head_bytes),
            std::mem::take(&mut self.head.headers),
        )
    }

    pub fn content_length(&self) -> Option<u64> {
        self.response.content_length()
    }

    pub fn is_complete(&self) -> bool {
        self.response.is_end_stream() && self.pending.is_empty()
    }

    /// Reads the rest of the body, appending it to `out`; a Content-Length
    /// body within `EXACT_PREALLOC_MAX_BYTES` goes into one exact allocation.
    pub async fn read_to_end(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        if let Some(n) = self.response.content_length() {
            if n <= crate::limits::EXACT_PREALLOC_MAX_BYTES {
                out.reserve_exact((n - self.received.min(n)) as usize + self.pending.len());
            }
        }
        out.extend_from_slice(&std::mem::take(&mut self.pending));
        while let Some(data) = self.response.chunk().await? {
            self.received += data.len() as u64;
            out.extend_from_slice(&data);
        }
        self.check_length()
    }

    /// Reads the next piece of the body into `dst`; 0 at its end (and only
    /// there: `H2Response::chunk` never yields an empty piece).
    pub async fn read_some(&mut self, dst: &mut [u8]) -> Result<usize, Error> {
        if dst.is_empty() {
            return Ok(0);
        }
        if self.pending.is_empty() {
            match self.response.chunk().await? {
                Some(data) => {
                    self.received += data.len() as u64;
                    self.pending = data;
                }
                None => {
                    self.check_length()?;
                    return Ok(0);
                }
            }
        }
        let n = self.pending.len().min(dst.len());
        dst[..n].copy_from_slice(&self.pending[..n]);
        self.pending.advance(n);
        Ok(n)
    }

    /// h2 checks DATA against Content-Length; this catches a stream that
    /// ended short of it.
    fn check_length(&self) -> Result<(), Error> {
        match self.response.content_length() {
            Some(n) if n != self.received => Err(Error::new(
                ErrorKind::RemoteProtocol,
                format!(
                    "HTTP/2 body length differs from Content-Length: received {} of {n} bytes",
                    self.received
                ),
            )),
            _ => Ok(()),
        }
    }
}
