//! A streamed async response body, decoded on the fly: the engine side of
//! `async with client.stream(...)` / `aiter_bytes()`. The async driver of
//! [`Pieces`] (the sync one is `stream.rs`). At the end of the body the
//! connection goes back to the pool; on error, or when the stream is dropped
//! half-read, it is closed (docs/hostile.md H29).

use std::future::Future;
use std::task::{Context, Poll, Waker};

use crate::aio::any_exchange::AsyncExchange;
use crate::body::pieces::{Pieces, Step};
use crate::body::Coding;
use crate::error::Error;

/// A response body being streamed on the async driver.
pub struct AsyncBodyStream {
    /// `None` once the raw body ended (connection given back) or failed.
    exchange: Option<AsyncExchange>,
    pieces: Pieces,
}

impl AsyncBodyStream {
    /// Streams the body of `exchange`, undoing `codings` (in the order they
    /// were applied; empty for the body as received), bounded by
    /// `max_decoded_bytes`. No I/O.
    pub fn new(
        exchange: AsyncExchange,
        codings: &[Coding],
        max_decoded_bytes: u64,
    ) -> Result<AsyncBodyStream, Error> {
        Ok(AsyncBodyStream {
            exchange: Some(exchange),
            pieces: Pieces::new(codings, max_decoded_bytes)?,
        })
    }

    /// Whether content decoding is applied.
    pub fn is_decoded(&self) -> bool {
        self.pieces.is_decoded()
    }

    /// Bytes of the body read from the connection so far, as received
    /// (before content decoding).
    pub fn raw_bytes_read(&self) -> u64 {
        self.pieces.raw_read()
    }

    /// The next piece: what has arrived, at most `max` bytes; empty once the
    /// body is complete. It waits only for the first bytes, and grows towards
    /// `min` only with bytes already there: a body that keeps coming gives big
    /// pieces, one that trickles is handed out as it arrives. On error the
    /// connection is closed and the stream ends.
    pub async fn read(&mut self, max: usize, min: usize) -> Result<Vec<u8>, Error> {
        let max = max.max(1);
        let min = min.clamp(1, max);
        let mut piece = vec![0; max];
        let n = self.fill_or_end(&mut piece, min).await?;
        piece.truncate(n);
        Ok(piece)
    }

    /// The rest of the body, read into one buffer that grows as it fills
    /// (no copy per piece); `first` is its first size (the rest of a body
    /// delivered as received when its length is known, for one allocation).
    pub async fn read_rest(&mut self, first: usize) -> Result<Vec<u8>, Error> {
        let mut all: Vec<u8> = Vec::new();
        let mut filled = 0;
        loop {
            if filled == all.len() {
                let grown = filled.saturating_mul(2).max(first).max(1);
                all.resize(grown, 0);
            }
            let room = all.len() - filled;
            let n = self.fill_or_end(&mut all[filled..], room).await?;
            if n == 0 {
                all.truncate(filled);
                return Ok(all);
            }
            filled += n;
        }
    }

    /// [`fill`](Self::fill); on error the connection is closed and the
    /// stream ends.
    async fn fill_or_end(&mut self, dst: &mut [u8], min: usize) -> Result<usize, Error> {
        let filled = self.fill(dst, min).await;
        if filled.is_err() {
            self.exchange = None;
            self.pieces.fail();
        }
        filled
    }

    async fn fill(&mut self, dst: &mut [u8], min: usize) -> Result<usize, Error> {
        let mut filled = 0;
        while self.pieces.step(dst, &mut filled, min)? == Step::Read {
            let Some(exchange) = self.exchange.as_mut() else {
                self.pieces.got(0, &mut filled);
                continue;
            };
            let target = self.pieces.read_target(dst, filled);
            let n = if filled == 0 {
                exchange.read_some(target).await?
            } else {
                match ready_now(exchange.read_some(target)) {
                    Some(n) => n?,
                    None => break,
                }
            };
            self.pieces.got(n, &mut filled);
            // As on the blocking driver (`stream.rs`): the last bytes of a
            // body whose framing says it is complete end the raw body at
            // once, so the connection goes back with this piece and the
            // caller sees the end (`is_ended`) without one more read.
            if n > 0 && exchange.is_complete() {
                self.pieces.got(0, &mut filled);
            }
            if self.pieces.raw_ended() {
                if let Some(exchange) = self.exchange.take() {
                    exchange.finish();
                }
            }
        }
        Ok(filled)
    }

    /// True once the raw body ended (its connection given back or closed)
    /// and every decoded byte was handed out: the next read returns empty.
    pub fn is_ended(&self) -> bool {
        self.exchange.is_none() && self.pieces.is_drained()
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
