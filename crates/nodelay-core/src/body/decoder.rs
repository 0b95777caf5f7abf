//! The push decoder: raw body pieces in, decoded bytes out, no I/O. Every
//! body that is decoded goes through it: whole bodies, sync streams and async
//! streams, over HTTP/1.1 and HTTP/2.
//!
//! One layer per content coding, innermost last. Each layer is the write side
//! of its decoder (flate2, brotli-decompressor and zstd all have one) writing
//! into its own [`Sink`], which checks the [`Guard`] before it keeps a byte;
//! the bytes a layer produced are pushed into the next one. The last layer's
//! sink holds the decoded bytes waiting to be taken.

use std::io::{self, Write};

use crate::body::coding::{is_zlib_header, Coding};
use crate::body::guard::Guard;
use crate::error::{Error, ErrorKind};

/// Internal buffer of the brotli writer.
const BROTLI_BUFFER_BYTES: usize = 64 * 1024;

/// Raw input is pushed into the layers in slices of at most this size, so
/// the decoded output waiting to be taken stays small: a slice decodes to at
/// most `MAX_DECODE_RATIO` times its size (16 MiB), ordinary compressed text
/// to a few hundred KiB.
pub const FEED_SLICE_BYTES: usize = 16 * 1024;

/// The output of one layer, with the guard checked on every write.
struct Sink {
    out: Vec<u8>,
    produced: u64,
    guard: Guard,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let produced = self.produced + buf.len() as u64;
        self.guard.check(produced).map_err(io::Error::other)?;
        self.produced = produced;
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The write side of one coding's decoder.
enum Codec {
    Gzip(flate2::write::MultiGzDecoder<Sink>),
    Zlib(flate2::write::ZlibDecoder<Sink>),
    RawDeflate(flate2::write::DeflateDecoder<Sink>),
    /// "deflate" before its first two bytes arrived: they tell zlib from raw.
    Sniffing {
        head: Vec<u8>,
        sink: Option<Sink>,
    },
    /// Boxed: the brotli state is several KiB, the others a few hundred bytes.
    Brotli(Box<brotli_decompressor::DecompressorWriter<Sink>>),
    Zstd(zstd::stream::write::Decoder<'static, Sink>),
}

/// Forwards a method to the decoder inside a `Codec` that has one.
macro_rules! by_codec {
    ($codec:expr, $d:ident => $call:expr, sniffing => $other:expr) => {
        match $codec {
            Codec::Gzip($d) => $call,
            Codec::Zlib($d) => $call,
            Codec::RawDeflate($d) => $call,
            Codec::Brotli($d) => $call,
            Codec::Zstd($d) => $call,
            Codec::Sniffing { .. } => $other,
        }
    };
}

struct Layer {
    coding: Coding,
    codec: Codec,
    /// Whether any input came in (a layer given nothing decodes to nothing,
    /// as an empty body does).
    started: bool,
    /// The coded stream ended; what follows is ignored (as a reader stops at
    /// the end of a zlib, raw deflate or brotli stream). Gzip and zstd never
    /// end this way: they read what follows as a further member or frame.
    ended: bool,
}

impl Layer {
    fn new(coding: Coding, guard: Guard) -> Result<Layer, Error> {
        let sink = Sink {
            out: Vec::new(),
            produced: 0,
            guard,
        };
        let codec = match coding {
            Coding::Gzip => Codec::Gzip(flate2::write::MultiGzDecoder::new(sink)),
            Coding::Deflate => Codec::Sniffing {
                head: Vec::with_capacity(2),
                sink: Some(sink),
            },
            Coding::Brotli => Codec::Brotli(Box::new(
                brotli_decompressor::DecompressorWriter::new(sink, BROTLI_BUFFER_BYTES),
            )),
            Coding::Zstd => Codec::Zstd(
                zstd::stream::write::Decoder::new(sink).map_err(|e| corrupt(coding, e))?,
            ),
        };
        Ok(Layer {
            coding,
            codec,
            started: false,
            ended: false,
        })
    }

    fn sink(&mut self) -> &mut Sink {
        match &mut self.codec {
            Codec::Gzip(d) => d.get_mut(),
            Codec::Zlib(d) => d.get_mut(),
            Codec::RawDeflate(d) => d.get_mut(),
            Codec::Brotli(d) => d.get_mut(),
            Codec::Zstd(d) => d.get_mut(),
            Codec::Sniffing { sink, .. } => sink.as_mut().expect("sink present while sniffing"),
        }
    }

    /// Pushes `input` into the decoder; its output lands in the sink.
    fn write(&mut self, mut input: &[u8]) -> Result<(), Error> {
        if input.is_empty() || self.ended {
            return Ok(());
        }
        self.started = true;
        if let Codec::Sniffing { head, .. } = &mut self.codec {
            let take = (2 - head.len()).min(input.len());
            head.extend_from_slice(&input[..take]);
            input = &input[take..];
            if head.len() < 2 {
                return Ok(());
            }
            self.choose_deflate()?;
        }
        let coding = self.coding;
        while !input.is_empty() {
            let written = by_codec!(&mut self.codec, d => d.write(input),
                sniffing => unreachable!("chosen above"))
            .map_err(|e| corrupt(coding, e))?;
            if written == 0 {
                self.ended = true;
                break;
            }
            input = &input[written..];
        }
        // The write sides keep what they decoded last in a buffer of their
        // own until the next write; flushed now, a piece that has arrived is
        // decoded output at once (a stream hands it out without waiting).
        by_codec!(&mut self.codec, d => d.flush(), sniffing => Ok(()))
            .map_err(|e| corrupt(coding, e))
    }

    /// Replaces the sniffing state by the zlib or raw deflate decoder and
    /// pushes the bytes it held into it.
    fn choose_deflate(&mut self) -> Result<(), Error> {
        let Codec::Sniffing { head, sink } = &mut self.codec else {
            return Ok(());
        };
        let head = std::mem::take(head);
        let sink = sink.take().expect("sink present while sniffing");
        self.codec = if is_zlib_header(&head) {
            Codec::Zlib(flate2::write::ZlibDecoder::new(sink))
        } else {
            Codec::RawDeflate(flate2::write::DeflateDecoder::new(sink))
        };
        self.write(&head)
    }

    /// The input is complete: flushes the rest of the output. A truncated
    /// stream fails here.
    fn finish(&mut self) -> Result<(), Error> {
        if !self.started {
            return Ok(());
        }
        self.choose_deflate()?;
        let coding = self.coding;
        by_codec!(&mut self.codec, d => d.finish_input(), sniffing => Ok(()))
            .map_err(|e| corrupt(coding, e))
    }
}

/// "The input is complete" in each decoder's own words.
trait Finish {
    fn finish_input(&mut self) -> io::Result<()>;
}

impl<T: Finish + ?Sized> Finish for Box<T> {
    fn finish_input(&mut self) -> io::Result<()> {
        (**self).finish_input()
    }
}

impl Finish for flate2::write::MultiGzDecoder<Sink> {
    fn finish_input(&mut self) -> io::Result<()> {
        self.try_finish()
    }
}

impl Finish for flate2::write::ZlibDecoder<Sink> {
    fn finish_input(&mut self) -> io::Result<()> {
        self.try_finish()
    }
}

impl Finish for flate2::write::DeflateDecoder<Sink> {
    fn finish_input(&mut self) -> io::Result<()> {
        self.try_finish()
    }
}

impl Finish for brotli_decompressor::DecompressorWriter<Sink> {
    fn finish_input(&mut self) -> io::Result<()> {
        self.close()
    }
}

impl Finish for zstd::stream::write::Decoder<'static, Sink> {
    fn finish_input(&mut self) -> io::Result<()> {
        self.do_finish()
    }
}

/// A guard's error passes through the decoders' `io::Error` unchanged; any
/// other failure means the coded stream is corrupt or truncated.
fn corrupt(coding: Coding, e: io::Error) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        if let Some(Ok(engine)) = e.into_inner().map(|inner| inner.downcast::<Error>()) {
            return *engine;
        }
        return Error::new(ErrorKind::Decoding, format!("invalid {coding:?} body"));
    }
    Error::new(ErrorKind::Decoding, format!("invalid {coding:?} body: {e}")).with_source(e)
}

/// Undoes the content codings of one body, fed piece by piece.
pub struct Decoder {
    /// Innermost coding (applied last, undone first) first.
    layers: Vec<Layer>,
    /// How much of the last layer's output was already taken.
    taken: usize,
    /// Reused to carry one layer's output into the next.
    carry: Vec<u8>,
    /// Raw bytes fed so far.
    fed: u64,
    /// Raw bytes known to make up the body (a whole body), if more than fed.
    expected: u64,
    finished: bool,
}

impl Decoder {
    /// A decoder for `codings` listed in the order they were applied (as
    /// `parse_codings` returns them), each layer's output capped at
    /// `max_bytes`. At least one coding: a body without any is delivered as
    /// received and needs no decoder.
    pub fn new(codings: &[Coding], max_bytes: u64) -> Result<Decoder, Error> {
        debug_assert!(!codings.is_empty(), "identity bodies need no decoder");
        let guard = Guard {
            max_bytes,
            received: 0,
        };
        let layers = codings
            .iter()
            .rev()
            .map(|&coding| Layer::new(coding, guard))
            .collect::<Result<_, _>>()?;
        Ok(Decoder {
            layers,
            taken: 0,
            carry: Vec::new(),
            fed: 0,
            expected: 0,
            finished: false,
        })
    }

    /// Counts `n` raw bytes as received before they are fed, so the ratio
    /// guard of a whole body compares against all of it from the start (as
    /// it would once the last piece is in).
    pub(crate) fn expect_received(&mut self, n: u64) {
        self.expected = n;
        self.update_guards();
    }

    fn update_guards(&mut self) {
        let received = self.fed.max(self.expected);
        for layer in &mut self.layers {
            layer.sink().guard.received = received;
        }
    }

    /// Pushes raw body bytes through every layer. Feed at most
    /// [`FEED_SLICE_BYTES`] at a time and take the output in between to keep
    /// memory flat.
    pub fn feed(&mut self, raw: &[u8]) -> Result<(), Error> {
        self.fed += raw.len() as u64;
        self.update_guards();
        self.layers[0].write(raw)?;
        self.cascade(1)
    }

    /// Pushes each layer's output, from layer `from - 1` on, into the next.
    fn cascade(&mut self, from: usize) -> Result<(), Error> {
        for i in from..self.layers.len() {
            std::mem::swap(&mut self.carry, &mut self.layers[i - 1].sink().out);
            let result = self.layers[i].write(&self.carry);
            self.carry.clear();
            result?;
        }
        Ok(())
    }

    /// The raw body is complete: flushes every layer in turn. A truncated
    /// coded stream fails here.
    pub fn finish(&mut self) -> Result<(), Error> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        for i in 0..self.layers.len() {
            self.layers[i].finish()?;
            self.cascade(i + 1)?;
        }
        Ok(())
    }

    /// Decoded bytes waiting to be taken.
    pub fn pending(&mut self) -> usize {
        self.output().len() - self.taken
    }

    fn output(&mut self) -> &mut Vec<u8> {
        &mut self
            .layers
            .last_mut()
            .expect("a decoder has a layer")
            .sink()
            .out
    }

    /// Moves decoded bytes into `dst`; returns how many.
    pub fn take_into(&mut self, dst: &mut [u8]) -> usize {
        let taken = self.taken;
        let out = self.output();
        let n = (out.len() - taken).min(dst.len());
        dst[..n].copy_from_slice(&out[taken..taken + n]);
        if taken + n == out.len() {
            // All taken: the buffer is reused from its start.
            out.clear();
            self.taken = 0;
        } else {
            self.taken = taken + n;
        }
        n
    }

    /// Takes all decoded bytes waiting (moved out, not copied, when nothing
    /// was taken from them yet).
    pub fn take_all(&mut self) -> Vec<u8> {
        let taken = std::mem::take(&mut self.taken);
        let mut out = std::mem::take(self.output());
        if taken > 0 {
            out.drain(..taken);
        }
        out
    }
}

/// Undoes `codings` over a whole body received as `raw` (empty `codings`:
/// `raw` as it is, not copied). An empty body decodes to nothing, as a HEAD
/// answer or a 204 with a `Content-Encoding` must.
pub fn decode(codings: &[Coding], raw: Vec<u8>, max_bytes: u64) -> Result<Vec<u8>, Error> {
    if codings.is_empty() || raw.is_empty() {
        return Ok(raw);
    }
    let mut decoder = Decoder::new(codings, max_bytes)?;
    decoder.expect_received(raw.len() as u64);
    // The decoded body builds up in the last layer's sink (capped by the
    // guard); slices bound what the layers in between hold at once.
    for slice in raw.chunks(FEED_SLICE_BYTES) {
        decoder.feed(slice)?;
    }
    decoder.finish()?;
    Ok(decoder.take_all())
}
