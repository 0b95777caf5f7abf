//! A streamed async response body, decoded on the fly: the engine side of
//! `async with client.stream(...)` / `aiter_bytes()`. At the end of the body
//! the connection goes back to the pool; on error, or when the stream is
//! dropped half-read, it is closed (HOSTILE.md H29).

use crate::aio::any_exchange::AsyncExchange;
use crate::aio::decode::{DecodeChain, FEED_SLICE_BYTES};
use crate::decode::Coding;
use crate::error::Error;
use crate::limits::READ_BUFFER_BYTES;

pub struct AsyncBodyStream {
    /// `None` once the raw body ended (connection given back) or failed.
    exchange: Option<AsyncExchange>,
    /// Content decoders; `None` delivers the body as received.
    chain: Option<DecodeChain>,
    /// Raw bytes read but not yet fed to the decoders: `raw[fed..filled]`.
    raw: Vec<u8>,
    fed: usize,
    filled: usize,
    received: u64,
    finished: bool,
}

impl AsyncBodyStream {
    /// Streams the body of `exchange`, undoing `codings` (in the order they
    /// were applied; empty for the body as received), bounded by
    /// `max_decoded_bytes`.
    pub fn new(
        exchange: AsyncExchange,
        codings: &[Coding],
        max_decoded_bytes: u64,
    ) -> Result<AsyncBodyStream, Error> {
        let chain = if codings.is_empty() {
            None
        } else {
            Some(DecodeChain::new(codings, max_decoded_bytes)?)
        };
        Ok(AsyncBodyStream {
            exchange: Some(exchange),
            chain,
            raw: Vec::new(),
            fed: 0,
            filled: 0,
            received: 0,
            finished: false,
        })
    }

    /// Whether content decoding is applied.
    pub fn is_decoded(&self) -> bool {
        self.chain.is_some()
    }

    /// The next piece: at least `min` bytes (fewer only at the end of the
    /// body), at most `max`; empty once the body is complete. On error the
    /// connection is closed and the stream ends.
    pub async fn read(&mut self, max: usize, min: usize) -> Result<Vec<u8>, Error> {
        let max = max.max(1);
        let min = min.clamp(1, max);
        let piece = if self.chain.is_some() {
            self.read_decoded(max, min).await
        } else {
            self.read_raw(max, min).await
        };
        if piece.is_err() {
            self.exchange = None;
            self.chain = None;
            self.finished = true;
        }
        piece
    }

    async fn read_raw(&mut self, max: usize, min: usize) -> Result<Vec<u8>, Error> {
        let mut out = vec![0; max];
        let mut filled = 0;
        while filled < min {
            let Some(exchange) = self.exchange.as_mut() else {
                break;
            };
            let n = exchange.read_some(&mut out[filled..]).await?;
            if n == 0 {
                self.end_of_raw();
                break;
            }
            filled += n;
        }
        out.truncate(filled);
        Ok(out)
    }

    async fn read_decoded(&mut self, max: usize, min: usize) -> Result<Vec<u8>, Error> {
        loop {
            let chain = self.chain.as_mut().expect("decoding stream");
            if chain.pending() >= min || self.finished {
                return Ok(chain.take(max));
            }
            if self.fed < self.filled {
                let end = self.filled.min(self.fed + FEED_SLICE_BYTES);
                chain.feed(&self.raw[self.fed..end], self.received)?;
                self.fed = end;
                continue;
            }
            let Some(exchange) = self.exchange.as_mut() else {
                chain.finish()?;
                self.finished = true;
                continue;
            };
            if self.raw.is_empty() {
                self.raw = vec![0; READ_BUFFER_BYTES];
            }
            let n = exchange.read_some(&mut self.raw).await?;
            if n == 0 {
                self.end_of_raw();
                continue;
            }
            self.fed = 0;
            self.filled = n;
            self.received += n as u64;
        }
    }

    /// The raw body is complete: the connection goes back to the pool.
    fn end_of_raw(&mut self) {
        if let Some(exchange) = self.exchange.take() {
            exchange.finish();
        }
    }
}
