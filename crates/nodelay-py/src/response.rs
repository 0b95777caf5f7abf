//! `_core.RawResponse`: a response read whole. Headers stay raw bytes plus
//! spans until Python asks for them.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};

use crate::head::Head;

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

    /// The head, for Rust-side readers (the cookie jar).
    pub(crate) fn head(&self) -> &Head {
        &self.head
    }

    /// The final URL, for Rust-side readers (the cookie jar).
    pub(crate) fn url_str<'a>(&'a self, py: Python<'a>) -> Option<&'a str> {
        self.url.bind(py).to_str().ok()
    }
}

#[pymethods]
impl RawResponse {
    #[getter]
    fn status(&self) -> u16 {
        self.head.status
    }

    #[getter]
    fn version(&self) -> &'static str {
        self.head.version
    }

    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        self.head.reason(py)
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
        format!("<RawResponse [{}]>", self.head.status)
    }
}

/// `nodelay._models.Response` and `Request` as the engine builds them
/// (`Engine.fetch`): learnt once when `_models` is imported
/// (`_core.use_models`). The client's hot path gets its final `Response`
/// from the engine instead of running a Python function per request that
/// allocates it and fills eight slots.
struct Models {
    response: Py<PyType>,
    request: Py<PyType>,
    /// Byte offsets of `Response`'s slots in the object, in `SLOTS` order.
    offsets: [ffi::Py_ssize_t; SLOTS.len()],
}

/// Every slot of `Response` (its `__slots__`, checked at `use_models`): the
/// engine fills each one, so a slot added in Python without a value here
/// would be left unset; `use_models` refuses a class whose slots differ.
const SLOTS: [&str; 8] = [
    "content",
    "status_code",
    "_raw",
    "_request",
    "_headers",
    "_history",
    "_encoding",
    "_text",
];

static MODELS: PyOnceLock<Models> = PyOnceLock::new();

/// Tells the engine which classes are `Response` and `Request` (called once
/// by `nodelay._models`; later calls are ignored). `Response` must be a
/// class of exactly the slots in `SLOTS`, each a plain object slot.
#[pyfunction]
pub(crate) fn use_models(
    response: &Bound<'_, PyType>,
    request: &Bound<'_, PyType>,
) -> PyResult<()> {
    let py = response.py();
    let declared: Vec<String> = response.getattr("__slots__")?.extract()?;
    let mut sorted_declared = declared.clone();
    sorted_declared.sort();
    let mut expected: Vec<&str> = SLOTS.to_vec();
    expected.sort_unstable();
    if sorted_declared != expected {
        return Err(PyTypeError::new_err(format!(
            "Response.__slots__ must be {expected:?}, got {declared:?}"
        )));
    }
    let mut offsets = [0; SLOTS.len()];
    for (offset, name) in offsets.iter_mut().zip(SLOTS) {
        *offset = slot_offset(response, name)?;
    }
    MODELS.get_or_init(py, || Models {
        response: response.clone().unbind(),
        request: request.clone().unbind(),
        offsets,
    });
    Ok(())
}

/// Byte offset of the object slot `name` of `class` (a `__slots__` member
/// descriptor of type object, writable).
fn slot_offset(class: &Bound<'_, PyType>, name: &str) -> PyResult<ffi::Py_ssize_t> {
    let descriptor = class.getattr(name)?;
    let not_a_slot = || PyTypeError::new_err(format!("Response.{name} is not an object slot"));
    // Only the static type object's address is taken (no access to it).
    let member_type = std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type);
    if descriptor.get_type().as_type_ptr() != member_type {
        return Err(not_a_slot());
    }
    // SAFETY: `descriptor` is a member descriptor (checked above), whose C
    // layout is `PyMemberDescrObject`; its `d_member` points to the
    // `PyMemberDef` of the slot (pyo3-ffi types that field as a getset
    // pointer: it is the member definition, hence the cast), alive as long as
    // the class. Only plain fields are read.
    let (type_code, offset, flags) = unsafe {
        let member = (*descriptor.as_ptr().cast::<ffi::PyMemberDescrObject>())
            .d_member
            .cast::<ffi::PyMemberDef>();
        ((*member).type_code, (*member).offset, (*member).flags)
    };
    // SAFETY: `class` is a type object; reading its instance size.
    let basicsize = unsafe { (*class.as_type_ptr()).tp_basicsize };
    let pointer = std::mem::size_of::<*mut ffi::PyObject>() as ffi::Py_ssize_t;
    if type_code != ffi::Py_T_OBJECT_EX
        || flags & ffi::Py_READONLY != 0
        || offset < 0
        || offset + pointer > basicsize
    {
        return Err(not_a_slot());
    }
    Ok(offset)
}

/// The Python `Response` for a whole response (what `_models._response_from_raw`
/// makes): `content`, `status_code`, the raw response and the request
/// reference `(method, url, headers, body)`, every lazy field unset (None).
pub(crate) fn build_response<'py>(
    raw: Bound<'py, RawResponse>,
    request: Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = raw.py();
    let models = MODELS
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("nodelay._models is not imported"))?;
    let class = models.response.bind(py);
    let (content, status) = {
        let inner = raw.get();
        (inner.content.clone_ref(py), inner.head.status)
    };
    let status = status.into_pyobject(py)?.into_any();
    // SAFETY: `tp_alloc` of a class is set by CPython for every type
    // (`PyType_GenericAlloc` for a Python class with `__slots__`): it returns
    // a new zero-filled instance (all slots NULL = unset), or NULL with an
    // exception set. This is what `object.__new__(Response)` does (Response
    // is not abstract and takes no constructor arguments here).
    let object = unsafe {
        let alloc = (*class.as_type_ptr())
            .tp_alloc
            .ok_or_else(|| PyTypeError::new_err("Response has no tp_alloc"))?;
        let object = alloc(class.as_type_ptr(), 0);
        if object.is_null() {
            return Err(PyErr::fetch(py));
        }
        Bound::from_owned_ptr(py, object)
    };
    let values: [Bound<'py, PyAny>; SLOTS.len()] = [
        content.into_bound(py).into_any(),
        status,
        raw.into_any(),
        request.into_any(),
        py.None().into_bound(py),
        py.None().into_bound(py),
        py.None().into_bound(py),
        py.None().into_bound(py),
    ];
    for (offset, value) in models.offsets.iter().zip(values) {
        // SAFETY: `offset` is the offset of an object slot of `Response`
        // inside its instances (checked by `use_models`), and `object` is a
        // fresh instance nobody else has seen, whose slots are all NULL: we
        // store an owned reference in each (the instance now owns it and
        // releases it when it is freed).
        unsafe {
            let slot = object
                .as_ptr()
                .cast::<u8>()
                .offset(*offset)
                .cast::<*mut ffi::PyObject>();
            *slot = value.into_ptr();
        }
    }
    Ok(object)
}

/// `Request._make(method, url, headers, body)`: the request an engine error
/// is about (the hot path's error only; responses build it on demand).
pub(crate) fn make_request<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let models = MODELS
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("nodelay._models is not imported"))?;
    models
        .request
        .bind(py)
        .call_method1("_make", request.clone())
}
