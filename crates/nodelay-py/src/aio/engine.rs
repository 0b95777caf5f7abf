//! `_core.AsyncEngine`: the async twin of `Engine`. Arguments are extracted
//! and the request prepared with the GIL held (cheap, no I/O), everything the
//! network part needs is moved into an owned future (driven by the loop
//! thread or a runtime task), and an asyncio future is returned (see `bridge.rs`).

use std::sync::Arc;

use nodelay_core::aio::{AsyncClient, AsyncExchange, BodyPump};
use nodelay_core::{Error, Prepared, RequestParts, Timeouts};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::aio::bridge::{start, Complete};
use crate::aio::stream::AsyncRawStream;
use crate::args::{str_pairs, timeouts, BodyArg, EngineOptions};
use crate::errors::{error, failure, SourceError};
use crate::head::Head;
use crate::memo::SharedMemo;
use crate::response::Whole;
use crate::upload::Upload;

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct AsyncEngine {
    client: AsyncClient,
    /// Cap on a decoded (decompressed) body, in bytes.
    max_decoded_size: u64,
    /// The client's timeout tuple (the same object with every request),
    /// converted once.
    timeouts: SharedMemo<Timeouts>,
}

/// A whole response read by the driver (connection already given back),
/// built into a `RawResponse`.
struct Fetched {
    result: Result<Whole, Error>,
    source_error: Option<SourceError>,
}

impl Complete for Fetched {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let whole = self
            .result
            .map_err(|e| failure(py, e, url, self.source_error.as_ref()))?;
        Ok(Py::new(py, whole.into_raw(url))?.into_any())
    }

    fn body_len(&self) -> usize {
        self.result.as_ref().map_or(0, |whole| whole.body.len())
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
) -> Result<Whole, Error> {
    let exchange = send(&client, &prepared, body, timeouts).await?;
    let mut whole = exchange.read_whole(max_decoded).await?;
    Ok(Whole {
        head: Head::fetched(&mut whole),
        body: whole.body,
        elapsed: whole.elapsed.as_secs_f64(),
    })
}

/// A response head with its body still on the connection.
struct Opened {
    result: Result<AsyncExchange, Error>,
    max_decoded_size: u64,
    source_error: Option<SourceError>,
}

impl Complete for Opened {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let exchange = self
            .result
            .map_err(|e| failure(py, e, url, self.source_error.as_ref()))?;
        let stream = AsyncRawStream::new(py, exchange, url, self.max_decoded_size)?;
        Ok(Py::new(py, stream)?.into_any())
    }
}

#[pymethods]
impl AsyncEngine {
    /// An engine with the settings of `options` (a `_core.EngineOptions`).
    #[new]
    fn new(options: PyRef<'_, EngineOptions>) -> PyResult<Self> {
        let client = AsyncClient::with_dial(
            options.pool,
            options.tls.clone(),
            options.http2,
            &options.proxies,
            options.dial.clone(),
        )
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(AsyncEngine {
            client,
            max_decoded_size: options.max_decoded_size,
            timeouts: SharedMemo::default(),
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
        start(py, url, async move {
            Fetched {
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
        start(py, url, async move {
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
        let timeouts = self
            .timeouts
            .get(timeout.as_any(), |t| timeouts(t.cast()?))?;
        let header_items: Vec<Bound<'_, PyAny>> = headers.iter().collect();
        let pairs = str_pairs(&header_items, "headers")?;
        let body = BodyArg::of(body)?;
        let parts = RequestParts {
            method: method.to_str()?,
            url: url.to_str()?,
            headers: &pairs,
            body: body.bytes(),
        };
        let fail = |e| error(py, e, url);
        if let BodyArg::Upload(upload) = body {
            let prepared = self
                .client
                .prepare_streamed(&parts, upload.get().framing())
                .map_err(fail)?;
            let slot = SourceError::default();
            let pump = pump(upload.clone().unbind(), Arc::clone(&slot));
            return Ok((prepared, Body::Streamed(pump), Some(slot), timeouts));
        }
        let prepared = self.client.prepare(&parts).map_err(fail)?;
        let body = body
            .bytes()
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
