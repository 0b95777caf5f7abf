//! The engine's opt-in connect timings (core `timing`), for `nodelay get -v`.

use pyo3::prelude::*;

/// Starts (or stops) recording how long opening each connection takes.
#[pyfunction]
pub(crate) fn record_connect_timings(on: bool) {
    nodelay_core::timing::record_connect_timings(on);
}

/// `(dns, tcp, tls)` seconds of the last connection opened since the previous
/// call (`tls` is `None` for cleartext, `dns` when the lookup was not timed
/// apart from the connect), or `None` when none was opened (the
/// request reused a connection) or recording is off.
#[pyfunction]
pub(crate) fn take_connect_timings() -> Option<(Option<f64>, f64, Option<f64>)> {
    nodelay_core::timing::take_connect_timings().map(|t| {
        (
            t.dns.map(|d| d.as_secs_f64()),
            t.tcp.as_secs_f64(),
            t.tls.map(|d| d.as_secs_f64()),
        )
    })
}
