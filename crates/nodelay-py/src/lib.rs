//! `nodelay._core`: the only crate that knows Python. It converts arguments,
//! releases the GIL around all network work and maps engine errors to the
//! exception classes defined in `nodelay/_exceptions.py`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

mod aio;
mod args;
mod batch;
mod body;
mod cookies;
mod engine;
mod errors;
mod head;
mod json;
mod memo;
mod response;
mod server;
mod signals;
mod stream;
mod timing;
mod upload;

/// nodelay-front's table of client defaults as a dict, name → value: what
/// `nodelay._config` and the rest of the package read (`_core.pyi`).
fn defaults_table(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use nodelay_front::defaults::{Value, TABLE};
    let table = PyDict::new(py);
    for (name, value) in TABLE {
        match *value {
            Value::Seconds(seconds) => table.set_item(name, seconds)?,
            Value::Count(count) => table.set_item(name, count)?,
            Value::Text(text) => table.set_item(name, text)?,
        }
    }
    Ok(table)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULTS", defaults_table(m.py())?)?;
    m.add_class::<args::EngineOptions>()?;
    m.add_class::<engine::Engine>()?;
    m.add_class::<aio::AsyncEngine>()?;
    m.add_class::<aio::AsyncRawStream>()?;
    m.add_class::<response::RawResponse>()?;
    m.add_class::<stream::RawStream>()?;
    m.add_class::<upload::Upload>()?;
    m.add_class::<cookies::CookieJar>()?;
    m.add_class::<server::TestServer>()?;
    m.add_function(wrap_pyfunction!(server::serve, m)?)?;
    m.add_function(wrap_pyfunction!(server::test_ca_pem, m)?)?;
    m.add_function(wrap_pyfunction!(engine::form_encode, m)?)?;
    m.add_function(wrap_pyfunction!(engine::form_encode_dict, m)?)?;
    m.add_function(wrap_pyfunction!(response::use_models, m)?)?;
    m.add_function(wrap_pyfunction!(response::whole_response, m)?)?;
    m.add_function(wrap_pyfunction!(batch::request_many, m)?)?;
    m.add(
        "MAX_BATCH_CONCURRENCY",
        nodelay_front::batch::MAX_BATCH_CONCURRENCY,
    )?;
    m.add_function(wrap_pyfunction!(json::json_loads, m)?)?;
    m.add_function(wrap_pyfunction!(timing::record_connect_timings, m)?)?;
    m.add_function(wrap_pyfunction!(timing::take_connect_timings, m)?)?;
    Ok(())
}
