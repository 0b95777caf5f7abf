//! `nodelay._core`: the only crate that knows Python. It converts arguments,
//! releases the GIL around all network work and maps engine errors to the
//! exception classes defined in `nodelay/_exceptions.py`.

use pyo3::prelude::*;

mod body;
mod engine;
mod errors;
mod response;
mod server;
mod signals;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<engine::Engine>()?;
    m.add_class::<response::RawResponse>()?;
    m.add_class::<server::TestServer>()?;
    m.add_function(wrap_pyfunction!(server::serve, m)?)?;
    Ok(())
}
