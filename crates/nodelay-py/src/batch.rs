//! `_core.request_many`: many requests at once for sync callers
//! (`Client.get_many` / `Client.map`, python/nodelay/_batch.py), over the
//! front's batch runner (`nodelay_front::batch`).
//!
//! What is Python's here: the arguments are copied into owned jobs (the
//! same method, URL or header-list object given again is converted once),
//! the calling thread waits for the runners with the GIL released, waking
//! every `SIGNAL_CHECK_INTERVAL` to run Python's signal handlers (Ctrl-C
//! aborts the batch), and takes the GIL once at the end to build every
//! response, in input order.

use std::sync::Arc;

use nodelay_core::{Client, SIGNAL_CHECK_INTERVAL};
use nodelay_front::batch::{Batch, HeaderSet, Host, Job, MAX_BATCH_CONCURRENCY};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::args::{str_pairs, timeouts};
use crate::cookies::{has_cookie_field, CookieJar};
use crate::engine::Engine;
use crate::errors::error;
use crate::memo::SameObject;
// A response read whole by a runner; Python objects are built later.
use crate::response::Whole;

/// The engine and jar a batch uses, held (without the GIL) until the last
/// runner is done.
struct PyHost {
    engine: Py<Engine>,
    jar: Option<Py<CookieJar>>,
}

impl Host for PyHost {
    fn client(&self) -> &Client {
        &self.engine.get().client
    }

    fn max_decoded_size(&self) -> u64 {
        self.engine.get().max_decoded_size
    }

    fn jar(&self) -> Option<&nodelay_core::cookies::CookieJar> {
        self.jar.as_ref().map(|jar| jar.get().core())
    }
}

/// Copies `(method, url, headers, body)` tuples into owned jobs. `encode`:
/// also encode each distinct header list once (see `HeaderSet::new`).
fn jobs(requests: &Bound<'_, PyList>, encode: bool) -> PyResult<Vec<Job>> {
    let mut jobs = Vec::with_capacity(requests.len());
    // Consecutive requests usually pass the very same objects (one method
    // string, one URL polled, the client's header list): converted once.
    let mut methods = SameObject::default();
    let mut urls = SameObject::default();
    let mut header_sets = SameObject::default();
    let text = |obj: &Bound<'_, PyAny>| -> PyResult<Arc<str>> {
        Ok(obj.cast::<PyString>()?.to_str()?.into())
    };
    for item in requests.iter() {
        let tuple = item.cast::<PyTuple>()?;
        if tuple.len() != 4 {
            return Err(PyValueError::new_err(
                "requests must be (method, url, headers, body) tuples",
            ));
        }
        let method = methods.get(&tuple.get_item(0)?, text)?;
        let url = urls.get(&tuple.get_item(1)?, text)?;
        let headers = header_sets.get(&tuple.get_item(2)?, |list| {
            let items: Vec<Bound<'_, PyAny>> = list.try_iter()?.collect::<PyResult<_>>()?;
            let views = str_pairs(&items, "headers")?;
            let pairs = views
                .iter()
                .map(|&(n, v)| (n.to_owned(), v.to_owned()))
                .collect();
            let has_cookie = has_cookie_field(items.iter().cloned())?;
            Ok(Arc::new(HeaderSet::new(pairs, has_cookie, encode)))
        })?;
        let body = tuple.get_item(3)?;
        let body = if body.is_none() {
            None
        } else {
            Some(body.cast::<PyBytes>()?.as_bytes().to_vec())
        };
        jobs.push(Job {
            method,
            url,
            headers,
            body,
        });
    }
    Ok(jobs)
}

/// Sends every `(method, url, headers, body)` of `requests` with at most
/// `concurrency` in flight and returns, in input order, a `RawResponse`, an
/// exception instance (the request failed) or `None` (not sent: the batch
/// stopped at a failure with `stop_on_error`), plus what the caller would
/// otherwise look for in every item: `(results, all_ok, cookies_changed,
/// any_3xx)`. See `_core.pyi`.
#[pyfunction]
#[pyo3(signature = (engine, requests, timeout, *, concurrency, jar=None, stop_on_error=true))]
pub(crate) fn request_many<'py>(
    py: Python<'py>,
    engine: Py<Engine>,
    requests: &Bound<'py, PyList>,
    timeout: &Bound<'py, PyTuple>,
    concurrency: usize,
    jar: Option<Py<CookieJar>>,
    stop_on_error: bool,
) -> PyResult<(Bound<'py, PyList>, bool, bool, bool)> {
    if concurrency == 0 || concurrency > MAX_BATCH_CONCURRENCY {
        return Err(PyValueError::new_err(format!(
            "concurrency must be between 1 and {MAX_BATCH_CONCURRENCY}, got {concurrency}"
        )));
    }
    let encode = Batch::<PyHost>::encodes_headers(&engine.get().client);
    let jobs = jobs(requests, encode)?;
    let batch = Batch::new(
        PyHost { engine, jar },
        jobs,
        timeouts(timeout)?,
        None,
        stop_on_error,
    );
    let mut started = batch.start(concurrency);
    // The wait, one signal-check interval at a time without the GIL; a
    // Python signal handler's exception (Ctrl-C) aborts the batch and is
    // raised at once.
    while !py.detach(|| started.wait(SIGNAL_CHECK_INTERVAL)) {
        if let Err(err) = py.check_signals() {
            started.abort();
            return Err(err);
        }
    }
    if let Some(e) = started.spawn_error() {
        return Err(PyRuntimeError::new_err(format!(
            "cannot start a thread: {e}"
        )));
    }
    let outcomes = batch.take_outcomes();
    let mut all_ok = true;
    let mut any_3xx = false;
    let mut items = Vec::with_capacity(outcomes.len());
    for (outcome, item) in outcomes.into_iter().zip(requests.iter()) {
        let url = item
            .cast::<PyTuple>()?
            .get_item(1)?
            .cast_into::<PyString>()?;
        match outcome {
            Some(Ok(done)) => {
                any_3xx |= (300..400).contains(&done.head.status());
                let whole = Whole {
                    head: done.head,
                    body: done.body,
                    elapsed: done.elapsed.as_secs_f64(),
                };
                items.push(Bound::new(py, whole.into_raw(&url))?.into_any());
            }
            // Interrupted: the batch was cancelled while this one waited.
            Some(Err(e)) if !e.is_interrupted() => {
                all_ok = false;
                items.push(error(py, e, &url).into_value(py).into_bound(py).into_any());
            }
            Some(Err(_)) | None => {
                all_ok = false;
                items.push(py.None().into_bound(py));
            }
        }
    }
    let cookies_changed = batch.cookies_changed();
    Ok((PyList::new(py, items)?, all_ok, cookies_changed, any_3xx))
}
