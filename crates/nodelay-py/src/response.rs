//! `_core.RawResponse`: a response read whole (by the sync, async and batch
//! paths alike). Headers stay raw bytes plus spans until Python asks for
//! them. Also the hot path's final `nodelay.Response`, made by one call of
//! the Python constructor `nodelay._models` registers.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use crate::head::{Head, PyHead};

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct RawResponse {
    head: Head,
    #[pyo3(get)]
    url: Py<PyString>,
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    elapsed: f64,
}

impl RawResponse {
    /// A response whose body is already a `bytes` object (read in place).
    pub fn new(
        head: Head,
        url: &Bound<'_, PyString>,
        content: Bound<'_, PyBytes>,
        elapsed: f64,
    ) -> Self {
        RawResponse {
            head,
            url: url.clone().unbind(),
            content: content.unbind(),
            elapsed,
        }
    }

    /// A response whose body was read off the caller's thread (async, batch)
    /// into a buffer: copied into its `bytes` object here.
    pub fn from_buffer(head: Head, url: &Bound<'_, PyString>, body: &[u8], elapsed: f64) -> Self {
        let content = PyBytes::new(url.py(), body);
        RawResponse::new(head, url, content, elapsed)
    }

    /// The head, for Rust-side readers (the cookie jar).
    pub(crate) fn head(&self) -> &Head {
        &self.head
    }

    /// The final URL, for Rust-side readers (the cookie jar).
    pub(crate) fn url_str<'a>(&'a self, py: Python<'a>) -> Option<&'a str> {
        self.url.bind(py).to_str().ok()
    }
}

/// A response read whole off the caller's thread (async and batch paths),
/// its body in a buffer: becomes a `RawResponse` once the GIL is taken.
pub(crate) struct Whole {
    pub head: Head,
    pub body: Vec<u8>,
    /// Seconds from the start of the request to the last body byte.
    pub elapsed: f64,
}

impl Whole {
    /// The `RawResponse` of a request to `url`.
    pub fn into_raw(self, url: &Bound<'_, PyString>) -> RawResponse {
        RawResponse::from_buffer(self.head, url, &self.body, self.elapsed)
    }
}

#[pymethods]
impl RawResponse {
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

    /// Header fields in received order, names as received.
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.head.headers(py)
    }

    /// First value of the named header (ASCII case-insensitive), or None.
    fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>> {
        self.head.header(py, name)
    }

    fn __repr__(&self) -> String {
        format!("<RawResponse [{}]>", self.head.status())
    }
}

/// How `nodelay._models` makes its `Response` and `Request` objects from
/// what the engine has: learnt once when `_models` is imported
/// (`_core.use_models`). The engine depends on nothing but the response
/// class's constructor (`object.__new__`'s) and these two callables'
/// signatures (no class layout, no slot names).
struct Models {
    /// The class of a whole response, and its instance allocator (what
    /// `object.__new__(Response)` calls, without the call's argument tuple
    /// and checks: ~800 instructions of the ~2,300 a response cost, callgrind).
    response_type: Py<PyType>,
    alloc: ffi::allocfunc,
    /// `(Response, RawResponse, (method, url, headers, body), status, content) -> Response`:
    /// fills a new response's fields (`_models._fill_response`).
    fill: Py<PyAny>,
    /// `(method, url, headers, body) -> Request`.
    request: Py<PyAny>,
}

static MODELS: PyOnceLock<Models> = PyOnceLock::new();

/// Tells the engine how `nodelay._models` builds a `Response` from a
/// `RawResponse` and a request reference (`response_type`, whose instances
/// `object.__new__` makes, filled by `fill`), and a `Request` from a request
/// reference (called once by `nodelay._models`; later calls are ignored).
#[pyfunction]
pub(crate) fn use_models(
    response_type: &Bound<'_, PyType>,
    fill: &Bound<'_, PyAny>,
    request: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = response_type.py();
    // `object.__new__(cls)` is valid only for a class that keeps object's
    // constructor (no C base with a `__new__` of its own): then an instance
    // is what its `tp_alloc` returns.
    let object_new = py.get_type::<PyAny>().getattr(intern!(py, "__new__"))?;
    if !response_type
        .getattr(intern!(py, "__new__"))?
        .is(&object_new)
    {
        return Err(PyTypeError::new_err(
            "use_models: the response class must keep object.__new__",
        ));
    }
    // SAFETY: `response_type` is a valid type object; `tp_alloc` is a slot
    // every type has (inherited from object when not its own).
    let slot = unsafe { ffi::PyType_GetSlot(response_type.as_ptr().cast(), ffi::Py_tp_alloc) };
    if slot.is_null() {
        return Err(PyTypeError::new_err("use_models: no tp_alloc"));
    }
    // SAFETY: the `Py_tp_alloc` slot holds an `allocfunc`.
    let alloc = unsafe { std::mem::transmute::<*mut std::ffi::c_void, ffi::allocfunc>(slot) };
    MODELS.get_or_init(py, || Models {
        response_type: response_type.clone().unbind(),
        alloc,
        fill: fill.clone().unbind(),
        request: request.clone().unbind(),
    });
    Ok(())
}

fn models(py: Python<'_>) -> PyResult<&Models> {
    MODELS
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("nodelay._models is not imported"))
}

/// The Python `Response` for a whole response and its request (the
/// reference `(method, url, headers, body)`, a `Request`, or None): a new
/// instance of the registered class, filled by one call of the registered
/// `fill` (`_models._fill_response`).
pub(crate) fn build_response<'py>(
    raw: Bound<'py, RawResponse>,
    request: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = raw.py();
    let models = models(py)?;
    let status = raw.get().head.status();
    let content = raw.get().content.clone_ref(py);
    // SAFETY: `alloc` is the registered class's own `tp_alloc`, called as
    // `object.__new__` calls it (the class keeps object's constructor,
    // checked by `use_models`); it returns a new reference or NULL with an
    // exception set.
    let ptr = unsafe { (models.alloc)(models.response_type.as_ptr().cast(), 0) };
    // SAFETY: `ptr` is a new reference (or NULL: the error is fetched).
    let response = unsafe { Bound::from_owned_ptr_or_err(py, ptr)? };
    models
        .fill
        .bind(py)
        .call1((response, raw, request, status, content))
}

/// `_core.whole_response(raw, request)`: [`build_response`] for Python
/// callers holding a `RawResponse` (`_models._response_from_raw`).
#[pyfunction]
pub(crate) fn whole_response<'py>(
    raw: Bound<'py, RawResponse>,
    request: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    build_response(raw, request)
}

/// `Request._make(method, url, headers, body)`: the request an engine error
/// is about (the hot path's error only; responses build it on demand).
pub(crate) fn make_request<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    models(py)?.request.bind(py).call1(request.clone())
}
