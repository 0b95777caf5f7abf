//! `_core.Engine`: extract arguments, prepare with the GIL held (cheap, no
//! I/O), release the GIL for the network, re-take it once to build the response.

use std::time::Duration;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use nodelay_core::aio::AsyncClient;
use nodelay_core::decode::{decode, DEFAULT_MAX_DECODED_BYTES};
use nodelay_core::{
    Client, Dial, EncodedHeaders, Error, Exchange, Http2Mode, PoolConfig, Prepared, RequestParts,
    Timeouts, TlsOptions,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::body::uninit_bytes;
use crate::cookies::CookieJar;
use crate::errors::to_py_err;
use crate::head::Head;
use crate::response::{build_response, make_request, RawResponse};
use crate::signals::SignalCheck;
use crate::stream::RawStream;
use crate::upload::Upload;

/// Content-Length bodies up to this size are read straight into one `bytes`
/// object of the exact size; larger announced sizes are not trusted for a
/// single allocation (HOSTILE.md A11) and grow as bytes arrive.
const EXACT_BODY_MAX_BYTES: u64 = nodelay_core::limits::EXACT_PREALLOC_MAX_BYTES;

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct Engine {
    pub(crate) client: Client,
    /// Cap on a decoded (decompressed) body, in bytes.
    pub(crate) max_decoded_size: u64,
    /// The batch API's HTTP/1.1 connections (async, on the runtime; see
    /// batch.rs), kept across batches with this client's limits and TLS.
    pub(crate) batch_h1: AsyncClient,
    /// The last timeout tuple converted, and what it converted to. A client
    /// passes the same tuple object with every request, so the five
    /// float → `Duration` conversions run once (a tuple is immutable, and the
    /// reference kept here stops its address from being reused).
    last_timeouts: Mutex<Option<(Py<PyTuple>, Timeouts)>>,
    /// The header list this engine sees on every request (the client's
    /// defaults), validated and encoded once (see `HeaderMemo`).
    header_memo: Mutex<HeaderMemo>,
}

/// A client passes the same default header list object with every request;
/// its fields are validated and encoded once and reused while a request's
/// list holds the very same `(name, value)` tuples. Tuples and str are
/// immutable and the memo keeps references to them (so no other object can
/// take their addresses): same objects, same bytes. A list is learnt when
/// the same list object comes twice in a row, so per-request lists (with a
/// Cookie header, per-request headers) never displace the defaults.
#[derive(Default)]
struct HeaderMemo {
    /// The tuples of the learnt list, in order, and their encoding.
    learnt: Option<(Vec<Py<PyAny>>, EncodedHeaders)>,
    /// The last list that did not match: learnt if it comes again.
    candidate: Option<Py<PyList>>,
    /// The last body-less request prepared with the learnt list (see
    /// `LastPrepared`); cleared whenever another list is learnt.
    last: Option<LastPrepared>,
}

/// The last body-less request sent with the memo's learnt header list: its
/// bytes depend only on the method and URL text (and those headers), so the
/// same method and URL again (a loop over one URL, polling) is sent as
/// prepared the time before, without parsing the URL or encoding the head.
/// One entry: a different request replaces it. The prepared request is kept
/// from the second time in a row on, so requests that never repeat (a
/// crawl) pay no shared allocation, only the comparison.
struct LastPrepared {
    /// The method and URL objects (immutable str; held, so no other object
    /// takes their addresses): the same objects, or equal text, match.
    method: Py<PyString>,
    url: Py<PyString>,
    prepared: Option<Arc<Prepared>>,
}

impl LastPrepared {
    fn matches(&self, method: &Bound<'_, PyString>, url: &Bound<'_, PyString>) -> bool {
        let same = |held: &Py<PyString>, given: &Bound<'_, PyString>| {
            held.is(given)
                || matches!((held.bind(given.py()).to_str(), given.to_str()), (Ok(a), Ok(b)) if a == b)
        };
        same(&self.url, url) && same(&self.method, method)
    }
}

/// A request prepared for this call, or shared with earlier identical ones.
// It lives on the stack for one call: boxing the owned case would add an
// allocation per request with a body.
#[allow(clippy::large_enum_variant)]
enum PreparedRef {
    Owned(Prepared),
    Shared(Arc<Prepared>),
}

impl std::ops::Deref for PreparedRef {
    type Target = Prepared;

    fn deref(&self) -> &Prepared {
        match self {
            PreparedRef::Owned(p) => p,
            PreparedRef::Shared(p) => p,
        }
    }
}

impl HeaderMemo {
    /// Whether `list` is the learnt list (learning it if it is the
    /// candidate); false: encode it the ordinary way.
    fn knows(&mut self, list: &Bound<'_, PyList>) -> bool {
        let known = self.learnt.as_ref().is_some_and(|(items, _)| {
            items.len() == list.len() && list.iter().zip(items).all(|(a, b)| a.is(b))
        });
        if known {
            return true;
        }
        if !self.candidate.as_ref().is_some_and(|c| c.is(list)) {
            self.candidate = Some(list.clone().unbind());
            return false;
        }
        self.candidate = None;
        let items: Vec<Bound<'_, PyAny>> = list.iter().collect();
        // Invalid fields are left to the ordinary path, which reports them.
        let Some(encoded) = str_pairs(&items, "headers")
            .ok()
            .and_then(|pairs| EncodedHeaders::new(&pairs).ok())
        else {
            return false;
        };
        self.learnt = Some((items.into_iter().map(Bound::unbind).collect(), encoded));
        self.last = None;
        true
    }
}

pub(crate) fn seconds(name: &str, value: Option<f64>) -> PyResult<Option<Duration>> {
    value
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                PyValueError::new_err(format!(
                    "{name} timeout must be a non-negative number of seconds, got {s}"
                ))
            })
        })
        .transpose()
}

/// `(connect, read, write, pool, total)` seconds as the engine's `Timeouts`,
/// optionally followed by the configured total when `total` is only what is
/// left of it (a later exchange of one request, `_flow.attempt_timeouts`):
/// timeout messages name the configured one.
pub(crate) fn timeouts(tuple: &Bound<'_, PyTuple>) -> PyResult<Timeouts> {
    let len = tuple.len();
    if len != 5 && len != 6 {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "a timeout tuple has 5 or 6 items, got {len}"
        )));
    }
    let item = |i: usize| -> PyResult<Option<f64>> { tuple.get_item(i)?.extract() };
    Ok(Timeouts {
        connect: seconds("connect", item(0)?)?,
        read: seconds("read", item(1)?)?,
        write: seconds("write", item(2)?)?,
        pool: seconds("pool", item(3)?)?,
        total: seconds("total", item(4)?)?,
        total_configured: if len == 6 {
            seconds("total", item(5)?)?
        } else {
            None
        },
    })
}

/// `uds=` and `local_address=` (httpx's `HTTPTransport`) as the engine's
/// `Dial`; a local address that is not an IP address raises `ValueError`.
pub(crate) fn dial(uds: Option<PathBuf>, local_address: Option<String>) -> PyResult<Dial> {
    let local_address = match local_address {
        None => None,
        Some(text) => Some(text.parse().map_err(|_| {
            PyValueError::new_err(format!("local_address must be an IP address, got {text:?}"))
        })?),
    };
    Ok(Dial { uds, local_address })
}

/// The sizes below are counts; `None` is unbounded.
#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (
        *,
        max_connections=Some(100),
        max_keepalive=Some(100),
        keepalive_expiry=Some(5.0),
        verify=true,
        ca_file=None,
        cert_file=None,
        key_file=None,
        max_decoded_size=DEFAULT_MAX_DECODED_BYTES,
        http_proxy=None,
        https_proxy=None,
        no_proxy=None,
        http2="off",
        uds=None,
        local_address=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        max_connections: Option<usize>,
        max_keepalive: Option<usize>,
        keepalive_expiry: Option<f64>,
        verify: bool,
        ca_file: Option<PathBuf>,
        cert_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        max_decoded_size: u64,
        http_proxy: Option<String>,
        https_proxy: Option<String>,
        no_proxy: Option<String>,
        http2: &str,
        uds: Option<PathBuf>,
        local_address: Option<String>,
    ) -> PyResult<Self> {
        let dial = dial(uds, local_address)?;
        let http2 = match http2 {
            "off" => Http2Mode::Off,
            "negotiate" => Http2Mode::Negotiate,
            "prior_knowledge" => Http2Mode::PriorKnowledge,
            other => {
                return Err(PyValueError::new_err(format!(
                    "http2 must be 'off', 'negotiate' or 'prior_knowledge', got {other:?}"
                )))
            }
        };
        if max_connections == Some(0) {
            return Err(PyValueError::new_err("max_connections must be at least 1"));
        }
        if key_file.is_some() && cert_file.is_none() {
            return Err(PyValueError::new_err("key_file needs cert_file"));
        }
        let keepalive_expiry = seconds("keepalive_expiry", keepalive_expiry)?;
        let pool = PoolConfig {
            max_connections,
            max_keepalive,
            keepalive_expiry,
        };
        let tls = TlsOptions {
            verify,
            ca_file,
            client_cert: cert_file,
            client_key: key_file,
        };
        let proxies = nodelay_core::ProxySettings {
            http: http_proxy,
            https: https_proxy,
            no_proxy,
        };
        let batch_h1 = AsyncClient::with_tls(pool, tls.clone());
        let client = Client::with_dial(pool, tls, http2, dial)
            .proxied(&proxies)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Engine {
            client,
            max_decoded_size,
            batch_h1,
            last_timeouts: Mutex::new(None),
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
        let jar = jar.get();
        // An empty jar answers at once, without parsing the URL.
        let sent = match jar.header_for(url.to_str()?) {
            Some(value) => with_cookie(headers, &value)?,
            None => headers.clone(),
        };
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
        if jar.store_head(raw.head(), Some(url.to_str()?)) {
            cookies.call_method0(intern!(py, "_changed"))?;
        }
        build_response(Bound::new(py, raw)?, request)
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
            self.batch_h1.close();
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
        let codings = exchange
            .content_codings()
            .map_err(fail)?
            .filter(|c| !c.is_empty());
        let content = match (codings, exchange.content_length()) {
            // The common case: a known length, read straight into the final
            // bytes object; no GIL release when it already arrived with the head.
            (None, Some(len)) if len <= EXACT_BODY_MAX_BYTES => {
                let (bytes, view) = uninit_bytes(py, len as usize)?;
                if exchange.is_body_buffered() {
                    exchange.read_exact_into(view, &signals).map_err(fail)?;
                } else {
                    py.detach(|| exchange.read_exact_into(view, &signals))
                        .map_err(fail)?;
                }
                bytes
            }
            (codings, _) => {
                let max_decoded = self.max_decoded_size;
                let out = py
                    .detach(|| {
                        let mut out = Vec::new();
                        exchange.read_to_end(&mut out, &signals)?;
                        match codings.filter(|_| !out.is_empty()) {
                            Some(codings) => decode(&codings, out, max_decoded),
                            None => Ok(out),
                        }
                    })
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
        let timeouts = self.timeouts_of(timeout)?;
        let fail = |e: Error| to_py_err(py, e, url, signals);
        if let Some(prepared) = self.prepare_memoized(method, url, headers, body)? {
            let prepared = prepared.map_err(fail)?;
            let body_bytes = body
                .and_then(|b| b.cast::<PyBytes>().ok())
                .map(|b| b.as_bytes());
            let client = &self.client;
            return py
                .detach(|| client.send(&prepared, body_bytes, timeouts, signals))
                .map_err(fail);
        }
        // Borrowed views of the Python strings: no copies; valid while we hold
        // references to the objects, GIL or not (str and bytes are immutable).
        let header_items: Vec<Bound<'py, PyAny>> = headers.iter().collect();
        let pairs = str_pairs(&header_items, "headers")?;
        let body = body.filter(|b| !b.is_none());
        if let Some(upload) = body.and_then(|b| b.cast::<Upload>().ok()) {
            let parts = RequestParts {
                method: method.to_str()?,
                url: url.to_str()?,
                headers: &pairs,
                body: None,
            };
            return self.send_upload(py, &parts, upload.get(), url, timeouts, signals);
        }
        let body_bytes = match body {
            Some(b) => Some(
                b.cast::<PyBytes>()
                    .map_err(|_| PyTypeError::new_err("body must be bytes or a _core.Upload"))?
                    .as_bytes(),
            ),
            None => None,
        };
        let parts = RequestParts {
            method: method.to_str()?,
            url: url.to_str()?,
            headers: &pairs,
            body: body_bytes,
        };
        let prepared = self.client.prepare(&parts).map_err(fail)?;
        let client = &self.client;
        py.detach(|| client.send(&prepared, body_bytes, timeouts, signals))
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
        body: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Result<PreparedRef, Error>>> {
        if !self.client.is_direct_http1() {
            return Ok(None);
        }
        let body = match body.filter(|b| !b.is_none()) {
            None => None,
            Some(b) => match b.cast::<PyBytes>() {
                Ok(bytes) => Some(bytes.as_bytes()),
                Err(_) => return Ok(None), // an upload, or a type error reported there
            },
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
        let Some((_, encoded)) = &memo.learnt else {
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

    /// `timeouts(tuple)`, remembered for the last tuple object seen. Threads
    /// that find the memo busy convert their tuple themselves.
    fn timeouts_of(&self, tuple: &Bound<'_, PyTuple>) -> PyResult<Timeouts> {
        if let Ok(last) = self.last_timeouts.try_lock() {
            if let Some((seen, value)) = &*last {
                if seen.is(tuple) {
                    return Ok(*value);
                }
            }
        }
        let value = timeouts(tuple)?;
        if let Ok(mut last) = self.last_timeouts.try_lock() {
            *last = Some((tuple.clone().unbind(), value));
        }
        Ok(value)
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

/// Borrowed `(name, value)` views of a list of `(str, str)` tuples: no
/// copies. The views borrow from the tuples in `items`, which own the str
/// objects and outlive the returned vector; `what` names the argument in errors.
pub(crate) fn str_pairs<'a>(
    items: &'a [Bound<'_, PyAny>],
    what: &str,
) -> PyResult<Vec<(&'a str, &'a str)>> {
    let mut pairs = Vec::with_capacity(items.len());
    for item in items {
        let tuple = item.cast::<PyTuple>()?;
        if tuple.len() != 2 {
            return Err(PyValueError::new_err(format!(
                "{what} must be (name, value) pairs"
            )));
        }
        let name = tuple.get_item(0)?.cast_into::<PyString>()?;
        let value = tuple.get_item(1)?.cast_into::<PyString>()?;
        // The str objects are owned by the tuples in `items` (alive for 'a);
        // `name` and `value` are only extra references to them.
        pairs.push((extend(name.to_str()?), extend(value.to_str()?)));
    }
    Ok(pairs)
}

/// Extends a borrow of a Python string's UTF-8 buffer to the caller's scope.
fn extend<'a>(s: &str) -> &'a str {
    // SAFETY: callers keep the owning Python object alive for 'a; CPython
    // caches a str's UTF-8 form for the object's lifetime and never moves it.
    unsafe { &*(s as *const str) }
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
    Ok(PyBytes::new(py, &nodelay_core::form::urlencode(strings)))
}

/// `headers` plus `("Cookie", value)` (what `_prepare.with_cookies` does
/// with the jar's value): unchanged when the value is empty or a `Cookie`
/// header is already there (the user's wins; names compared as Python's
/// `name.lower() == "cookie"` does).
fn with_cookie<'py>(headers: &Bound<'py, PyList>, value: &str) -> PyResult<Bound<'py, PyList>> {
    let py = headers.py();
    if value.is_empty() {
        return Ok(headers.clone());
    }
    for item in headers.iter() {
        let name = item.get_item(0)?;
        let name = name.cast::<PyString>()?;
        let is_cookie = match name.to_str() {
            Ok(text) if text.is_ascii() => text.eq_ignore_ascii_case("cookie"),
            // Unicode lowercasing maps a few non-ASCII letters to ASCII ones
            // (KELVIN SIGN → k): let Python decide, as it did.
            _ => name.call_method0(intern!(py, "lower"))?.eq("cookie")?,
        };
        if is_cookie {
            return Ok(headers.clone());
        }
    }
    let out = PyList::new(py, headers.iter())?;
    out.append(("Cookie", value))?;
    Ok(out)
}

/// An engine error with its `request` filled in (`Request._make` of the
/// request reference) when it is a `RequestError` without one, as the client
/// does for every request it sends.
fn with_request(py: Python<'_>, err: PyErr, request: &Bound<'_, PyTuple>) -> PyErr {
    let fill = || -> PyResult<()> {
        let value = err.value(py);
        let class = py
            .import(intern!(py, "nodelay._exceptions"))?
            .getattr(intern!(py, "RequestError"))?;
        if value.is_instance(&class)? && value.getattr(intern!(py, "request"))?.is_none() {
            value.setattr(intern!(py, "request"), make_request(py, request)?)?;
        }
        Ok(())
    };
    // Failing to describe the request must not hide the error itself.
    let _ = fill();
    err
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
    Ok(Some(PyBytes::new(
        py,
        &nodelay_core::form::urlencode(strings),
    )))
}
