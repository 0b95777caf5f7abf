//! `_core.Engine`: extract arguments, prepare with the GIL held (cheap, no
//! I/O), release the GIL for the network, re-take it once to build the response.

use std::sync::{Arc, Mutex};

use nodelay_core::{Client, Error, Exchange, RequestParts, Timeouts};
use nodelay_front::body::{read_exact, read_grown, WholeBody};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::args::{str_pairs, timeouts, BodyArg, EngineOptions};
use crate::body::uninit_bytes;
use crate::cookies::CookieJar;
use crate::errors::{to_py_err, with_request};
use crate::head::Head;
use crate::memo::{HeaderMemo, LastPrepared, PreparedRef, SharedMemo};
use crate::response::{build_response, RawResponse};
use crate::signals::SignalCheck;
use crate::stream::RawStream;
use crate::upload::Upload;

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct Engine {
    pub(crate) client: Client,
    /// Cap on a decoded (decompressed) body, in bytes.
    pub(crate) max_decoded_size: u64,
    /// The client's timeout tuple (the same object with every request),
    /// converted once.
    timeouts: SharedMemo<Timeouts>,
    /// The header list this engine sees on every request (the client's
    /// defaults), validated and encoded once (see `HeaderMemo`).
    header_memo: Mutex<HeaderMemo>,
}

#[pymethods]
impl Engine {
    /// An engine with the settings of `options` (a `_core.EngineOptions`).
    #[new]
    fn new(options: PyRef<'_, EngineOptions>) -> PyResult<Self> {
        let client = Client::with_dial(
            options.pool,
            options.tls.clone(),
            options.http2,
            options.dial.clone(),
        )
        .proxied(&options.proxies)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Engine {
            client,
            max_decoded_size: options.max_decoded_size,
            timeouts: SharedMemo::default(),
            header_memo: Mutex::new(HeaderMemo::default()),
        })
    }

    /// Sends one request and reads the whole response (see `_core.pyi`).
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'py, PyTuple>,
    ) -> PyResult<RawResponse> {
        self.read_whole(py, method, url, headers, body, timeout)
    }

    /// `request` with what `Client` does around it on its hot path, in one
    /// call (see `_core.pyi`): the jar's `Cookie` header, the response's
    /// Set-Cookie fields stored (`cookies._changed()` called when the jar
    /// changed), the final `nodelay.Response`, and an engine error's
    /// `request` filled in.
    #[allow(clippy::too_many_arguments)]
    fn fetch<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'py, PyTuple>,
        jar: &Bound<'py, CookieJar>,
        cookies: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // An empty jar answers at once, without parsing the URL.
        let sent = jar.get().request_headers(url.to_str()?, headers, None)?;
        let none = py.None().into_bound(py);
        let request = PyTuple::new(
            py,
            [
                method.as_any(),
                url.as_any(),
                sent.as_any(),
                body.unwrap_or(&none),
            ],
        )?;
        let raw = match self.read_whole(py, method, url, &sent, body, timeout) {
            Ok(raw) => raw,
            Err(err) => return Err(with_request(py, err, &request)),
        };
        if jar.get().store_head(raw.head(), Some(url.to_str()?)) {
            cookies.call_method0(intern!(py, "_changed"))?;
        }
        build_response(Bound::new(py, raw)?, request.into_any())
    }

    /// Sends one request and returns once the response head arrived; the body
    /// is read with `RawStream.read` (see `_core.pyi`).
    fn open<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'py, PyTuple>,
    ) -> PyResult<RawStream> {
        let signals = Arc::new(SignalCheck::default());
        let exchange = self.send_head(py, method, url, headers, body, timeout, &signals)?;
        RawStream::new(py, exchange, url, signals, self.max_decoded_size)
    }

    /// Closes every idle connection.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            self.client.close();
        });
    }

    fn idle_connections(&self) -> usize {
        self.client.idle_connections()
    }
}

impl Engine {
    /// Sends one request and reads the whole response.
    fn read_whole<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'py, PyTuple>,
    ) -> PyResult<RawResponse> {
        // Only streams share their signal check with the body reader (an Arc);
        // a whole response keeps it on the stack.
        let signals = SignalCheck::default();
        let mut exchange = self.send_head(py, method, url, headers, body, timeout, &signals)?;
        let fail = |e: Error| to_py_err(py, e, url, &signals);
        let content = match WholeBody::of(&exchange).map_err(fail)? {
            // The common case: a known length, read straight into the final
            // bytes object; no GIL release when it already arrived with the head.
            WholeBody::Exact { len, buffered } => {
                let (bytes, view) = uninit_bytes(py, len)?;
                if buffered {
                    read_exact(&mut exchange, view, &signals).map_err(fail)?;
                } else {
                    py.detach(|| read_exact(&mut exchange, view, &signals))
                        .map_err(fail)?;
                }
                bytes
            }
            WholeBody::Grown { body } => {
                let max_decoded = self.max_decoded_size;
                let out = py
                    .detach(|| read_grown(&mut exchange, &body, max_decoded, &signals))
                    .map_err(fail)?;
                PyBytes::new(py, &out)
            }
        };
        let elapsed = exchange.started().elapsed().as_secs_f64();
        let response = RawResponse::new(Head::take(&mut exchange), url, content, elapsed);
        exchange.finish();
        Ok(response)
    }

    /// Extracts the arguments (borrowing the Python strings), prepares the
    /// request with the GIL held (no I/O), then sends it and reads the
    /// response head with the GIL released.
    #[allow(clippy::too_many_arguments)]
    fn send_head<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'py, PyTuple>,
        signals: &SignalCheck,
    ) -> PyResult<Exchange> {
        let timeouts = self
            .timeouts
            .get(timeout.as_any(), |t| timeouts(t.cast()?))?;
        let fail = |e: Error| to_py_err(py, e, url, signals);
        let body = BodyArg::of(body)?;
        let client = &self.client;
        if let Some(prepared) = self.prepare_memoized(method, url, headers, &body)? {
            let prepared = prepared.map_err(fail)?;
            let body = body.bytes();
            return py
                .detach(|| client.send(&prepared, body, timeouts, signals))
                .map_err(fail);
        }
        // Borrowed views of the Python strings: no copies; valid while we hold
        // references to the objects, GIL or not (str and bytes are immutable).
        let header_items: Vec<Bound<'py, PyAny>> = headers.iter().collect();
        let pairs = str_pairs(&header_items, "headers")?;
        let parts = RequestParts {
            method: method.to_str()?,
            url: url.to_str()?,
            headers: &pairs,
            body: body.bytes(),
        };
        if let BodyArg::Upload(upload) = body {
            return self.send_upload(py, &parts, upload.get(), url, timeouts, signals);
        }
        let prepared = client.prepare(&parts).map_err(fail)?;
        let body = body.bytes();
        py.detach(|| client.send(&prepared, body, timeouts, signals))
            .map_err(fail)
    }
}

impl Engine {
    /// The request prepared with the memoized encoding of its header list
    /// (see `HeaderMemo`), for a plain HTTP/1.1 client and a bytes (or no)
    /// body; `None`: prepare it the ordinary way.
    fn prepare_memoized(
        &self,
        method: &Bound<'_, PyString>,
        url: &Bound<'_, PyString>,
        headers: &Bound<'_, PyList>,
        body: &BodyArg<'_, '_>,
    ) -> PyResult<Option<Result<PreparedRef, Error>>> {
        if !self.client.is_direct_http1() {
            return Ok(None);
        }
        let body = match body {
            BodyArg::None => None,
            BodyArg::Bytes(bytes) => Some(*bytes),
            BodyArg::Upload(_) => return Ok(None),
        };
        // Busy (another thread is in it): take the ordinary path.
        let Ok(mut memo) = self.header_memo.try_lock() else {
            return Ok(None);
        };
        if !memo.knows(headers) {
            return Ok(None);
        }
        let repeated = body.is_none()
            && memo
                .last
                .as_ref()
                .is_some_and(|last| last.matches(method, url));
        if let Some(prepared) = memo
            .last
            .as_ref()
            .filter(|_| repeated)
            .and_then(|last| last.prepared.as_ref())
        {
            return Ok(Some(Ok(PreparedRef::Shared(Arc::clone(prepared)))));
        }
        let Some(encoded) = memo.encoding() else {
            return Ok(None);
        };
        let parts = RequestParts {
            method: method.to_str()?,
            url: url.to_str()?,
            headers: &[],
            body,
        };
        let prepared = match self.client.prepare_encoded(&parts, encoded) {
            Ok(prepared) => prepared,
            Err(e) => return Ok(Some(Err(e))),
        };
        if body.is_some() {
            return Ok(Some(Ok(PreparedRef::Owned(prepared))));
        }
        if !repeated {
            memo.last = Some(LastPrepared {
                method: method.clone().unbind(),
                url: url.clone().unbind(),
                prepared: None,
            });
            return Ok(Some(Ok(PreparedRef::Owned(prepared))));
        }
        let prepared = Arc::new(prepared);
        if let Some(last) = &mut memo.last {
            last.prepared = Some(Arc::clone(&prepared));
        }
        Ok(Some(Ok(PreparedRef::Shared(prepared))))
    }

    /// Sends a request whose body is streamed from Python objects: each piece
    /// is pulled with the GIL taken briefly, and written with it released.
    /// An exception raised by the body's iterator or file is re-raised as is.
    fn send_upload(
        &self,
        py: Python<'_>,
        parts: &RequestParts<'_>,
        upload: &Upload,
        url: &Bound<'_, PyString>,
        timeouts: Timeouts,
        signals: &SignalCheck,
    ) -> PyResult<Exchange> {
        let fail = |e: Error| to_py_err(py, e, url, signals);
        let prepared = self
            .client
            .prepare_streamed(parts, upload.framing())
            .map_err(fail)?;
        let mut source = upload.begin(py)?;
        let client = &self.client;
        let sent = py.detach(|| client.send_streamed(&prepared, &mut source, timeouts, signals));
        sent.map_err(|e| source.take_error().unwrap_or_else(|| fail(e)))
    }
}

/// `application/x-www-form-urlencoded` body of `(name, value)` string pairs,
/// byte-identical to `urllib.parse.urlencode` (see `nodelay_core::form`).
#[pyfunction]
pub(crate) fn form_encode<'py>(
    py: Python<'py>,
    pairs: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyBytes>> {
    let items: Vec<Bound<'py, PyAny>> = pairs.iter().collect();
    let strings = str_pairs(&items, "form data")?;
    form_bytes(py, &strings)
}

/// `form_encode(param_pairs(data))` for a dict whose keys and values are all
/// exactly `str` (the usual `data=` form), in one call without the pairs
/// list; `None` for any other dict (the caller normalises it first).
#[pyfunction]
pub(crate) fn form_encode_dict<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let items: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = data.iter().collect();
    let mut strings = Vec::with_capacity(items.len());
    for (name, value) in &items {
        let (Ok(name), Ok(value)) = (
            name.cast_exact::<PyString>(),
            value.cast_exact::<PyString>(),
        ) else {
            return Ok(None);
        };
        strings.push((name.to_str()?, value.to_str()?));
    }
    form_bytes(py, &strings).map(Some)
}

/// `pairs` form-encoded straight into a `bytes` object of the encoded
/// length (no intermediate buffer, no copy).
fn form_bytes<'py>(py: Python<'py>, pairs: &[(&str, &str)]) -> PyResult<Bound<'py, PyBytes>> {
    let (bytes, view) = uninit_bytes(py, nodelay_core::form::urlencoded_len(pairs))?;
    nodelay_core::form::urlencode_into(pairs, view);
    Ok(bytes)
}
