//! A response body read piece by piece, decoded on the fly: the engine side
//! of `client.stream(...)` / `iter_bytes()` on the sync path.
//!
//! The blocking driver of [`Pieces`]: it reads raw pieces from the exchange
//! and pushes them through the body pipeline's decoder (no decoder reads from
//! the connection, so building or starting a stream never waits on the
//! network). At the end of the body the connection goes back to the pool; on
//! error, or when dropped early, it is closed.

use std::sync::Arc;

use crate::any_exchange::Exchange;
use crate::body::pieces::{Pieces, Step};
use crate::body::Coding;
use crate::error::Error;
use crate::interrupt::Interrupt;

/// A response body being streamed.
pub struct BodyStream {
    /// `None` once the raw body ended (connection given back) or failed.
    /// Boxed: an exchange is large, and a stream is moved around by its owner.
    exchange: Option<Box<Exchange>>,
    interrupt: Arc<dyn Interrupt + Send + Sync>,
    pieces: Pieces,
    /// The trailer lines that followed the raw body (`Exchange::take_trailers`).
    trailers: Vec<u8>,
}

impl BodyStream {
    /// Streams the body of `exchange`, undoing `codings` (in the order they
    /// were applied; empty for the body as received), bounded by
    /// `max_decoded_bytes`. Codings come from `Exchange::content_codings`,
    /// read before the head is taken out of the exchange. No I/O.
    pub fn new(
        exchange: Exchange,
        interrupt: Arc<dyn Interrupt + Send + Sync>,
        codings: &[Coding],
        max_decoded_bytes: u64,
    ) -> Result<BodyStream, Error> {
        Ok(BodyStream {
            exchange: Some(Box::new(exchange)),
            interrupt,
            pieces: Pieces::new(codings, max_decoded_bytes)?,
            trailers: Vec::new(),
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

    /// Reads what has arrived of the body into `dst`: waits only for the
    /// first bytes, then goes on towards `min` bytes only while more is there
    /// without waiting. So a body that keeps coming gives big pieces, and one
    /// that trickles (server-sent events, a streamed answer) is handed out as
    /// it arrives, never held back to fill a piece. Returns how many bytes
    /// were written (0 only at the end of the body). On error the connection
    /// is closed and the stream ends.
    pub fn read(&mut self, dst: &mut [u8], min: usize) -> Result<usize, Error> {
        let piece = self.fill(dst, min);
        if piece.is_err() {
            self.exchange = None;
            self.pieces.fail();
        }
        piece
    }

    fn fill(&mut self, dst: &mut [u8], min: usize) -> Result<usize, Error> {
        let mut filled = 0;
        while self.pieces.step(dst, &mut filled, min)? == Step::Read {
            let Some(exchange) = self.exchange.as_mut() else {
                // Ended earlier (a failed read): nothing more comes.
                self.pieces.got(0, &mut filled);
                continue;
            };
            if filled > 0 && !exchange.body_ready() {
                break;
            }
            let target = self.pieces.read_target(dst, filled);
            let n = exchange.read_some(target, &*self.interrupt)?;
            self.pieces.got(n, &mut filled);
            // The last bytes of a body whose framing says it is complete (all
            // of a Content-Length, an HTTP/2 stream's end) end the raw body at
            // once: the connection goes back to the pool with this piece, and
            // the caller sees the end without one more read.
            if n > 0 && exchange.is_complete() {
                self.pieces.got(0, &mut filled);
            }
            if self.pieces.raw_ended() {
                if let Some(mut exchange) = self.exchange.take() {
                    self.trailers = exchange.take_trailers();
                    exchange.finish();
                }
            }
        }
        Ok(filled)
    }

    /// The trailer lines that followed the body, once it ended (see
    /// `Exchange::take_trailers`).
    pub fn trailers(&self) -> &[u8] {
        &self.trailers
    }

    /// True once the raw body ended (its connection given back or closed)
    /// and every decoded byte was handed out: the next read returns 0.
    pub fn is_ended(&self) -> bool {
        self.exchange.is_none() && self.pieces.is_drained()
    }
}
