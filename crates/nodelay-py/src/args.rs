//! Python arguments → engine values, written once for `Engine`,
//! `AsyncEngine` and `request_many`: the engine options, header pairs
//! (borrowed, no copies), the request body, and timeout tuples.

use std::path::PathBuf;
use std::time::Duration;

use nodelay_core::{Dial, Http2Mode, PoolConfig, ProxySettings, RateLimit, Timeouts, TlsOptions};
use nodelay_front::defaults;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};

use crate::upload::Upload;

/// `_core.EngineOptions(...)`: the settings of an `Engine` or an
/// `AsyncEngine`, checked once when built. The keyword arguments exist only
/// here (and in `_core.pyi`); both engines take the built object.
#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct EngineOptions {
    pub pool: PoolConfig,
    pub tls: TlsOptions,
    pub http2: Http2Mode,
    pub proxies: ProxySettings,
    /// Cap on a decoded (decompressed) body, in bytes.
    pub max_decoded_size: u64,
    /// `uds=` and `local_address=` (httpx's `HTTPTransport`).
    pub dial: Dial,
}

/// The sizes below are counts; `None` is unbounded. The defaults are
/// nodelay-front's table (`nodelay_front::defaults`).
#[pymethods]
impl EngineOptions {
    #[new]
    #[pyo3(signature = (
        *,
        max_connections=Some(defaults::MAX_CONNECTIONS as usize),
        max_keepalive=Some(defaults::MAX_KEEPALIVE as usize),
        keepalive_expiry=Some(defaults::KEEPALIVE_EXPIRY_SECS),
        verify=true,
        ca_file=None,
        ca_dir=None,
        trust_store_env=true,
        cert_file=None,
        key_file=None,
        max_decoded_size=defaults::MAX_DECODED_SIZE,
        http_proxy=None,
        https_proxy=None,
        no_proxy=None,
        http2="off",
        uds=None,
        local_address=None,
        max_connections_per_host=None,
        rate_per_second=None,
        rate_burst=None,
        rate_per_host=true,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        max_connections: Option<usize>,
        max_keepalive: Option<usize>,
        keepalive_expiry: Option<f64>,
        verify: bool,
        ca_file: Option<PathBuf>,
        ca_dir: Option<PathBuf>,
        trust_store_env: bool,
        cert_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        max_decoded_size: u64,
        http_proxy: Option<String>,
        https_proxy: Option<String>,
        no_proxy: Option<String>,
        http2: &str,
        uds: Option<PathBuf>,
        local_address: Option<String>,
        max_connections_per_host: Option<usize>,
        rate_per_second: Option<f64>,
        rate_burst: Option<u32>,
        rate_per_host: bool,
    ) -> PyResult<EngineOptions> {
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
        if max_connections_per_host == Some(0) {
            return Err(PyValueError::new_err(
                "max_connections_per_host must be at least 1",
            ));
        }
        let rate = rate_per_second
            .map(|per_second| RateLimit::new(per_second, rate_burst, rate_per_host))
            .transpose()
            .map_err(PyValueError::new_err)?;
        if key_file.is_some() && cert_file.is_none() {
            return Err(PyValueError::new_err("key_file needs cert_file"));
        }
        Ok(EngineOptions {
            pool: PoolConfig {
                max_connections,
                max_keepalive,
                keepalive_expiry: seconds("keepalive_expiry", keepalive_expiry)?,
                max_per_host: max_connections_per_host,
                rate,
            },
            tls: TlsOptions {
                verify,
                ca_file,
                ca_dir,
                trust_store_env,
                client_cert: cert_file,
                client_key: key_file,
            },
            http2,
            proxies: ProxySettings {
                http: http_proxy,
                https: https_proxy,
                no_proxy,
            },
            max_decoded_size,
            dial: dial(uds, local_address)?,
        })
    }
}

/// `uds=` and `local_address=` as the engine's `Dial`; a local address that
/// is not an IP address raises `ValueError`.
fn dial(uds: Option<PathBuf>, local_address: Option<String>) -> PyResult<Dial> {
    let local_address = match local_address {
        None => None,
        Some(text) => Some(text.parse().map_err(|_| {
            PyValueError::new_err(format!("local_address must be an IP address, got {text:?}"))
        })?),
    };
    Ok(Dial { uds, local_address })
}

/// A request body as given: none, bytes (borrowed), or a streamed `Upload`.
#[derive(Clone, Copy)]
pub(crate) enum BodyArg<'a, 'py> {
    None,
    Bytes(&'a [u8]),
    Upload(&'a Bound<'py, Upload>),
}

impl<'a, 'py> BodyArg<'a, 'py> {
    /// `None`, `bytes` or a `_core.Upload`; anything else is a TypeError.
    pub fn of(body: Option<&'a Bound<'py, PyAny>>) -> PyResult<Self> {
        let Some(body) = body.filter(|b| !b.is_none()) else {
            return Ok(BodyArg::None);
        };
        if let Ok(bytes) = body.cast::<PyBytes>() {
            return Ok(BodyArg::Bytes(bytes.as_bytes()));
        }
        body.cast::<Upload>()
            .map(BodyArg::Upload)
            .map_err(|_| PyTypeError::new_err("body must be bytes or a _core.Upload"))
    }

    /// The bytes of a body that is not streamed (`None` for no body).
    pub fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            BodyArg::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }
}

/// A number of seconds as a `Duration`; `name` names it in errors.
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
        return Err(PyTypeError::new_err(format!(
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
