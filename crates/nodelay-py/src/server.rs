//! The embedded server (crates/nodelay-server) for tests, the lab and
//! `nodelay serve`.

use std::path::PathBuf;

use nodelay_core::SIGNAL_CHECK_INTERVAL;
use nodelay_server::{run_until, start, ServerConfig, ServerHandle, TlsIdentity, TEST_CA_PEM};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct TestServer {
    handle: ServerHandle,
    #[pyo3(get)]
    url: String,
    #[pyo3(get)]
    port: u16,
}

#[pymethods]
impl TestServer {
    #[new]
    #[pyo3(signature = (host="127.0.0.1", port=0, workers=1, *, http2=false, tls=false, cert_file=None, key_file=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        host: &str,
        port: u16,
        workers: usize,
        http2: bool,
        tls: bool,
        cert_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
    ) -> PyResult<Self> {
        let config = ServerConfig {
            host: host.to_owned(),
            port,
            workers,
            http2,
            tls: identity(tls, cert_file, key_file)?,
        };
        let handle = py
            .detach(|| start(config))
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        let url = handle.url();
        let port = handle.addr().port();
        Ok(TestServer { handle, url, port })
    }

    /// TCP connections accepted since start.
    fn connections(&self) -> u64 {
        self.handle.connections_accepted()
    }

    /// Requests served since start.
    fn requests(&self) -> u64 {
        self.handle.requests_served()
    }

    fn close(&self, py: Python<'_>) {
        py.detach(|| self.handle.shutdown());
    }

    fn __repr__(&self) -> String {
        format!("<TestServer {}>", self.url)
    }
}

/// The server's TLS identity: none without `tls`; the given PEM files, or
/// the built-in `localhost` test certificate.
fn identity(
    tls: bool,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
) -> PyResult<Option<TlsIdentity>> {
    let read = |path: &PathBuf| {
        std::fs::read(path)
            .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", path.display())))
    };
    match (tls, cert_file) {
        (false, None) => Ok(None),
        (_, Some(cert)) => {
            let cert_chain_pem = read(&cert)?;
            let key_pem = read(key_file.as_ref().unwrap_or(&cert))?;
            Ok(Some(TlsIdentity {
                cert_chain_pem,
                key_pem,
            }))
        }
        (true, None) => Ok(Some(TlsIdentity::localhost())),
    }
}

/// PEM of the CA that signed the built-in test certificate (`tls=True`).
#[pyfunction]
pub(crate) fn test_ca_pem() -> &'static str {
    TEST_CA_PEM
}

/// Runs the embedded server until a Python signal handler raises (Ctrl-C).
#[pyfunction]
#[pyo3(signature = (host="127.0.0.1", port=0, workers=1, on_ready=None, *, http2=false, tls=false, cert_file=None, key_file=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    py: Python<'_>,
    host: &str,
    port: u16,
    workers: usize,
    on_ready: Option<Py<PyAny>>,
    http2: bool,
    tls: bool,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
) -> PyResult<()> {
    let config = ServerConfig {
        host: host.to_owned(),
        port,
        workers,
        http2,
        tls: identity(tls, cert_file, key_file)?,
    };
    let mut raised: Option<PyErr> = None;
    let mut ready_error: Option<PyErr> = None;
    let stop = async {
        loop {
            tokio::time::sleep(SIGNAL_CHECK_INTERVAL).await;
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                raised = Some(e);
                return;
            }
        }
    };
    let announce = |url: &str| {
        if let Some(callback) = &on_ready {
            if let Err(e) = Python::attach(|py| callback.call1(py, (url,)).map(drop)) {
                ready_error = Some(e);
            }
        }
    };
    py.detach(|| run_until(config, announce, stop))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    if let Some(e) = ready_error.or(raised) {
        return Err(e);
    }
    Ok(())
}
