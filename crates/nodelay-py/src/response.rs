//! `_core.RawResponse`: a response read whole. Headers stay raw bytes plus
//! spans until Python asks for them.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

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
