//! Engine errors → the most specific exception class of `nodelay._exceptions`,
//! for every path (sync, async, batch, streams): the class comes from the
//! front's stable error code, the exception carries the URL, and the hot
//! path's errors also carry their request.

use std::sync::{Arc, Mutex};

use nodelay_core::Error;
use nodelay_front::ErrorCode;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::response::make_request;
use crate::signals::SignalCheck;

static EXCEPTIONS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn class_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::InvalidUrl => "InvalidURL",
        ErrorCode::UnsupportedProtocol => "UnsupportedProtocol",
        ErrorCode::LocalProtocol => "LocalProtocolError",
        ErrorCode::ConnectTimeout => "ConnectTimeout",
        ErrorCode::ReadTimeout => "ReadTimeout",
        ErrorCode::WriteTimeout => "WriteTimeout",
        ErrorCode::PoolTimeout => "PoolTimeout",
        ErrorCode::Connect => "ConnectError",
        ErrorCode::Tls => "TLSError",
        ErrorCode::Proxy => "ProxyError",
        ErrorCode::Read => "ReadError",
        ErrorCode::Write => "WriteError",
        ErrorCode::RemoteProtocol => "RemoteProtocolError",
        ErrorCode::HeaderTooLarge => "HeaderTooLarge",
        ErrorCode::Decoding => "DecodingError",
        // A body source's Python exception is re-raised as is; this class
        // only shows when that exception was lost.
        ErrorCode::Ok | ErrorCode::Interrupted | ErrorCode::Closed | ErrorCode::BodySource => {
            "TransportError"
        }
    }
}

/// Builds the Python exception for `err` on a request to `url`. An
/// interruption re-raises what the signal handler raised (KeyboardInterrupt).
pub(crate) fn to_py_err(
    py: Python<'_>,
    err: Error,
    url: &Bound<'_, PyString>,
    signals: &SignalCheck,
) -> PyErr {
    if err.is_interrupted() {
        return signals
            .take()
            .unwrap_or_else(|| PyKeyboardInterrupt::new_err(()));
    }
    let build = || -> PyResult<PyErr> {
        let module = EXCEPTIONS
            .get_or_try_init(py, || py.import("nodelay._exceptions").map(|m| m.unbind()))?;
        let class = module.bind(py).getattr(class_name(ErrorCode::of(&err)))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("url", url)?;
        if err.is_proxy_unreachable() {
            kwargs.set_item(intern!(py, "proxy_unreachable"), true)?;
        }
        let exc = class.call((err.message(),), Some(&kwargs))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| {
        PyRuntimeError::new_err(format!(
            "{err} (and mapping it to a Python exception failed: {e})"
        ))
    })
}

/// An engine error of a request made off the caller's thread (on the
/// runtime), where no signal handler could have run.
pub(crate) fn error(py: Python<'_>, e: Error, url: &Bound<'_, PyString>) -> PyErr {
    to_py_err(py, e, url, &SignalCheck::default())
}

/// The Python exception that stopped a streamed request body (raised by its
/// iterator or file, or `StreamConsumed`), kept where the pump that pulled
/// it can put it: re-raised as is instead of the engine's error.
pub(crate) type SourceError = Arc<Mutex<Option<PyErr>>>;

/// The engine's error as the exception to raise: the body source's own
/// exception when it stopped the request.
pub(crate) fn failure(
    py: Python<'_>,
    e: Error,
    url: &Bound<'_, PyString>,
    source: Option<&SourceError>,
) -> PyErr {
    source
        .and_then(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take())
        .unwrap_or_else(|| error(py, e, url))
}

/// An engine error with its `request` filled in (`Request._make` of the
/// request reference `(method, url, headers, body)`) when it is a
/// `RequestError` without one, as the client does for every request it sends.
pub(crate) fn with_request(py: Python<'_>, err: PyErr, request: &Bound<'_, PyTuple>) -> PyErr {
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
