//! A streamed async response body, decoded on the fly: the engine side of
//! `async with client.stream(...)` / `aiter_bytes()`. At the end of the body
//! the connection goes back to the pool; on error, or when the stream is
//! dropped half-read, it is closed (HOSTILE.md H29).

use std::future::Future;
use std::task::{Context, Poll, Waker};

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

    /// The next piece: what has arrived, at most `max` bytes; empty once the
    /// body is complete. It waits only for the first bytes, and grows towards
    /// `min` only with bytes already there: a body that keeps coming gives big
    /// pieces, one that trickles is handed out as it arrives. On error the
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
            let n = if filled == 0 {
                exchange.read_some(&mut out[filled..]).await?
            } else {
                match ready_now(exchange.read_some(&mut out[filled..])) {
                    Some(n) => n?,
                    None => break,
                }
            };
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
            let n = if chain.pending() == 0 {
                exchange.read_some(&mut self.raw).await?
            } else {
                match ready_now(exchange.read_some(&mut self.raw)) {
                    Some(n) => n?,
                    None => return Ok(chain.take(max)),
                }
            };
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

/// Polls `future` once: its output when it is ready at once, `None` when it
/// would wait (it is then dropped; the exchange's reads consume nothing until
/// they complete, so nothing is lost).
fn ready_now<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    // A no-op waker: nobody waits on this poll; the next real read registers
    // its own waker.
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}
