//! `_core.Upload`: a request body streamed from Python objects (an iterator of
//! bytes, a binary file, a multipart form with files). The engine pulls it
//! piece by piece with the GIL released; each pull takes the GIL briefly to
//! call into Python (`next(iterator)`, `file.readinto(buffer)`).

use std::sync::atomic::{AtomicBool, Ordering};

use nodelay_core::{BodySource, Error, StreamFraming};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyIterator, PyList, PyTuple};

/// One piece of an upload, in order.
enum Part {
    /// Bytes in memory (a multipart boundary and headers, a small field).
    Bytes(Py<PyBytes>),
    /// `size` bytes read from a binary file, starting where it stood when the
    /// upload was made (`start`, `None` when it cannot seek back).
    File {
        file: Py<PyAny>,
        size: u64,
        start: Option<u64>,
    },
    /// An iterable of bytes; `one_shot` when it is its own iterator (a
    /// generator), which can be sent only once.
    Iterable { iterable: Py<PyAny>, one_shot: bool },
}

impl Part {
    fn can_rewind(&self) -> bool {
        match self {
            Part::Bytes(_) => true,
            Part::File { start, .. } => start.is_some(),
            Part::Iterable { one_shot, .. } => !one_shot,
        }
    }
}

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct Upload {
    parts: Vec<Part>,
    /// Total size when every part's size is known (`Content-Length`), else chunked.
    length: Option<u64>,
    /// Whether a request pulled from it (a request that failed before its
    /// first piece, e.g. on connect, leaves it untouched).
    sent: AtomicBool,
    /// Set while a request sends it, so two requests never pull one iterator.
    busy: AtomicBool,
}

#[pymethods]
impl Upload {
    /// `parts`: `bytes`, `(binary_file, size)` tuples and iterables of bytes;
    /// the length is the sum of the sizes when there is no iterable.
    #[new]
    fn new(parts: &Bound<'_, PyList>) -> PyResult<Self> {
        let mut out = Vec::with_capacity(parts.len());
        let mut length = Some(0u64);
        for item in parts.iter() {
            if let Ok(bytes) = item.cast::<PyBytes>() {
                length = length.map(|n| n + bytes.as_bytes().len() as u64);
                out.push(Part::Bytes(bytes.clone().unbind()));
            } else if let Some((file, size)) = file_and_size(&item)? {
                let start = seek_position(&file);
                length = length.map(|n| n + size);
                out.push(Part::File {
                    file: file.unbind(),
                    size,
                    start,
                });
            } else {
                let iterator = item.try_iter().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "an upload part must be bytes, (file, size) or an iterable of bytes, got {}",
                        item.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
                    ))
                })?;
                length = None;
                out.push(Part::Iterable {
                    one_shot: iterator.is(&item),
                    iterable: item.unbind(),
                });
            }
        }
        Ok(Upload {
            parts: out,
            length,
            sent: AtomicBool::new(false),
            busy: AtomicBool::new(false),
        })
    }

    /// The body's size, or `None` when it is sent with chunked coding.
    #[getter]
    fn length(&self) -> Option<u64> {
        self.length
    }

    /// Whether the body can be sent (again): it was never sent, or every
    /// part can start over (bytes, seekable files, re-iterable collections).
    #[getter]
    fn replayable(&self) -> bool {
        !self.sent.load(Ordering::Acquire) || self.parts.iter().all(Part::can_rewind)
    }

    /// The whole body as one `bytes`, for transports that take a request in
    /// memory (`Request.read()`). Counts as a pass: a body read before starts
    /// over, or raises `StreamConsumed` when it cannot.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut source = self.begin(py)?;
        let mut buf = Vec::with_capacity(READ_ALL_FILE_PIECE_BYTES);
        let first = self.length.map_or(0, |n| {
            usize::try_from(n).map_or(READ_ALL_FIRST_MAX_BYTES, |n| {
                n.min(READ_ALL_FIRST_MAX_BYTES)
            })
        });
        let mut out = Vec::with_capacity(first);
        while let Some(piece) = source.cursor.pull(py, &mut buf)? {
            out.extend_from_slice(piece);
        }
        Ok(PyBytes::new(py, &out))
    }
}

/// Size of each file read by `Upload::read_all` (a file part is read into a
/// buffer of this capacity, as the engine's upload loop reads it).
const READ_ALL_FILE_PIECE_BYTES: usize = 64 * 1024;

/// Most `Upload::read_all` reserves up front from the declared length: a
/// wrong size from a file-like object costs no more than this.
const READ_ALL_FIRST_MAX_BYTES: usize = 16 * 1024 * 1024;

/// `(file, size)` when `item` is a 2-tuple of an object with `read` and an
/// int; any other tuple is an iterable of bytes like a list.
fn file_and_size<'py>(item: &Bound<'py, PyAny>) -> PyResult<Option<(Bound<'py, PyAny>, u64)>> {
    let Ok(pair) = item.cast::<PyTuple>() else {
        return Ok(None);
    };
    if pair.len() != 2 || !pair.get_item(0)?.hasattr("read")? {
        return Ok(None);
    }
    Ok(Some(pair.extract()?))
}

/// Where `file` stands, when it can seek back there.
fn seek_position(file: &Bound<'_, PyAny>) -> Option<u64> {
    let seekable = file
        .call_method0("seekable")
        .and_then(|s| s.is_truthy())
        .unwrap_or(false);
    if !seekable {
        return None;
    }
    file.call_method0("tell").and_then(|t| t.extract()).ok()
}

impl Upload {
    pub(crate) fn framing(&self) -> StreamFraming {
        self.length
            .map_or(StreamFraming::Chunked, StreamFraming::Length)
    }

    /// A source for one request: a body that was sent before starts over, or
    /// raises `StreamConsumed` when it cannot (httpx's behaviour).
    pub(crate) fn begin<'u>(&'u self, py: Python<'_>) -> PyResult<UploadSource<'u>> {
        if self
            .busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(PyRuntimeError::new_err(
                "this request body is being sent by another request",
            ));
        }
        let busy = Busy(&self.busy);
        let cursor = Cursor {
            upload: self,
            index: 0,
            entered: false,
            file_left: 0,
            iterator: None,
            current: None,
        };
        if self.sent.load(Ordering::Acquire) {
            if !self.parts.iter().all(Part::can_rewind) {
                return Err(stream_consumed(py));
            }
            cursor.seek_files(py)?;
        }
        Ok(UploadSource {
            cursor,
            error: None,
            _busy: busy,
        })
    }
}

fn stream_consumed(py: Python<'_>) -> PyErr {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let message = "the request body was already sent and cannot be sent again: it is an \
                   iterator or an unseekable file (a replay needs bytes, a seekable file or a \
                   re-iterable collection)";
    CLASS
        .get_or_try_init(py, || {
            py.import("nodelay._exceptions")?
                .getattr("StreamConsumed")
                .map(Bound::unbind)
        })
        .and_then(|class| class.bind(py).call1((message,)))
        .map_or_else(|e| e, PyErr::from_value)
}

/// One request's pass over an [`Upload`]. Holds the upload's lock so two
/// requests never pull the same iterator.
pub(crate) struct UploadSource<'u> {
    cursor: Cursor<'u>,
    /// The Python exception that stopped the upload, re-raised as is.
    error: Option<PyErr>,
    _busy: Busy<'u>,
}

/// Clears an upload's busy flag when its request is done with it.
struct Busy<'u>(&'u AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Where a pass over an upload stands.
struct Cursor<'u> {
    upload: &'u Upload,
    /// The part being sent.
    index: usize,
    /// Whether the current part was started (its size or iterator taken).
    entered: bool,
    /// Bytes still to read from the current file part.
    file_left: u64,
    iterator: Option<Py<PyIterator>>,
    /// The last piece an iterator or `read()` gave (kept alive while the
    /// engine writes it).
    current: Option<Py<PyBytes>>,
}

impl UploadSource<'_> {
    /// The Python exception raised by the iterator or file, if one stopped
    /// the request (it replaces the engine's error).
    pub(crate) fn take_error(&mut self) -> Option<PyErr> {
        self.error.take()
    }
}

/// Stashes `error` to be re-raised and returns the engine's error for it.
fn stash(slot: &mut Option<PyErr>, error: PyErr) -> Error {
    let message = format!("the request body's source raised {error}");
    *slot = Some(error);
    Error::body_source(message)
}

impl Cursor<'_> {
    fn seek_files(&self, py: Python<'_>) -> PyResult<()> {
        for part in &self.upload.parts {
            if let Part::File {
                file,
                start: Some(start),
                ..
            } = part
            {
                file.bind(py).call_method1("seek", (*start,))?;
            }
        }
        Ok(())
    }

    fn advance(&mut self) {
        self.index += 1;
        self.entered = false;
        self.iterator = None;
    }

    /// The next non-exhausted piece, with the GIL held.
    fn pull<'a>(&'a mut self, py: Python<'_>, buf: &'a mut Vec<u8>) -> PyResult<Option<&'a [u8]>> {
        self.upload.sent.store(true, Ordering::Release);
        loop {
            let Some(part) = self.upload.parts.get(self.index) else {
                return Ok(None);
            };
            match part {
                Part::Bytes(bytes) => {
                    self.advance();
                    // SAFETY: the bytes object is owned by the upload, which
                    // outlives this source; bytes are immutable and CPython
                    // never moves an object's storage.
                    return Ok(Some(unsafe { extend(bytes.bind(py).as_bytes()) }));
                }
                Part::File { file, size, .. } => {
                    if !self.entered {
                        self.entered = true;
                        self.file_left = *size;
                    }
                    if self.file_left == 0 {
                        self.advance();
                        continue;
                    }
                    let want = usize::try_from(self.file_left)
                        .unwrap_or(usize::MAX)
                        .min(buf.capacity().max(1));
                    let n = read_file(file.bind(py), buf, want, &mut self.current)?;
                    if n == 0 {
                        return Err(PyValueError::new_err(format!(
                            "the file ended {} bytes before its size when the upload started ({size} bytes): it changed during the upload",
                            self.file_left
                        )));
                    }
                    self.file_left -= n as u64;
                    return Ok(Some(match &self.current {
                        // SAFETY: as above; `current` is replaced only by the
                        // next pull, after this borrow of `self` ended.
                        Some(piece) => unsafe { extend(piece.bind(py).as_bytes()) },
                        None => &buf[..n],
                    }));
                }
                Part::Iterable { iterable, .. } => {
                    if !self.entered {
                        self.entered = true;
                        self.iterator = Some(iterable.bind(py).try_iter()?.unbind());
                    }
                    let mut iterator = match &self.iterator {
                        Some(it) => it.bind(py).clone(),
                        None => return Ok(None),
                    };
                    match iterator.next() {
                        None => {
                            self.advance();
                            continue;
                        }
                        Some(item) => {
                            let item = item?;
                            let piece = item.cast_into::<PyBytes>().map_err(|e| {
                                PyTypeError::new_err(format!(
                                    "a request body iterator must yield bytes, got {}",
                                    e.into_inner()
                                        .get_type()
                                        .name()
                                        .map_or_else(|_| "?".into(), |n| n.to_string())
                                ))
                            })?;
                            let piece = self.current.insert(piece.unbind());
                            // SAFETY: as above.
                            return Ok(Some(unsafe { extend(piece.bind(py).as_bytes()) }));
                        }
                    }
                }
            }
        }
    }
}

/// Reads up to `want` bytes of `file`: `readinto` straight into `buf` (no
/// copy), or `read` for file-likes without it (the piece is kept in `current`).
/// Returns the number of bytes read.
fn read_file(
    file: &Bound<'_, PyAny>,
    buf: &mut Vec<u8>,
    want: usize,
    current: &mut Option<Py<PyBytes>>,
) -> PyResult<usize> {
    let py = file.py();
    *current = None;
    if !file.hasattr("readinto")? {
        let piece = file.call_method1("read", (want,))?;
        let piece = piece.cast_into::<PyBytes>().map_err(|_| {
            PyTypeError::new_err("files must be opened in binary mode (read() returned no bytes)")
        })?;
        let n = piece.as_bytes().len();
        if n > want {
            return Err(PyValueError::new_err(
                "file.read(n) returned more than n bytes",
            ));
        }
        *current = Some(piece.unbind());
        return Ok(n);
    }
    if buf.len() < want {
        // Once per request: the buffer is zeroed so Python never sees
        // uninitialised memory.
        buf.resize(buf.capacity().max(want), 0);
    }
    let target = &mut buf[..want];
    // SAFETY: `target` is valid writable memory of `want` bytes for the whole
    // call; the memoryview is released right after, so Python code that kept
    // it cannot write to the buffer later.
    let view = unsafe {
        let ptr = ffi::PyMemoryView_FromMemory(
            target.as_mut_ptr().cast(),
            want as ffi::Py_ssize_t,
            ffi::PyBUF_WRITE,
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    let result = file.call_method1("readinto", (&view,));
    view.call_method0("release")?;
    let n: Option<usize> = result?.extract()?;
    let Some(n) = n else {
        return Err(PyValueError::new_err(
            "the file is in non-blocking mode and had no data (readinto returned None)",
        ));
    };
    if n > want {
        return Err(PyValueError::new_err(
            "file.readinto(b) returned more than len(b)",
        ));
    }
    Ok(n)
}

/// Extends a borrow of a Python bytes object's buffer to the caller's scope.
///
/// # Safety
/// The caller keeps the owning object alive for `'a`.
unsafe fn extend<'a>(bytes: &[u8]) -> &'a [u8] {
    // SAFETY: guaranteed by the caller.
    unsafe { &*(bytes as *const [u8]) }
}

impl BodySource for UploadSource<'_> {
    fn next_chunk<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        let (cursor, error) = (&mut self.cursor, &mut self.error);
        Python::attach(|py| cursor.pull(py, buf).map_err(|e| stash(error, e)))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        if !self.cursor.upload.parts.iter().all(Part::can_rewind) {
            return Ok(false);
        }
        let (cursor, error) = (&mut self.cursor, &mut self.error);
        Python::attach(|py| match cursor.seek_files(py) {
            Ok(()) => {
                cursor.index = 0;
                cursor.entered = false;
                cursor.iterator = None;
                cursor.current = None;
                Ok(true)
            }
            Err(e) => Err(stash(error, e)),
        })
    }
}
