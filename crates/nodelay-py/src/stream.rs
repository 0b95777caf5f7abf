//! `_core.RawStream`: a response whose body is read on demand
//! (`client.stream(...)`, `iter_bytes()`, requests' `stream=True`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nodelay_core::decode::Coding;
use nodelay_core::{BodyStream, Error, Exchange, Interrupt};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::body::{resize_bytes, size_of, tail_mut, uninit_bytes};
use crate::errors::to_py_err;
use crate::head::{Head, PyHead};
use crate::signals::SignalCheck;

/// Default largest piece `read` returns: big enough that a fast download is a
/// few hundred Python iterations per 10 MiB.
pub(crate) const DEFAULT_READ_MAX_BYTES: usize = 256 * 1024;

/// Default size a piece grows to while more of the body is already there:
/// a download that keeps coming is read in pieces of 64 KiB and more
/// (BENCHMARKS d); a body that trickles is handed out as it arrives.
pub(crate) const DEFAULT_READ_MIN_BYTES: usize = 64 * 1024;

// Content-Length bodies up to this size are read by `read_all` straight
// into one `bytes` object of the exact size (the whole-body rule of every
// front, see `nodelay_front::body`).
use nodelay_front::body::EXACT_BODY_MAX_BYTES;

/// What `read_all` allocates first when the size is not known in advance
/// (chunked, decoded, or announced too large to trust): the `bytes` object
/// starts uninitialised at this size and doubles while the body keeps
/// coming, then is cut to the size received.
const READ_ALL_FIRST_BYTES: usize = DEFAULT_READ_MAX_BYTES;

/// Where the body stands. Decoding is chosen by the first read, so the same
/// response can be read decoded (`iter_bytes`) or raw (`iter_raw`).
enum Body {
    NotStarted(Box<Exchange>),
    Streaming {
        stream: BodyStream,
        /// Bytes still to come when known (a Content-Length body delivered as
        /// received): a piece's `bytes` object is then never larger than that.
        remaining: Option<u64>,
    },
    /// Read to the end, failed or closed: the connection is pooled or closed.
    Finished,
}

/// What a started body has left to read.
enum Left {
    /// This many bytes (a Content-Length body delivered as received).
    Known(u64),
    /// Not known (chunked, close-delimited or decoded).
    Unknown,
    /// Nothing: read to the end, failed or closed.
    Ended,
}

impl Left {
    fn of(body: &Body) -> Left {
        match body {
            Body::Streaming {
                remaining: Some(left),
                ..
            } => Left::Known(*left),
            Body::Streaming { .. } => Left::Unknown,
            _ => Left::Ended,
        }
    }
}

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct RawStream {
    head: Head,
    #[pyo3(get)]
    url: Py<PyString>,
    started: Instant,
    /// Seconds from the start of the request to the end of the head.
    #[pyo3(get)]
    elapsed: f64,
    body: Mutex<Body>,
    signals: Arc<SignalCheck>,
    max_decoded_bytes: u64,
    /// Content codings to undo when the body is read decoded.
    codings: Vec<Coding>,
    /// Raw body bytes read so far (kept here: the body stream is dropped at
    /// its end).
    downloaded: AtomicU64,
}

impl RawStream {
    /// Fails (DecodingError) when the head announces more content codings
    /// than allowed.
    pub fn new(
        py: Python<'_>,
        mut exchange: Exchange,
        url: &Bound<'_, PyString>,
        signals: Arc<SignalCheck>,
        max_decoded_bytes: u64,
    ) -> PyResult<RawStream> {
        // An unknown coding means the body is delivered as received.
        let codings = exchange
            .content_codings()
            .map_err(|e| to_py_err(py, e, url, &signals))?
            .unwrap_or_default();
        let head = Head::take(&mut exchange);
        let started = exchange.started();
        Ok(RawStream {
            head,
            url: url.clone().unbind(),
            started,
            elapsed: started.elapsed().as_secs_f64(),
            body: Mutex::new(Body::NotStarted(Box::new(exchange))),
            signals,
            max_decoded_bytes,
            codings,
            downloaded: AtomicU64::new(0),
        })
    }

    pub(crate) fn head(&self) -> &Head {
        &self.head
    }

    /// The URL, for Rust-side readers (the cookie jar).
    pub(crate) fn url_str<'a>(&'a self, py: Python<'a>) -> Option<&'a str> {
        self.url.bind(py).to_str().ok()
    }

    fn fail(&self, py: Python<'_>, e: Error) -> PyErr {
        to_py_err(py, e, self.url.bind(py), &self.signals)
    }

    /// Reads the next piece into `out` with the GIL released; returns its
    /// length, 0 at the end of the body. At the end, or on error, the body is
    /// dropped (its connection pooled or closed).
    fn next_piece(
        &self,
        py: Python<'_>,
        out: &mut [u8],
        min: usize,
        decode: bool,
    ) -> Result<usize, Error> {
        py.detach(|| {
            let mut slot = self.lock_body();
            self.start(&mut slot, decode)?;
            let Body::Streaming { stream, remaining } = &mut *slot else {
                return Ok(0);
            };
            let piece = stream.read(out, min.min(out.len()));
            self.downloaded
                .store(stream.raw_bytes_read(), Ordering::Relaxed);
            match piece {
                Ok(0) => {
                    *slot = Body::Finished;
                    Ok(0)
                }
                Ok(n) => {
                    if stream.is_ended() {
                        // The last piece: the connection went back with it,
                        // and `is_closed` tells the caller no read is left.
                        *slot = Body::Finished;
                    } else if let Some(left) = remaining {
                        *left = left.saturating_sub(n as u64);
                    }
                    Ok(n)
                }
                Err(e) => {
                    *slot = Body::Finished;
                    Err(e)
                }
            }
        })
    }

    fn lock_body(&self) -> std::sync::MutexGuard<'_, Body> {
        self.body.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Turns a body not read yet into a stream (decoded or as received).
    fn start(&self, slot: &mut Body, decode: bool) -> Result<(), Error> {
        if !matches!(*slot, Body::NotStarted(_)) {
            return Ok(());
        }
        let Body::NotStarted(exchange) = std::mem::replace(slot, Body::Finished) else {
            unreachable!("checked above")
        };
        let interrupt: Arc<dyn Interrupt + Send + Sync> = self.signals.clone();
        let codings: &[Coding] = if decode { &self.codings } else { &[] };
        let length = exchange.content_length();
        let stream = BodyStream::new(*exchange, interrupt, codings, self.max_decoded_bytes)?;
        let remaining = if stream.is_decoded() { None } else { length };
        *slot = Body::Streaming { stream, remaining };
        Ok(())
    }

    /// Starts the body (decoded or as received) if not yet, and tells what
    /// it has left. Never waits on the network with the GIL held: starting a
    /// decoded body can read from the connection (the gzip decoder reads the
    /// gzip header as it is made), and the body's lock is held by a read in
    /// another thread for as long as that read waits; both happen with the
    /// GIL released. Only a body already started whose lock is free is
    /// answered without releasing it (the usual case: each piece of a loop).
    fn started(&self, py: Python<'_>, decode: bool) -> Result<Left, Error> {
        if let Ok(slot) = self.body.try_lock() {
            if !matches!(*slot, Body::NotStarted(_)) {
                return Ok(Left::of(&slot));
            }
        }
        py.detach(|| {
            let mut slot = self.lock_body();
            self.start(&mut slot, decode)?;
            Ok(Left::of(&slot))
        })
    }

    /// Runs `f` on the body's slot: at once when its lock is free, else with
    /// the GIL released while the lock is awaited (a read in another thread
    /// holds it while it waits on the network).
    fn with_body<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Body) -> T + Send) -> T {
        match self.body.try_lock() {
            Ok(mut slot) => f(&mut slot),
            Err(std::sync::TryLockError::Poisoned(p)) => f(&mut p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => py.detach(|| f(&mut self.lock_body())),
        }
    }
}

#[pymethods]
impl RawStream {
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

    /// The next piece of the body: what has arrived, up to `max_bytes`; it
    /// waits only for the first bytes, and grows towards `min_bytes` only
    /// with bytes already there; `b""` once the body is complete.
    /// `decode=False` (on the first read) delivers the body as received,
    /// content codings left in place.
    #[pyo3(signature = (max_bytes=DEFAULT_READ_MAX_BYTES, min_bytes=DEFAULT_READ_MIN_BYTES, decode=true))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        max_bytes: usize,
        min_bytes: usize,
        decode: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        // The piece is read straight into the bytes object handed to Python,
        // as the whole-body path does: no intermediate buffer, no copy. Its
        // size is no more than the bytes left when known (at least 1, so the
        // read that finds the end of the body can give the connection back).
        let capacity = match self.started(py, decode).map_err(|e| self.fail(py, e))? {
            Left::Known(left) => usize::try_from(left)
                .unwrap_or(usize::MAX)
                .clamp(1, max_bytes.max(1)),
            Left::Unknown => max_bytes.max(1),
            // Read to the end (or closed): nothing to wait for.
            Left::Ended => return Ok(PyBytes::new(py, b"")),
        };
        let (bytes, view) = uninit_bytes(py, capacity)?;
        let n = self
            .next_piece(py, view, min_bytes, decode)
            .map_err(|e| self.fail(py, e))?;
        resize_bytes(bytes, n)
    }

    /// The rest of the body, decoded: read straight into the `bytes`
    /// object returned, of the exact size when the Content-Length is known
    /// (no zero-filled buffer, no copy).
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let fail = |e| self.fail(py, e);
        let (capacity, mut exact) = match self.started(py, true).map_err(fail)? {
            Left::Known(left) if left <= EXACT_BODY_MAX_BYTES => (left as usize, true),
            Left::Ended => return Ok(PyBytes::new(py, b"")),
            _ => (READ_ALL_FIRST_BYTES, false),
        };
        let (mut bytes, _) = uninit_bytes(py, capacity)?;
        let mut filled = 0;
        loop {
            if filled == size_of(&bytes) {
                if exact {
                    // All the announced bytes are in: one more read finds the
                    // end of the body, which gives the connection back.
                    let mut probe = [0u8; 1];
                    let n = self.next_piece(py, &mut probe, 1, true).map_err(fail)?;
                    if n == 0 {
                        return Ok(bytes);
                    }
                    // More than announced (a framing the engine lets through):
                    // go on growing as for an unknown length.
                    exact = false;
                    bytes = resize_bytes(bytes, filled + READ_ALL_FIRST_BYTES)?;
                    // SAFETY: `bytes` was made above and not shared yet.
                    let tail = unsafe { tail_mut(&mut bytes, filled) };
                    tail[0] = probe[0];
                    filled += 1;
                } else {
                    let grown = filled.saturating_mul(2).max(READ_ALL_FIRST_BYTES);
                    bytes = resize_bytes(bytes, grown)?;
                }
            }
            // SAFETY: `bytes` was made above and is not shared until returned;
            // the view is dropped before the next resize.
            let view = unsafe { tail_mut(&mut bytes, filled) };
            let room = view.len();
            let n = self.next_piece(py, view, room, true).map_err(fail)?;
            if n == 0 {
                return resize_bytes(bytes, filled);
            }
            filled += n;
        }
    }

    /// Reads the next piece of the body, decoded, into `buffer` (any
    /// writable C-contiguous buffer: a bytearray, a memoryview, a numpy
    /// array): what has arrived, up to its size, growing towards
    /// `min_bytes` only with bytes already there. Returns how many bytes were
    /// written, 0 once the body is complete. The engine writes straight into
    /// the caller's memory: no object is made per piece.
    #[pyo3(signature = (buffer, min_bytes=DEFAULT_READ_MIN_BYTES))]
    fn readinto(
        &self,
        py: Python<'_>,
        buffer: &Bound<'_, PyAny>,
        min_bytes: usize,
    ) -> PyResult<usize> {
        let view = PyBuffer::<u8>::get(buffer)?;
        if view.readonly() {
            return Err(PyTypeError::new_err("readinto() needs a writable buffer"));
        }
        if !view.is_c_contiguous() {
            return Err(PyTypeError::new_err(
                "readinto() needs a C-contiguous buffer",
            ));
        }
        let len = view.len_bytes();
        if len == 0 {
            // A read of 0 bytes would look like the end of the body.
            return Err(PyValueError::new_err("readinto() needs a non-empty buffer"));
        }
        // SAFETY: `view` holds a buffer export until it is dropped after the
        // read, so the memory stays allocated and cannot be resized (a
        // bytearray or mmap with an export refuses both); it is writable
        // (checked above), C-contiguous and `len` bytes long. Python code in
        // another thread may touch it while the GIL is released, as with
        // `socket.recv_into`: that is the caller's race, on plain bytes.
        let out = unsafe { std::slice::from_raw_parts_mut(view.buf_ptr().cast::<u8>(), len) };
        let n = self
            .next_piece(py, out, min_bytes, true)
            .map_err(|e| self.fail(py, e));
        view.release(py);
        n
    }

    /// Bytes of the body read from the connection so far, as received
    /// (before content decoding).
    #[getter]
    fn raw_bytes_read(&self) -> u64 {
        self.downloaded.load(Ordering::Relaxed)
    }

    /// True once the body was read to the end (or the stream closed).
    #[getter]
    fn is_closed(&self, py: Python<'_>) -> bool {
        self.with_body(py, |body| matches!(body, Body::Finished))
    }

    /// Ends the stream. A body not read to the end closes its connection
    /// (it is never pooled half-read: docs/hostile.md H29).
    fn close(&self, py: Python<'_>) {
        let body = self.with_body(py, |body| std::mem::replace(body, Body::Finished));
        drop(body);
    }

    fn __repr__(&self) -> String {
        format!("<RawStream [{}]>", self.head.status())
    }
}
