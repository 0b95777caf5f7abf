//! Engine errors → the most specific exception class of `nodelay._exceptions`.

use nodelay_core::{Error, ErrorKind};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};

use crate::signals::SignalCheck;

static EXCEPTIONS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidUrl => "InvalidURL",
        ErrorKind::UnsupportedProtocol => "UnsupportedProtocol",
        ErrorKind::LocalProtocol => "LocalProtocolError",
        ErrorKind::ConnectTimeout => "ConnectTimeout",
        ErrorKind::ReadTimeout => "ReadTimeout",
        ErrorKind::WriteTimeout => "WriteTimeout",
        ErrorKind::PoolTimeout => "PoolTimeout",
        ErrorKind::Connect => "ConnectError",
        ErrorKind::Tls => "TLSError",
        ErrorKind::Proxy => "ProxyError",
        ErrorKind::Read => "ReadError",
        ErrorKind::Write => "WriteError",
        ErrorKind::RemoteProtocol => "RemoteProtocolError",
        ErrorKind::HeaderTooLarge => "HeaderTooLarge",
        ErrorKind::Decoding => "DecodingError",
        // A body source's Python exception is re-raised as is; this class
        // only shows when that exception was lost.
        ErrorKind::Interrupted | ErrorKind::Closed | ErrorKind::BodySource => "TransportError",
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
        let class = module.bind(py).getattr(class_name(err.kind()))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("url", url)?;
        let exc = class.call((err.message(),), Some(&kwargs))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| {
        PyRuntimeError::new_err(format!(
            "{err} (and mapping it to a Python exception failed: {e})"
        ))
    })
}
