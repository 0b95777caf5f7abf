//! A body read piece by piece, without I/O: what the sync stream
//! (`stream.rs`) and the async stream (`aio/body.rs`) share. Each driver
//! loops on [`Pieces::step`], and when it says [`Step::Read`] reads raw bytes
//! into [`Pieces::read_target`] the way its protocol and its waiting work.
//!
//! "A piece is what has arrived": the driver waits only for the first bytes
//! of a piece; once it holds some, it reads on towards `min` only while more
//! is there without waiting (a body that keeps coming gives big pieces, one
//! that trickles, such as server-sent events, is handed out as it arrives).

use crate::body::coding::Coding;
use crate::body::decoder::{Decoder, FEED_SLICE_BYTES};
use crate::error::Error;
use crate::limits::READ_BUFFER_BYTES;

/// What the driver does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Hand out the piece as it is (empty only at the end of the body).
    Return,
    /// Read raw bytes into `read_target`: waiting for them if the piece is
    /// still empty, else only if they are already there (otherwise return
    /// the piece).
    Read,
}

pub(crate) struct Pieces {
    /// `None` delivers the body as received, read straight into the piece.
    decoder: Option<Decoder>,
    /// Raw bytes read but not yet fed: `raw[fed..filled]`.
    raw: Vec<u8>,
    fed: usize,
    filled: usize,
    /// The raw body ended (the driver read 0).
    raw_ended: bool,
    /// The decoder was finished: everything decoded is in it.
    done: bool,
    /// Raw bytes the driver has read so far (before decoding): httpx's
    /// `Response.num_bytes_downloaded`.
    raw_read: u64,
}

impl Pieces {
    /// Undoes `codings` (in the order applied; empty for the body as
    /// received), each layer capped at `max_decoded_bytes`.
    pub fn new(codings: &[Coding], max_decoded_bytes: u64) -> Result<Pieces, Error> {
        let decoder = if codings.is_empty() {
            None
        } else {
            Some(Decoder::new(codings, max_decoded_bytes)?)
        };
        Ok(Pieces {
            decoder,
            raw: Vec::new(),
            fed: 0,
            filled: 0,
            raw_ended: false,
            done: false,
            raw_read: 0,
        })
    }

    /// Whether content decoding is applied.
    pub fn is_decoded(&self) -> bool {
        self.decoder.is_some()
    }

    /// Moves what is decoded into `dst[*filled..]` (feeding raw bytes read
    /// earlier as needed) and tells what comes next.
    pub fn step(&mut self, dst: &mut [u8], filled: &mut usize, min: usize) -> Result<Step, Error> {
        let len = dst.len();
        let piece_done = |filled: usize| filled == len || (filled > 0 && filled >= min);
        let Some(decoder) = self.decoder.as_mut() else {
            return Ok(if self.raw_ended || piece_done(*filled) {
                Step::Return
            } else {
                Step::Read
            });
        };
        loop {
            *filled += decoder.take_into(&mut dst[*filled..]);
            if self.done || piece_done(*filled) {
                return Ok(Step::Return);
            }
            if self.fed < self.filled {
                let end = self.filled.min(self.fed + FEED_SLICE_BYTES);
                decoder.feed(&self.raw[self.fed..end])?;
                self.fed = end;
                continue;
            }
            if self.raw_ended {
                decoder.finish()?;
                self.done = true;
                continue;
            }
            return Ok(Step::Read);
        }
    }

    /// Where the driver reads raw bytes: the piece itself for a body
    /// delivered as received (no copy), else the decoder's input buffer.
    pub fn read_target<'a>(&'a mut self, dst: &'a mut [u8], filled: usize) -> &'a mut [u8] {
        if self.decoder.is_none() {
            return &mut dst[filled..];
        }
        if self.raw.is_empty() {
            self.raw = vec![0; READ_BUFFER_BYTES];
        }
        &mut self.raw
    }

    /// Whether the raw body ended (the driver read 0, or the body failed).
    pub fn raw_ended(&self) -> bool {
        self.raw_ended
    }

    /// Whether nothing is left to hand out: the raw body ended and was
    /// delivered as received (a decoded body may still hold decoded bytes;
    /// its end is found by the read that returns 0).
    pub fn is_drained(&self) -> bool {
        self.raw_ended && self.decoder.is_none()
    }

    /// Raw bytes read so far, as received (content codings still applied).
    pub fn raw_read(&self) -> u64 {
        self.raw_read
    }

    /// The body failed: what comes after is not the body, so every further
    /// piece is empty.
    pub fn fail(&mut self) {
        self.decoder = None;
        self.raw_ended = true;
    }

    /// The driver read `n` raw bytes into the read target; 0 is the end of
    /// the raw body.
    pub fn got(&mut self, n: usize, filled: &mut usize) {
        self.raw_read += n as u64;
        if n == 0 {
            self.raw_ended = true;
        } else if self.decoder.is_none() {
            *filled += n;
        } else {
            self.fed = 0;
            self.filled = n;
        }
    }
}
