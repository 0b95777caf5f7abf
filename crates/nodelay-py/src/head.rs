//! A response head for Python: the front's `Head` (raw bytes plus spans,
//! shared with the other language fronts) turned into `str` objects only
//! when Python asks (shared by `RawResponse`, `RawStream` and
//! `AsyncRawStream`).

pub(crate) use nodelay_front::Head;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// What Python reads from a head.
pub(crate) trait PyHead {
    /// The reason phrase.
    fn reason_str<'py>(&self, py: Python<'py>) -> Bound<'py, PyString>;
    /// Header fields in received order, names as received.
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>>;
    /// First value of the named header (ASCII case-insensitive).
    fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>>;
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
}

/// Header bytes as a `str` (UTF-8, else Latin-1: `nodelay_front::text`).
fn text<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    PyString::new(py, &nodelay_front::text(bytes))
}
