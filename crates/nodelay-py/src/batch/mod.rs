//! `_core.request_many`: many requests at once for sync callers
//! (`Client.get_many` / `Client.map`, python/nodelay/_batch.py).
//!
//! The arguments are copied into owned Rust values, then `concurrency`
//! runners each take the next request index from a shared counter, run that
//! request without the GIL and store its outcome in that index's slot. The
//! calling thread waits for the last runner with the GIL released, waking
//! every `SIGNAL_CHECK_INTERVAL` to run Python's signal handlers (Ctrl-C), and
//! takes the GIL once at the end to build every response, in input order.
//!
//! The runners are futures on the process runtime (`tasks.rs`): HTTP/1.1 on
//! the async driver, HTTP/2 multiplexed on the client's shared connection, so
//! 32 requests in flight cost no OS thread each. A client with proxies keeps
//! the OS-thread runners over the blocking engine (`threads.rs`): the async
//! driver connects directly only.

mod tasks;
mod threads;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use nodelay_core::{EncodedHeaders, Error, SIGNAL_CHECK_INTERVAL};
use nodelay_front::assembly::assemble;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::args::{str_pairs, timeouts};
use crate::cookies::{has_cookie_field, CookieJar};
use crate::engine::Engine;
use crate::errors::error;
use crate::head::Head;
use crate::memo::SameObject;
// A response read whole by a runner; Python objects are built later.
use crate::response::Whole as Done;

/// Upper bound on requests in flight per batch, whatever `concurrency` asks
/// for: each one usually holds its own connection (and, on the threaded path
/// of proxied clients, an OS thread); more than this is a misuse that would
/// exhaust the process's descriptors.
pub(crate) const MAX_BATCH_CONCURRENCY: usize = 1024;

/// One request, owned (the runners outlive no Python object but run without
/// the GIL, so nothing here may borrow from Python).
struct Job {
    /// Shared by consecutive requests given the same method object.
    method: Arc<str>,
    /// Shared by consecutive requests given the same URL object (a batch
    /// polling one URL copies it once).
    url: Arc<str>,
    /// Shared by consecutive requests that passed the same header list.
    headers: SharedHeaders,
    body: Option<Vec<u8>>,
}

/// Header fields of a job, shared by the jobs given the same list.
struct HeaderSet {
    pairs: Vec<(String, String)>,
    /// The fields validated and encoded once, for a client whose requests
    /// all go out as direct HTTP/1.1 (`Client::prepare_encoded`); `None`:
    /// each request encodes them (and reports a bad field itself).
    encoded: Option<EncodedHeaders>,
    /// The list has its own `Cookie` field (the jar's is then not added).
    has_cookie: bool,
}

type SharedHeaders = Arc<HeaderSet>;

type Outcome = Result<Done, Error>;

/// Everything the runners share.
struct Batch {
    engine: Py<Engine>,
    jar: Option<Py<CookieJar>>,
    jobs: Vec<Job>,
    timeouts: nodelay_core::Timeouts,
    /// The next job index to take.
    next: AtomicUsize,
    /// Set on Ctrl-C, or on the first failure when `stop_on_error`: no new
    /// request starts, and a blocking call interrupted by a signal gives up.
    cancel: AtomicBool,
    stop_on_error: bool,
    /// Outcome of each job, by index (each slot is written once, by one runner).
    outcomes: Vec<Mutex<Option<Outcome>>>,
    /// A response's Set-Cookie fields changed the jar.
    cookies_changed: AtomicBool,
}

impl Batch {
    /// The next job to run, unless the batch is cancelled or all are taken.
    fn take_next(&self) -> Option<(usize, &Job)> {
        if self.cancel.load(Ordering::Relaxed) {
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        self.jobs.get(index).map(|job| (index, job))
    }

    /// Stores a job's outcome; a failure stops the batch when asked to.
    fn store(&self, index: usize, outcome: Outcome) {
        if outcome.is_err() && self.stop_on_error {
            self.cancel.store(true, Ordering::Relaxed);
        }
        *self.outcomes[index]
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(outcome);
    }

    /// The jar's `Cookie` value for `job` (read as the request starts), unless
    /// the request carries its own `Cookie` header or there is no jar.
    fn cookie_for(&self, job: &Job) -> Option<String> {
        let jar = self.jar.as_ref()?.get();
        jar.cookie_for(&job.url, || Ok(job.headers.has_cookie))
            .ok()
            .flatten()
    }

    /// Stores the response's Set-Cookie fields in the jar.
    fn store_cookies(&self, head: &Head, job: &Job) {
        if let Some(jar) = &self.jar {
            if jar.get().store_head(head, Some(&job.url)) {
                self.cookies_changed.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// `(name, value)` views of a job's headers plus the jar's cookie, assembled
/// by the front's rule (`nodelay_front::assembly`); the client's default
/// fields are already in the job's list (the package put them there).
fn header_pairs<'a>(job: &'a Job, cookie: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(job.headers.pairs.len() + 1);
    pairs.extend(
        job.headers
            .pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str())),
    );
    assemble(&mut pairs, cookie, []);
    pairs
}

/// Runners still running; the last one to finish wakes the caller. One
/// wake-up per batch: a message per response would wake the waiting thread
/// (and switch to it) a thousand times for a thousand requests.
struct Running {
    count: Mutex<usize>,
    all_done: Condvar,
}

impl Running {
    fn new(count: usize) -> Arc<Self> {
        Arc::new(Running {
            count: Mutex::new(count),
            all_done: Condvar::new(),
        })
    }

    fn finished_one(&self) {
        let mut count = self.count.lock().unwrap_or_else(|p| p.into_inner());
        *count -= 1;
        if *count == 0 {
            self.all_done.notify_all();
        }
    }
}

/// Copies `(method, url, headers, body)` tuples into owned jobs. `encode`:
/// also encode each distinct header list once (see `HeaderSet::encoded`).
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
            let encoded = encode.then(|| EncodedHeaders::new(&views).ok()).flatten();
            Ok(Arc::new(HeaderSet {
                pairs: views
                    .iter()
                    .map(|&(n, v)| (n.to_owned(), v.to_owned()))
                    .collect(),
                encoded,
                has_cookie: has_cookie_field(items.iter().cloned())?,
            }))
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
    let threaded = engine.get().client.has_proxies();
    let encode = engine.get().client.is_direct_http1();
    let batch = Arc::new(Batch {
        engine,
        jar,
        jobs: jobs(requests, encode)?,
        timeouts: timeouts(timeout)?,
        next: AtomicUsize::new(0),
        cancel: AtomicBool::new(false),
        stop_on_error,
        outcomes: (0..requests.len()).map(|_| Mutex::new(None)).collect(),
        cookies_changed: AtomicBool::new(false),
    });
    let n = batch.jobs.len();
    if n > 0 {
        let runners = concurrency.min(n);
        if threaded {
            threads::run(py, &batch, runners)?;
        } else {
            tasks::run(py, &batch, runners)?;
        }
    }
    let outcomes = batch
        .outcomes
        .iter()
        .map(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take());
    let mut all_ok = true;
    let mut any_3xx = false;
    let mut items = Vec::with_capacity(n);
    for (outcome, item) in outcomes.into_iter().zip(requests.iter()) {
        let url = item
            .cast::<PyTuple>()?
            .get_item(1)?
            .cast_into::<PyString>()?;
        match outcome {
            Some(Ok(done)) => {
                any_3xx |= (300..400).contains(&done.head.status());
                items.push(Bound::new(py, done.into_raw(&url))?.into_any());
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
    let cookies_changed = batch.cookies_changed.load(Ordering::Relaxed);
    Ok((PyList::new(py, items)?, all_ok, cookies_changed, any_3xx))
}

/// Waits until every runner is done, running Python's signal handlers every
/// `SIGNAL_CHECK_INTERVAL`; their exception cancels the batch and is returned.
fn wait(py: Python<'_>, running: &Running, cancel: &AtomicBool) -> PyResult<()> {
    loop {
        let finished = py.detach(|| {
            let count = running.count.lock().unwrap_or_else(|p| p.into_inner());
            let (count, _) = running
                .all_done
                .wait_timeout_while(count, SIGNAL_CHECK_INTERVAL, |c| *c > 0)
                .unwrap_or_else(|p| p.into_inner());
            *count == 0
        });
        if finished {
            return Ok(());
        }
        if let Err(err) = py.check_signals() {
            cancel.store(true, Ordering::Relaxed);
            return Err(err);
        }
    }
}
