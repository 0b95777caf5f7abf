//! `_core.AsyncRawStream`: a response whose body is read on demand with
//! awaitable reads (`async with client.stream(...)`, `aiter_bytes()`).
//!
//! A read moves the body out of its slot into the read's future (see
//! `bridge.rs`) and back when the piece is ready, so no lock is held across an
//! await and `close()` (or a cancelled read) can always end the stream: the
//! dropped future drops the body, which closes its connection (never pooled half-read: docs/hostile.md H29).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use nodelay_core::aio::{AsyncBodyStream, AsyncExchange};
use nodelay_core::decode::Coding;
use nodelay_core::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::aio::bridge::{ready, start_local, Complete};
use crate::errors::error;
use crate::head::{Head, PyHead};
// The piece sizes of `read` are `RawStream`'s.
use crate::stream::{DEFAULT_READ_MAX_BYTES, DEFAULT_READ_MIN_BYTES};

/// Where the body stands. Decoding is chosen by the first read.
enum Body {
    NotStarted(Box<AsyncExchange>),
    Idle(Box<AsyncBodyStream>),
    /// A read task holds the body.
    Reading,
    /// Read to the end, failed or closed: the connection is pooled or closed.
    Finished,
}

type Slot = Arc<Mutex<Body>>;

fn lock(slot: &Slot) -> MutexGuard<'_, Body> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct AsyncRawStream {
    head: Head,
    #[pyo3(get)]
    url: Py<PyString>,
    started: Instant,
    /// Seconds from the start of the request to the end of the head.
    #[pyo3(get)]
    elapsed: f64,
    body: Slot,
    /// The future of the last read, cancelled by `close()` if still pending
    /// (its future is then dropped, and the body it holds with it).
    reading: Mutex<Option<Py<PyAny>>>,
    max_decoded_bytes: u64,
    codings: Vec<Coding>,
    /// Raw body bytes read so far (kept here: the body stream is dropped at
    /// its end).
    downloaded: Arc<AtomicU64>,
}

impl AsyncRawStream {
    pub fn new(
        py: Python<'_>,
        mut exchange: AsyncExchange,
        url: &Bound<'_, PyString>,
        max_decoded_bytes: u64,
    ) -> PyResult<AsyncRawStream> {
        // An unknown coding means the body is delivered as received.
        let codings = exchange
            .content_codings()
            .map_err(|e| error(py, e, url))?
            .unwrap_or_default();
        let head = Head::take_async(&mut exchange);
        let started = exchange.started();
        let body = if exchange.is_complete() {
            exchange.finish();
            Body::Finished
        } else {
            Body::NotStarted(Box::new(exchange))
        };
        Ok(AsyncRawStream {
            head,
            url: url.clone().unbind(),
            started,
            elapsed: started.elapsed().as_secs_f64(),
            body: Arc::new(Mutex::new(body)),
            reading: Mutex::new(None),
            downloaded: Arc::default(),
            max_decoded_bytes,
            codings,
        })
    }

    pub(crate) fn head(&self) -> &Head {
        &self.head
    }

    /// The URL, for Rust-side readers (the cookie jar).
    pub(crate) fn url_str<'a>(&'a self, py: Python<'a>) -> Option<&'a str> {
        self.url.bind(py).to_str().ok()
    }

    /// Takes the body out of its slot for a read task.
    fn take_for_read(&self, decode: bool) -> Take {
        let mut slot = lock(&self.body);
        match std::mem::replace(&mut *slot, Body::Reading) {
            Body::NotStarted(exchange) => {
                let codings: &[Coding] = if decode { &self.codings } else { &[] };
                match AsyncBodyStream::new(*exchange, codings, self.max_decoded_bytes) {
                    Ok(stream) => Take::Stream(Box::new(stream)),
                    Err(e) => {
                        *slot = Body::Finished;
                        Take::Failed(e)
                    }
                }
            }
            Body::Idle(stream) => Take::Stream(stream),
            Body::Reading => Take::Busy,
            Body::Finished => {
                *slot = Body::Finished;
                Take::End
            }
        }
    }

    /// Starts a read task producing the body's next piece (or all of it).
    fn start_read<'py>(
        &self,
        py: Python<'py>,
        max: usize,
        min: usize,
        decode: bool,
        all: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let url = self.url.bind(py);
        let stream = match self.take_for_read(decode) {
            Take::Stream(stream) => stream,
            Take::End => return ready(py, PyBytes::new(py, b"").into_any()),
            Take::Busy => {
                return Err(PyRuntimeError::new_err(
                    "another read of this response is in progress",
                ))
            }
            Take::Failed(e) => return Err(error(py, e, url)),
        };
        let slot = Arc::clone(&self.body);
        let downloaded = Arc::clone(&self.downloaded);
        let future = start_local(py, url, async move {
            let mut stream = stream;
            let piece = if all {
                stream.read_rest(DEFAULT_READ_MAX_BYTES).await
            } else {
                stream.read(max, min).await
            };
            downloaded.store(stream.raw_bytes_read(), Ordering::Relaxed);
            Piece {
                slot,
                stream,
                piece,
            }
        })?;
        *self.reading.lock().unwrap_or_else(|p| p.into_inner()) = Some(future.clone().unbind());
        Ok(future)
    }
}

enum Take {
    Stream(Box<AsyncBodyStream>),
    End,
    Busy,
    Failed(Error),
}

/// A finished read: puts the body back (unless it ended, failed, or the
/// stream was closed meanwhile) and hands the piece to Python.
struct Piece {
    slot: Slot,
    stream: Box<AsyncBodyStream>,
    piece: Result<Vec<u8>, Error>,
}

impl Complete for Piece {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let Piece {
            slot,
            stream,
            piece,
        } = *self;
        {
            let mut body = lock(&slot);
            if matches!(*body, Body::Reading) {
                *body = after_read(stream, &piece);
            }
        }
        let piece = piece.map_err(|e| error(py, e, url))?;
        Ok(PyBytes::new(py, &piece).into_any().unbind())
    }

    fn body_len(&self) -> usize {
        self.piece.as_ref().map_or(0, Vec::len)
    }
}

/// Where the body stands after a read: idle for the next read, or finished
/// when the read failed, found the end, or handed out the last piece (then
/// the connection went back with it, and `is_closed` tells the caller no read
/// is left, as `RawStream` does).
fn after_read(stream: Box<AsyncBodyStream>, piece: &Result<Vec<u8>, Error>) -> Body {
    match piece {
        Ok(p) if !p.is_empty() && !stream.is_ended() => Body::Idle(stream),
        _ => Body::Finished,
    }
}

#[pymethods]
impl AsyncRawStream {
    #[getter]
    fn status(&self) -> u16 {
        self.head.status()
    }

    #[getter]
    fn version(&self) -> &'static str {
        self.head.version()
    }

    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        self.head.reason_str(py)
    }

    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.head.headers(py)
    }

    fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>> {
        self.head.header(py, name)
    }

    fn raw_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.head.raw_headers(py)
    }

    fn latin1_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.head.latin1_headers(py)
    }

    /// Seconds since the request started (for `Response.elapsed` at close).
    fn elapsed_now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Awaitable: the next piece of the body, between `min_bytes` and
    /// `max_bytes` bytes (fewer only at the end); `b""` once complete.
    /// `decode=False` (on the first read) keeps content codings in place.
    #[pyo3(signature = (max_bytes=DEFAULT_READ_MAX_BYTES, min_bytes=DEFAULT_READ_MIN_BYTES, decode=true))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        max_bytes: usize,
        min_bytes: usize,
        decode: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.start_read(py, max_bytes.max(1), min_bytes, decode, false)
    }

    /// Awaitable: the rest of the body, decoded.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.start_read(
            py,
            DEFAULT_READ_MAX_BYTES,
            DEFAULT_READ_MAX_BYTES,
            true,
            true,
        )
    }

    /// Bytes of the body read from the connection so far, as received
    /// (before content decoding).
    #[getter]
    fn raw_bytes_read(&self) -> u64 {
        self.downloaded.load(Ordering::Relaxed)
    }

    /// True once the body was read to the end (or the stream closed).
    #[getter]
    fn is_closed(&self) -> bool {
        matches!(*lock(&self.body), Body::Finished)
    }

    /// Ends the stream. A body not read to the end closes its connection;
    /// a read in flight is cancelled (its awaiter gets CancelledError).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        *lock(&self.body) = Body::Finished;
        let reading = self
            .reading
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(future) = reading {
            let future = future.bind(py);
            if !future.call_method0("done")?.is_truthy()? {
                future.call_method0("cancel")?;
            }
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("<AsyncRawStream [{}]>", self.head.status())
    }
}
