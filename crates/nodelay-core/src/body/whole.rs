//! A body read whole and decoded, and [`WholeResponse`], what the sync, async
//! and batch paths hand to a binding: the head, the decoded body, the
//! timing, the connection already back in its pool (or closed).
//!
//! Reading is split in two steps so a binding can read an identity body with
//! an announced length straight into its own buffer (a Python `bytes`
//! object: one allocation, no copy): [`WholeBody::exact_len`] says when, and
//! [`WholeBody::read`] / [`WholeBody::read_async`] do every other case. The
//! bytes come through [`RawBody`] / [`AsyncRawBody`], which the exchanges of
//! each driver implement: this module knows no exchange type.

use std::future::Future;
use std::time::Duration;

use nodelay_proto::{HeaderSpan, ResponseHead, Version};

use crate::body::coding::Coding;
use crate::body::decoder::decode;
use crate::error::Error;
use crate::interrupt::Interrupt;
use crate::limits::EXACT_PREALLOC_MAX_BYTES;

/// The raw (still encoded) body of a response on the sync driver.
pub trait RawBody {
    /// Reads a body of exactly `dst.len()` bytes into `dst`.
    fn read_exact_into(&mut self, dst: &mut [u8], interrupt: &dyn Interrupt) -> Result<(), Error>;
    /// Reads the rest of the body, appending it to `out`.
    fn read_to_end(&mut self, out: &mut Vec<u8>, interrupt: &dyn Interrupt) -> Result<(), Error>;
}

/// The raw (still encoded) body of a response on the async driver.
pub trait AsyncRawBody {
    /// Reads the rest of the body, appending it to `out`.
    fn read_to_end<'a>(
        &'a mut self,
        out: &'a mut Vec<u8>,
    ) -> impl Future<Output = Result<(), Error>> + Send + 'a;
}

/// A response read whole, its body decoded, its connection given back.
pub struct WholeResponse<B = Vec<u8>> {
    /// The response status code.
    pub status: u16,
    /// The HTTP version the response came in.
    pub version: Version,
    /// The reason phrase's span in `head_bytes`.
    pub reason: (u32, u32),
    /// The raw head; `headers` index into it (HTTP/2: synthesized, see
    /// `Exchange::head_bytes`).
    pub head_bytes: Box<[u8]>,
    /// Each header's name and value as spans of `head_bytes`.
    pub headers: Vec<HeaderSpan>,
    /// The decoded body (the binding's own buffer type when it read it).
    pub body: B,
    /// From the start of the request to the last body byte.
    pub elapsed: Duration,
}

/// What reading one whole body takes, from its head: the codings to undo and
/// the announced length.
#[derive(Debug, Clone)]
pub struct WholeBody {
    /// Empty: delivered as received (no coding, or an unknown one).
    codings: Vec<Coding>,
    length: Option<u64>,
}

impl WholeBody {
    /// From the response's codings (`None`: an unknown one, so the body is
    /// delivered as received) and its announced length.
    pub fn new(codings: Option<Vec<Coding>>, length: Option<u64>) -> WholeBody {
        WholeBody {
            codings: codings.unwrap_or_default(),
            length,
        }
    }

    /// `Some(n)`: the body is exactly `n` bytes delivered as received; read
    /// it with `read_exact_into` into a buffer of that size. Announced sizes
    /// above `EXACT_PREALLOC_MAX_BYTES` are not trusted for one allocation
    /// (docs/hostile.md A11).
    pub fn exact_len(&self) -> Option<usize> {
        match self.length {
            Some(n) if self.codings.is_empty() && n <= EXACT_PREALLOC_MAX_BYTES => Some(n as usize),
            _ => None,
        }
    }

    /// Whether content decoding is applied.
    pub fn is_decoded(&self) -> bool {
        !self.codings.is_empty()
    }

    /// The buffer the raw body is read into: of the exact size when the
    /// length is announced and trusted, else grown by the reads.
    fn raw_buffer(&self) -> Vec<u8> {
        match self.length {
            Some(n) if n <= EXACT_PREALLOC_MAX_BYTES => Vec::with_capacity(n as usize),
            _ => Vec::new(),
        }
    }

    /// Reads the rest of the body on the sync driver and decodes it, bounded
    /// by `max_decoded_bytes` and the ratio guard.
    pub fn read(
        &self,
        source: &mut impl RawBody,
        interrupt: &dyn Interrupt,
        max_decoded_bytes: u64,
    ) -> Result<Vec<u8>, Error> {
        if let Some(n) = self.exact_len() {
            let mut body = vec![0; n];
            source.read_exact_into(&mut body, interrupt)?;
            return Ok(body);
        }
        let mut raw = self.raw_buffer();
        source.read_to_end(&mut raw, interrupt)?;
        decode(&self.codings, raw, max_decoded_bytes)
    }

    /// [`WholeBody::read`] on the async driver.
    pub async fn read_async(
        &self,
        source: &mut impl AsyncRawBody,
        max_decoded_bytes: u64,
    ) -> Result<Vec<u8>, Error> {
        let mut raw = self.raw_buffer();
        source.read_to_end(&mut raw).await?;
        decode(&self.codings, raw, max_decoded_bytes)
    }
}

impl<B> WholeResponse<B> {
    /// The response of `head` (its header list and bytes already taken out
    /// as `taken`) with `body`, `elapsed` after the request started.
    pub(crate) fn new(
        head: &ResponseHead,
        taken: (Box<[u8]>, Vec<HeaderSpan>),
        body: B,
        elapsed: Duration,
    ) -> WholeResponse<B> {
        let (head_bytes, headers) = taken;
        WholeResponse {
            status: head.status,
            version: head.version,
            reason: head.reason,
            head_bytes,
            headers,
            body,
            elapsed,
        }
    }
}
