//! `_core.AsyncEngine`: the async twin of `Engine`. Arguments are extracted
//! and the request prepared with the GIL held (cheap, no I/O), everything the
//! network part needs is moved into an owned tokio task, and an asyncio
//! future is returned (see `bridge.rs`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use nodelay_core::aio::{read_whole, AsyncClient, AsyncExchange, BodyPump};
use nodelay_core::decode::DEFAULT_MAX_DECODED_BYTES;
use nodelay_core::{
    Error, Http2Mode, PoolConfig, Prepared, ProxySettings, RequestParts, Timeouts, TlsOptions,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::aio::bridge::{spawn, Complete};
use crate::aio::stream::AsyncRawStream;
use crate::engine::{dial, seconds, str_pairs, timeouts};
use crate::errors::to_py_err;
use crate::head::Head;
use crate::response::RawResponse;
use crate::signals::SignalCheck;
use crate::upload::Upload;

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct AsyncEngine {
    client: AsyncClient,
    /// Cap on a decoded (decompressed) body, in bytes.
    max_decoded_size: u64,
}

/// An engine error as the exception for a request to `url`.
pub(crate) fn error(py: Python<'_>, e: Error, url: &Bound<'_, PyString>) -> PyErr {
    to_py_err(py, e, url, &SignalCheck::default())
}

/// The Python exception that stopped a streamed body (raised by its
/// iterator or file, or `StreamConsumed`): re-raised as is instead of the
/// engine's error.
type SourceError = Arc<Mutex<Option<PyErr>>>;

/// The engine's error as the exception to raise: the body source's own
/// exception when it stopped the request.
fn failure(
    py: Python<'_>,
    e: Error,
    url: &Bound<'_, PyString>,
    source: &Option<SourceError>,
) -> PyErr {
    source
        .as_ref()
        .and_then(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take())
        .unwrap_or_else(|| error(py, e, url))
}

/// A whole response read on the runtime (connection already given back):
/// head, body and seconds elapsed; built into a `RawResponse`.
struct Whole {
    result: Result<(Head, Vec<u8>, f64), Error>,
    source_error: Option<SourceError>,
}

impl Complete for Whole {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let source_error = self.source_error;
        let (head, content, elapsed) = self
            .result
            .map_err(|e| failure(py, e, url, &source_error))?;
        let content = PyBytes::new(py, &content);
        Ok(Py::new(py, RawResponse::new(head, url, content, elapsed))?.into_any())
    }
}

/// What a request sends: nothing, bytes (only when too large to ride in the
/// encoded head), or a body streamed from a Python `Upload`.
enum Body {
    Bytes(Option<Vec<u8>>),
    Streamed(BodyPump),
}

/// Sends `prepared` with its body and waits for the response head.
async fn send(
    client: &AsyncClient,
    prepared: &Prepared,
    body: Body,
    timeouts: Timeouts,
) -> Result<AsyncExchange, Error> {
    match body {
        Body::Bytes(bytes) => client.send(prepared, bytes.as_deref(), timeouts).await,
        Body::Streamed(mut pump) => {
            let sent = client.send_streamed(prepared, &mut pump, timeouts).await;
            pump.finish().await;
            sent
        }
    }
}

/// Sends, reads the whole body, and gives the connection back.
async fn fetch_whole(
    client: AsyncClient,
    prepared: Prepared,
    body: Body,
    timeouts: Timeouts,
    max_decoded: u64,
) -> Result<(Head, Vec<u8>, f64), Error> {
    let exchange = send(&client, &prepared, body, timeouts).await?;
    let (mut exchange, content) = read_whole(exchange, max_decoded).await?;
    let elapsed = exchange.started().elapsed().as_secs_f64();
    let head = Head::take_async(&mut exchange);
    exchange.finish();
    Ok((head, content, elapsed))
}

/// A response head with its body still on the connection.
struct Opened {
    result: Result<AsyncExchange, Error>,
    max_decoded_size: u64,
    source_error: Option<SourceError>,
}

impl Complete for Opened {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let source_error = self.source_error;
        let exchange = self
            .result
            .map_err(|e| failure(py, e, url, &source_error))?;
        let stream = AsyncRawStream::new(py, exchange, url, self.max_decoded_size)?;
        Ok(Py::new(py, stream)?.into_any())
    }
}

#[pymethods]
impl AsyncEngine {
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
        let pool = PoolConfig {
            max_connections,
            max_keepalive,
            keepalive_expiry: seconds("keepalive_expiry", keepalive_expiry)?,
        };
        let tls = TlsOptions {
            verify,
            ca_file,
            client_cert: cert_file,
            client_key: key_file,
        };
        let proxies = ProxySettings {
            http: http_proxy,
            https: https_proxy,
            no_proxy,
        };
        let client = AsyncClient::with_dial(pool, tls, http2, &proxies, dial)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(AsyncEngine {
            client,
            max_decoded_size,
        })
    }

    /// Sends one request; the returned awaitable gives the whole response
    /// as a `RawResponse` (see `_core.pyi`).
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'_, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (prepared, body, source_error, timeouts) =
            self.prepare(py, method, url, headers, body, timeout)?;
        let client = self.client.clone();
        let max_decoded = self.max_decoded_size;
        spawn(py, url, async move {
            Whole {
                result: fetch_whole(client, prepared, body, timeouts, max_decoded).await,
                source_error,
            }
        })
    }

    /// Sends one request; the returned awaitable gives an `AsyncRawStream`
    /// once the response head arrived (see `_core.pyi`).
    fn open<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyString>,
        url: &Bound<'py, PyString>,
        headers: &Bound<'py, PyList>,
        body: Option<&Bound<'py, PyAny>>,
        timeout: &Bound<'_, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (prepared, body, source_error, timeouts) =
            self.prepare(py, method, url, headers, body, timeout)?;
        let client = self.client.clone();
        let max_decoded_size = self.max_decoded_size;
        spawn(py, url, async move {
            Opened {
                result: send(&client, &prepared, body, timeouts).await,
                max_decoded_size,
                source_error,
            }
        })
    }

    /// Closes every idle connection.
    fn close(&self) {
        self.client.close();
    }

    fn idle_connections(&self) -> usize {
        self.client.idle_connections()
    }
}

impl AsyncEngine {
    /// Validates and encodes the request with the GIL held (no I/O). A bytes
    /// body is copied only when it is too large to ride in the encoded head;
    /// an `Upload` gets a pump that pulls it on the runtime's blocking pool.
    #[allow(clippy::type_complexity)]
    fn prepare(
        &self,
        py: Python<'_>,
        method: &Bound<'_, PyString>,
        url: &Bound<'_, PyString>,
        headers: &Bound<'_, PyList>,
        body: Option<&Bound<'_, PyAny>>,
        timeout: &Bound<'_, PyTuple>,
    ) -> PyResult<(Prepared, Body, Option<SourceError>, Timeouts)> {
        let timeouts = timeouts(timeout)?;
        let header_items: Vec<Bound<'_, PyAny>> = headers.iter().collect();
        let pairs = str_pairs(&header_items, "headers")?;
        let body = body.filter(|b| !b.is_none());
        if let Some(upload) = body.and_then(|b| b.cast::<Upload>().ok()) {
            let parts = RequestParts {
                method: method.to_str()?,
                url: url.to_str()?,
                headers: &pairs,
                body: None,
            };
            let prepared = self
                .client
                .prepare_streamed(&parts, upload.get().framing())
                .map_err(|e| error(py, e, url))?;
            let slot = SourceError::default();
            let pump = pump(upload.clone().unbind(), Arc::clone(&slot));
            return Ok((prepared, Body::Streamed(pump), Some(slot), timeouts));
        }
        let body_bytes = match body {
            Some(b) => Some(
                b.cast::<PyBytes>()
                    .map_err(|_| PyTypeError::new_err("body must be bytes or a _core.Upload"))?
                    .as_bytes(),
            ),
            None => None,
        };
        let prepared = self
            .client
            .prepare(&RequestParts {
                method: method.to_str()?,
                url: url.to_str()?,
                headers: &pairs,
                body: body_bytes,
            })
            .map_err(|e| error(py, e, url))?;
        let body = body_bytes
            .filter(|_| !prepared.body_inlined())
            .map(<[u8]>::to_vec);
        Ok((prepared, Body::Bytes(body), None, timeouts))
    }
}

/// Serves `upload` to the driver from the runtime's blocking pool: each
/// piece is pulled with the GIL taken briefly there (never on the event
/// loop's thread, never on a runtime worker). The Python exception that
/// stops it lands in `slot`.
fn pump(upload: Py<Upload>, slot: SourceError) -> BodyPump {
    BodyPump::spawn(move |server| {
        let keep = |e: PyErr| *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        match Python::attach(|py| upload.get().begin(py)) {
            Ok(mut source) => server.serve(&mut source, |source| {
                if let Some(e) = source.take_error() {
                    keep(e);
                }
            }),
            Err(e) => {
                keep(e);
                server.fail(|| Error::body_source("the request body cannot be sent"));
            }
        }
    })
}
