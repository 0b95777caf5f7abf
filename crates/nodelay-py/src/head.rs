//! A response head for Python: the front's `Head` (raw bytes plus spans,
//! shared with the other language fronts) turned into `str` objects only
//! when Python asks (shared by `RawResponse`, `RawStream` and
//! `AsyncRawStream`).

pub(crate) use nodelay_front::Head;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

/// What Python reads from a head.
pub(crate) trait PyHead {
    /// The reason phrase.
    fn reason_str<'py>(&self, py: Python<'py>) -> Bound<'py, PyString>;
    /// Header fields in received order, names as received.
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>>;
    /// First value of the named header (ASCII case-insensitive).
    fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>>;
    /// Header fields as received, `(bytes, bytes)` pairs (httpcore's shape).
    fn raw_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>>;
    /// Header fields as `(str, str)` pairs with each byte one Latin-1
    /// character: how http.client gives them (urllib3, requests).
    fn latin1_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>>;
}

impl PyHead for Head {
    fn reason_str<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        text(py, self.reason())
    }

    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (name, value) in self.fields() {
            list.append(PyTuple::new(py, [text(py, name), text(py, value)])?)?;
        }
        Ok(list)
    }

    fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>> {
        self.value(name).map(|value| text(py, value))
    }

    fn raw_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (name, value) in self.fields() {
            list.append(PyTuple::new(
                py,
                [PyBytes::new(py, name), PyBytes::new(py, value)],
            )?)?;
        }
        Ok(list)
    }

    fn latin1_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (name, value) in self.fields() {
            list.append(PyTuple::new(py, [latin1(py, name), latin1(py, value)])?)?;
        }
        Ok(list)
    }
}

/// Header bytes as a `str` of one Latin-1 character per byte.
fn latin1<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    if bytes.is_ascii() {
        // The usual case: ASCII bytes are the same characters in UTF-8.
        return PyString::new(py, std::str::from_utf8(bytes).unwrap_or_default());
    }
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    PyString::new(py, &text)
}

/// Header bytes as a `str` (UTF-8, else Latin-1: `nodelay_front::text`).
fn text<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    PyString::new(py, &nodelay_front::text(bytes))
}
