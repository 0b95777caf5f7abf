//! A response head as received: raw bytes plus spans, decoded to Python
//! strings only when asked (shared by `RawResponse` and `RawStream`).

use nodelay_core::{Exchange, HeaderSpan};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

pub(crate) struct Head {
    pub status: u16,
    pub version: &'static str,
    bytes: Box<[u8]>,
    spans: Vec<HeaderSpan>,
    reason: (u32, u32),
}

impl Head {
    /// Moves the head out of `exchange` (no copy).
    pub fn take(exchange: &mut Exchange) -> Head {
        let status = exchange.status();
        let version = exchange.version().as_str();
        let reason = exchange.reason_span();
        let (bytes, spans) = exchange.take_head();
        Head {
            status,
            version,
            bytes,
            spans,
            reason,
        }
    }

    /// Moves the head out of an async exchange (no copy).
    pub fn take_async(exchange: &mut nodelay_core::aio::AsyncExchange) -> Head {
        let status = exchange.status();
        let version = exchange.version().as_str();
        let reason = exchange.reason_span();
        let (bytes, spans) = exchange.take_head();
        Head {
            status,
            version,
            bytes,
            spans,
            reason,
        }
    }

    /// The head of a response the batch driver read whole (no copy).
    pub fn fetched(fetched: &mut nodelay_core::batch::Fetched) -> Head {
        Head {
            status: fetched.status,
            version: fetched.version.as_str(),
            bytes: std::mem::take(&mut fetched.head_bytes),
            spans: std::mem::take(&mut fetched.headers),
            reason: fetched.reason,
        }
    }

    /// Raw values of the named header (ASCII case-insensitive), in received
    /// order, without building Python objects (the cookie jar's Set-Cookie scan).
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.spans
            .iter()
            .filter(move |span| self.slice(span.name).eq_ignore_ascii_case(name.as_bytes()))
            .map(|span| self.slice(span.value))
    }

    fn slice(&self, span: (u32, u32)) -> &[u8] {
        &self.bytes[span.0 as usize..span.1 as usize]
    }

    pub fn reason<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        decode(py, self.slice(self.reason))
    }

    /// Header fields in received order, names as received.
    pub fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
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

    /// First value of the named header (ASCII case-insensitive).
    pub fn header<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyString>> {
        self.spans
            .iter()
            .find(|span| self.slice(span.name).eq_ignore_ascii_case(name.as_bytes()))
            .map(|span| decode(py, self.slice(span.value)))
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
