//! `_core.AsyncEngine`: the async twin of `Engine`. Arguments are extracted
//! and the request prepared with the GIL held (cheap, no I/O), everything the
//! network part needs is moved into an owned tokio task, and an asyncio
//! future is returned (see `bridge.rs`).

use std::path::PathBuf;

use nodelay_core::aio::{read_whole, AsyncClient, AsyncExchange};
use nodelay_core::decode::DEFAULT_MAX_DECODED_BYTES;
use nodelay_core::{prepare, Error, PoolConfig, RequestParts, Timeouts, TlsOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::aio::bridge::{spawn, Complete};
use crate::aio::stream::AsyncRawStream;
use crate::engine::{seconds, str_pairs, TimeoutTuple};
use crate::errors::to_py_err;
use crate::head::Head;
use crate::response::RawResponse;
use crate::signals::SignalCheck;

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct AsyncEngine {
    client: AsyncClient,
    /// Cap on a decoded (decompressed) body, in bytes.
    max_decoded_size: u64,
}

fn timeouts(t: TimeoutTuple) -> PyResult<Timeouts> {
    Ok(Timeouts {
        connect: seconds("connect", t.0)?,
        read: seconds("read", t.1)?,
        write: seconds("write", t.2)?,
        pool: seconds("pool", t.3)?,
        total: seconds("total", t.4)?,
    })
}

/// An engine error as the exception for a request to `url`.
pub(crate) fn error(py: Python<'_>, e: Error, url: &Bound<'_, PyString>) -> PyErr {
    to_py_err(py, e, url, &SignalCheck::default())
}

/// A whole response read on the runtime (connection already given back):
/// head, body and seconds elapsed; built into a `RawResponse`.
struct Whole(Result<(Head, Vec<u8>, f64), Error>);

impl Complete for Whole {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let (head, content, elapsed) = self.0.map_err(|e| error(py, e, url))?;
        let content = PyBytes::new(py, &content);
        Ok(Py::new(py, RawResponse::new(head, url, content, elapsed))?.into_any())
    }
}

/// Sends, reads the whole body, and gives the connection back.
async fn fetch_whole(
    client: AsyncClient,
    prepared: nodelay_core::Prepared,
    body: Option<Vec<u8>>,
    timeouts: Timeouts,
    max_decoded: u64,
) -> Result<(Head, Vec<u8>, f64), Error> {
    let exchange = client.send(&prepared, body.as_deref(), timeouts).await?;
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
}

impl Complete for Opened {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let exchange = self.result.map_err(|e| error(py, e, url))?;
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
        max_keepalive=Some(20),
        keepalive_expiry=Some(5.0),
        verify=true,
        ca_file=None,
        cert_file=None,
        key_file=None,
        max_decoded_size=DEFAULT_MAX_DECODED_BYTES,
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
    ) -> PyResult<Self> {
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
        Ok(AsyncEngine {
            client: AsyncClient::with_tls(pool, tls),
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
        body: Option<&Bound<'py, PyBytes>>,
        timeout: TimeoutTuple,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (prepared, body, timeouts) = self.prepare(py, method, url, headers, body, timeout)?;
        let client = self.client.clone();
        let max_decoded = self.max_decoded_size;
        spawn(py, url, async move {
            Whole(fetch_whole(client, prepared, body, timeouts, max_decoded).await)
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
        body: Option<&Bound<'py, PyBytes>>,
        timeout: TimeoutTuple,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (prepared, body, timeouts) = self.prepare(py, method, url, headers, body, timeout)?;
        let client = self.client.clone();
        let max_decoded_size = self.max_decoded_size;
        spawn(py, url, async move {
            Opened {
                result: client.send(&prepared, body.as_deref(), timeouts).await,
                max_decoded_size,
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
    /// Validates and encodes the request with the GIL held (no I/O). The
    /// body is copied only when it is too large to ride in the encoded head.
    #[allow(clippy::type_complexity)]
    fn prepare(
        &self,
        py: Python<'_>,
        method: &Bound<'_, PyString>,
        url: &Bound<'_, PyString>,
        headers: &Bound<'_, PyList>,
        body: Option<&Bound<'_, PyBytes>>,
        timeout: TimeoutTuple,
    ) -> PyResult<(nodelay_core::Prepared, Option<Vec<u8>>, Timeouts)> {
        let timeouts = timeouts(timeout)?;
        let header_items: Vec<Bound<'_, PyAny>> = headers.iter().collect();
        let pairs = str_pairs(&header_items, "headers")?;
        let body_bytes = body.map(|b| b.as_bytes());
        let prepared = prepare(&RequestParts {
            method: method.to_str()?,
            url: url.to_str()?,
            headers: &pairs,
            body: body_bytes,
        })
        .map_err(|e| error(py, e, url))?;
        let body = body_bytes
            .filter(|_| !prepared.body_inlined())
            .map(<[u8]>::to_vec);
        Ok((prepared, body, timeouts))
    }
}
