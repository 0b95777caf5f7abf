//! Push-style content decoding for streamed async bodies.
//!
//! The sync stream (`stream.rs`) pulls: its decoders read from the socket
//! through `io::Read`, which would block. An async body is pushed instead:
//! raw bytes go into the decoders' `Write` side (flate2, brotli-decompressor
//! and zstd all have one) as they arrive. Each layer writes into its own
//! bounded sink; the sink enforces the same decoded-size cap and ratio guard
//! as `stream.rs` (HOSTILE.md B14), so a bomb stops at the limit.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::decode::{is_zlib_header, Coding, MAX_DECODE_RATIO, RATIO_GUARD_FLOOR_BYTES};
use crate::error::{Error, ErrorKind};
use crate::stream::unwrap_io;

/// Internal buffer of the brotli writer.
const BROTLI_BUFFER_BYTES: usize = 64 * 1024;

/// Raw input is handed to the decoders in slices of at most this size, so
/// the decoded output waiting to be read stays small (a slice of ordinary
/// compressed text decodes to a few hundred KiB at most).
pub(crate) const FEED_SLICE_BYTES: usize = 16 * 1024;

/// The output of one decoding layer, with the bounds checked on every write.
struct Sink {
    out: Vec<u8>,
    produced: u64,
    max_bytes: u64,
    /// Raw body bytes received so far (for the ratio guard).
    received: u64,
}

#[derive(Clone)]
struct SharedSink(Arc<Mutex<Sink>>);

impl SharedSink {
    fn lock(&self) -> MutexGuard<'_, Sink> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut sink = self.lock();
        sink.produced += buf.len() as u64;
        if sink.produced > sink.max_bytes {
            let message = format!("decoded body exceeds the limit of {} bytes", sink.max_bytes);
            return Err(io::Error::other(Error::new(ErrorKind::Decoding, message)));
        }
        let received = sink.received.max(1);
        if sink.produced > RATIO_GUARD_FLOOR_BYTES && sink.produced / received > MAX_DECODE_RATIO {
            let message =
                format!("decompression ratio above {MAX_DECODE_RATIO}:1 (a decompression bomb?)");
            return Err(io::Error::other(Error::new(ErrorKind::Decoding, message)));
        }
        sink.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A decoder's write side plus "the input is complete".
trait Decode: Write + Send {
    /// Flushes the rest of the output; fails on a truncated stream.
    fn finish(&mut self) -> io::Result<()>;
}

impl<W: Write + Send> Decode for flate2::write::MultiGzDecoder<W> {
    fn finish(&mut self) -> io::Result<()> {
        self.try_finish()
    }
}

impl<W: Write + Send> Decode for flate2::write::ZlibDecoder<W> {
    fn finish(&mut self) -> io::Result<()> {
        self.try_finish()
    }
}

impl<W: Write + Send> Decode for flate2::write::DeflateDecoder<W> {
    fn finish(&mut self) -> io::Result<()> {
        self.try_finish()
    }
}

impl<W: Write + Send> Decode for brotli_decompressor::DecompressorWriter<W> {
    fn finish(&mut self) -> io::Result<()> {
        self.close()
    }
}

impl<W: Write + Send> Decode for zstd::stream::write::Decoder<'static, W> {
    fn finish(&mut self) -> io::Result<()> {
        self.do_finish()
    }
}

/// RFC 9110 "deflate" is zlib-wrapped; some servers send raw deflate. The
/// first two bytes (RFC 1950 §2.2 check bits) tell them apart.
struct SniffDeflate {
    sink: SharedSink,
    head: Vec<u8>,
    inner: Option<Box<dyn Decode>>,
}

impl SniffDeflate {
    fn start(&mut self) -> io::Result<&mut Box<dyn Decode>> {
        if self.inner.is_none() {
            let sink = self.sink.clone();
            let mut decoder: Box<dyn Decode> = if is_zlib_header(&self.head) {
                Box::new(flate2::write::ZlibDecoder::new(sink))
            } else {
                Box::new(flate2::write::DeflateDecoder::new(sink))
            };
            decoder.write_all(&std::mem::take(&mut self.head))?;
            self.inner = Some(decoder);
        }
        Ok(self.inner.as_mut().expect("set above"))
    }
}

impl Write for SniffDeflate {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.inner.is_none() && self.head.len() + buf.len() < 2 {
            self.head.extend_from_slice(buf);
            return Ok(buf.len());
        }
        if self.inner.is_none() {
            self.head.extend_from_slice(buf);
            self.start()?;
            return Ok(buf.len());
        }
        self.start()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Decode for SniffDeflate {
    fn finish(&mut self) -> io::Result<()> {
        self.start()?.finish()
    }
}

fn layer(coding: Coding, sink: SharedSink) -> Result<Box<dyn Decode>, Error> {
    Ok(match coding {
        Coding::Gzip => Box::new(flate2::write::MultiGzDecoder::new(sink)),
        Coding::Deflate => Box::new(SniffDeflate {
            sink,
            head: Vec::new(),
            inner: None,
        }),
        Coding::Brotli => Box::new(brotli_decompressor::DecompressorWriter::new(
            sink,
            BROTLI_BUFFER_BYTES,
        )),
        Coding::Zstd => Box::new(
            zstd::stream::write::Decoder::new(sink)
                .map_err(|e| Error::new(ErrorKind::Decoding, format!("zstd setup failed: {e}")))?,
        ),
    })
}

/// The decoders of one body, outermost coding first, each writing into its
/// own sink; the last sink holds decoded bytes waiting to be read.
pub(crate) struct DecodeChain {
    layers: Vec<(Box<dyn Decode>, SharedSink)>,
    started: bool,
}

impl DecodeChain {
    /// `codings` in the order they were applied (as `parse_codings` returns).
    pub fn new(codings: &[Coding], max_bytes: u64) -> Result<DecodeChain, Error> {
        let mut layers = Vec::with_capacity(codings.len());
        for &coding in codings.iter().rev() {
            let sink = SharedSink(Arc::new(Mutex::new(Sink {
                out: Vec::new(),
                produced: 0,
                max_bytes,
                received: 0,
            })));
            layers.push((layer(coding, sink.clone())?, sink));
        }
        Ok(DecodeChain {
            layers,
            started: false,
        })
    }

    /// Pushes raw body bytes through every layer; `received` is the raw
    /// byte count so far, including `input`.
    pub fn feed(&mut self, input: &[u8], received: u64) -> Result<(), Error> {
        self.started = true;
        for (_, sink) in &self.layers {
            sink.lock().received = received;
        }
        self.push(0, input)
    }

    fn push(&mut self, from: usize, input: &[u8]) -> Result<(), Error> {
        let mut carry = input.to_vec();
        for i in from..self.layers.len() {
            if i > from {
                carry = std::mem::take(&mut self.layers[i - 1].1.lock().out);
            }
            if !carry.is_empty() {
                self.layers[i].0.write_all(&carry).map_err(unwrap_io)?;
            }
        }
        Ok(())
    }

    /// The input is complete: flushes every layer in turn (a truncated
    /// encoded stream fails here).
    pub fn finish(&mut self) -> Result<(), Error> {
        if !self.started {
            // An empty body decodes to nothing (as the whole-body path).
            return Ok(());
        }
        for i in 0..self.layers.len() {
            if i > 0 {
                let carry = std::mem::take(&mut self.layers[i - 1].1.lock().out);
                self.push(i, &carry)?;
            }
            self.layers[i].0.finish().map_err(unwrap_io)?;
        }
        Ok(())
    }

    /// Decoded bytes waiting to be read.
    pub fn pending(&self) -> usize {
        self.layers
            .last()
            .map_or(0, |(_, sink)| sink.lock().out.len())
    }

    /// Takes up to `max` decoded bytes.
    pub fn take(&mut self, max: usize) -> Vec<u8> {
        let Some((_, sink)) = self.layers.last() else {
            return Vec::new();
        };
        let mut sink = sink.lock();
        if sink.out.len() <= max {
            return std::mem::take(&mut sink.out);
        }
        let rest = sink.out.split_off(max);
        std::mem::replace(&mut sink.out, rest)
    }
}
