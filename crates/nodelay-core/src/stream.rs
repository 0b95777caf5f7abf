//! A response body read piece by piece, decoded on the fly: the engine side
//! of `client.stream(...)` / `iter_bytes()`.
//!
//! The raw body is an `io::Read` over the exchange; content decoders wrap it;
//! a bounding reader on top enforces the decoded-size cap and ratio guard as
//! bytes come out, so a bomb is stopped mid-stream with memory flat.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::any_exchange::Exchange;
use crate::decode::{is_zlib_header, Coding, MAX_DECODE_RATIO, RATIO_GUARD_FLOOR_BYTES};
use crate::error::{Error, ErrorKind};
use crate::interrupt::Interrupt;

/// Buffer size of the decoders' input readers.
const DECODER_INPUT_BYTES: usize = 64 * 1024;

/// Raw body bytes as `io::Read`. At the end of the body the connection goes
/// back to the pool; on error (or when dropped early) it is closed.
///
/// The exchange is shared with [`BodyStream`], which asks it between reads
/// whether more has arrived (the decoders stand between the two).
struct RawBody {
    exchange: SharedExchange,
    interrupt: Arc<dyn Interrupt + Send + Sync>,
    received: Arc<AtomicU64>,
}

/// The exchange of a streamed body; `None` once it ended (finished or failed).
#[derive(Clone)]
struct SharedExchange(Arc<Mutex<Option<Exchange>>>);

impl SharedExchange {
    fn lock(&self) -> MutexGuard<'_, Option<Exchange>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Read for RawBody {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut slot = self.exchange.lock();
        let Some(exchange) = slot.as_mut() else {
            return Ok(0);
        };
        match exchange.read_some(buf, &*self.interrupt) {
            Ok(0) => {
                if let Some(exchange) = slot.take() {
                    exchange.finish();
                }
                Ok(0)
            }
            Ok(n) => {
                self.received.fetch_add(n as u64, Ordering::Relaxed);
                Ok(n)
            }
            Err(e) => {
                *slot = None;
                Err(io::Error::other(e))
            }
        }
    }
}

/// Stops the decoded stream at the size cap or the ratio guard.
struct Bounded<R> {
    inner: R,
    produced: u64,
    max_bytes: u64,
    received: Arc<AtomicU64>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.produced += n as u64;
        if self.produced > self.max_bytes {
            let message = format!("decoded body exceeds the limit of {} bytes", self.max_bytes);
            return Err(io::Error::other(Error::new(ErrorKind::Decoding, message)));
        }
        let received = self.received.load(Ordering::Relaxed).max(1);
        if self.produced > RATIO_GUARD_FLOOR_BYTES && self.produced / received > MAX_DECODE_RATIO {
            let message =
                format!("decompression ratio above {MAX_DECODE_RATIO}:1 (a decompression bomb?)");
            return Err(io::Error::other(Error::new(ErrorKind::Decoding, message)));
        }
        Ok(n)
    }
}

/// RFC 9110 "deflate" is zlib-wrapped; some servers send raw deflate. Peek
/// at the first two bytes (RFC 1950 §2.2 check bits) to tell them apart.
struct SniffDeflate<R: BufRead> {
    inner: Option<R>,
    decoder: Option<Box<dyn Read + Send>>,
}

impl<R: BufRead + Send + 'static> Read for SniffDeflate<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.decoder.is_none() {
            let mut inner = self.inner.take().expect("input present until sniffed");
            self.decoder = Some(if is_zlib_header(inner.fill_buf()?) {
                Box::new(flate2::bufread::ZlibDecoder::new(inner))
            } else {
                Box::new(flate2::bufread::DeflateDecoder::new(inner))
            });
        }
        self.decoder.as_mut().expect("decoder set above").read(buf)
    }
}

fn wrap(coding: Coding, inner: Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>, Error> {
    Ok(match coding {
        Coding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(inner)),
        Coding::Deflate => Box::new(SniffDeflate {
            inner: Some(BufReader::with_capacity(DECODER_INPUT_BYTES, inner)),
            decoder: None,
        }),
        Coding::Brotli => Box::new(brotli_decompressor::Decompressor::new(
            inner,
            DECODER_INPUT_BYTES,
        )),
        Coding::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(
                DECODER_INPUT_BYTES,
                inner,
            ))
            .map_err(|e| Error::new(ErrorKind::Decoding, format!("zstd setup failed: {e}")))?,
        ),
    })
}

/// A response body being streamed.
pub struct BodyStream {
    reader: Box<dyn Read + Send>,
    decoded: bool,
    exchange: SharedExchange,
}

impl BodyStream {
    /// Streams the body of `exchange`, undoing `codings` (in the order they
    /// were applied; empty for the body as received), bounded by
    /// `max_decoded_bytes`. Codings come from `Exchange::content_codings`,
    /// read before the head is taken out of the exchange.
    pub fn new(
        exchange: Exchange,
        interrupt: Arc<dyn Interrupt + Send + Sync>,
        codings: &[Coding],
        max_decoded_bytes: u64,
    ) -> Result<BodyStream, Error> {
        let received = Arc::new(AtomicU64::new(0));
        let shared = SharedExchange(Arc::new(Mutex::new(Some(exchange))));
        let mut reader: Box<dyn Read + Send> = Box::new(RawBody {
            exchange: shared.clone(),
            interrupt,
            received: received.clone(),
        });
        if codings.is_empty() {
            return Ok(BodyStream {
                reader,
                decoded: false,
                exchange: shared,
            });
        }
        for &coding in codings.iter().rev() {
            reader = wrap(coding, reader)?;
        }
        let reader = Box::new(Bounded {
            inner: reader,
            produced: 0,
            max_bytes: max_decoded_bytes,
            received,
        });
        Ok(BodyStream {
            reader,
            decoded: true,
            exchange: shared,
        })
    }

    /// Whether content decoding is applied.
    pub fn is_decoded(&self) -> bool {
        self.decoded
    }

    /// Reads what has arrived of the body into `dst`: waits only for the
    /// first bytes, then goes on towards `min` bytes only while more is there
    /// without waiting. So a body that keeps coming gives big pieces, and one
    /// that trickles (server-sent events, a streamed answer) is handed out as
    /// it arrives, never held back to fill a piece. Returns how many bytes
    /// were written (0 only at the end of the body).
    pub fn read(&mut self, dst: &mut [u8], min: usize) -> Result<usize, Error> {
        let mut filled = 0;
        while filled < dst.len() {
            let n = match self.reader.read(&mut dst[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(unwrap_io(e)),
            };
            if n == 0 {
                break;
            }
            filled += n;
            if filled >= min || !self.more_arrived() {
                break;
            }
        }
        Ok(filled)
    }

    /// Whether the next read finds body bytes without waiting (or the end).
    fn more_arrived(&self) -> bool {
        self.exchange
            .lock()
            .as_mut()
            .is_none_or(Exchange::body_ready)
    }
}

/// Recovers the engine error carried through `io::Read`, or names a corrupt
/// encoded stream.
pub(crate) fn unwrap_io(e: io::Error) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        if let Some(inner) = e.into_inner() {
            if let Ok(engine) = inner.downcast::<Error>() {
                return *engine;
            }
        }
        return Error::new(ErrorKind::Decoding, "invalid encoded body");
    }
    Error::new(ErrorKind::Decoding, format!("invalid encoded body: {e}")).with_source(e)
}
