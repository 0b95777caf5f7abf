//! `_core.RawResponse`: the response as received. Headers stay raw bytes plus
//! spans until Python asks for them.

use nodelay_core::{Exchange, HeaderSpan};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct RawResponse {
    #[pyo3(get)]
    status: u16,
    version: &'static str,
    #[pyo3(get)]
    url: Py<PyString>,
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    elapsed: f64,
    head: Box<[u8]>,
    spans: Vec<HeaderSpan>,
    reason: (u32, u32),
}

impl RawResponse {
    pub fn new(
        py: Python<'_>,
        exchange: &mut Exchange<'_>,
        url: &Bound<'_, PyString>,
        content: Bound<'_, PyBytes>,
        elapsed: f64,
    ) -> Self {
        let status = exchange.status();
        let version = exchange.version().as_str();
        let reason = exchange.reason_span();
        let (head, spans) = exchange.take_head();
        let _ = py;
        RawResponse {
            status,
            version,
            url: url.clone().unbind(),
            content: content.unbind(),
            elapsed,
            head,
            spans,
            reason,
        }
    }

    fn slice(&self, span: (u32, u32)) -> &[u8] {
        &self.head[span.0 as usize..span.1 as usize]
    }
}

/// Header bytes as a str: UTF-8 when valid, else Latin-1 (what RFC 9110
/// §5.5 calls obs-text; every byte maps to one code point, nothing is lost).
fn decode<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    match std::str::from_utf8(bytes) {
        Ok(s) => PyString::new(py, s),
        Err(_) => PyString::new(py, &bytes.iter().map(|&b| b as char).collect::<String>()),
    }
}

#[pymethods]
impl RawResponse {
    #[getter]
    fn version(&self) -> &'static str {
        self.version
    }

    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        decode(py, self.slice(self.reason))
    }

    /// Header fields in received order, names as received.
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for span in &self.spans {
            let pair = PyTuple::new(
                py,
                [
                    decode(py, self.slice(span.name)),
                    decode(py, self.slice(span.value)),
                ],
            )?;
            list.append(pair)?;
        }
        Ok(list)
    }

    /// First value of the named header (ASCII case-insensitive), or None.
    fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>> {
        self.spans
            .iter()
            .find(|span| self.slice(span.name).eq_ignore_ascii_case(name.as_bytes()))
            .map(|span| decode(py, self.slice(span.value)))
    }

    fn __repr__(&self) -> String {
        format!("<RawResponse [{}]>", self.status)
    }
}
