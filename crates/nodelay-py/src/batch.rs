//! `_core.request_many`: many requests at once for sync callers
//! (`Client.get_many` / `Client.map`, python/nodelay/_batch.py).
//!
//! The arguments are copied into owned Rust values, then worker threads each
//! take the next request index from a shared counter and drive the blocking
//! engine (the same pool as `Engine.request`), all without the GIL, and stores
//! its outcome in that index's slot. The calling thread waits for the last
//! worker with the GIL released, waking every `SIGNAL_POLL_INTERVAL` to run
//! Python's signal handlers (Ctrl-C), and takes the GIL once at the end to
//! build every response.
//!
//! The workers own what they use (an `Arc` of the batch), so Ctrl-C returns at
//! once: requests not started are never sent, and those in flight finish (or
//! time out) in the background and are dropped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use nodelay_core::decode::decode;
use nodelay_core::{Error, Interrupt, RequestParts, Timeouts};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::cookies::CookieJar;
use crate::engine::{timeouts, Engine, TimeoutTuple};
use crate::errors::to_py_err;
use crate::head::Head;
use crate::response::RawResponse;
use crate::signals::SignalCheck;

/// How long the waiting thread sleeps before it runs Python's signal handlers
/// again: the worst-case delay between Ctrl-C and `KeyboardInterrupt`. Short
/// enough to feel immediate, long enough to cost nothing (one wake-up per
/// 50 ms while the workers run).
const SIGNAL_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Upper bound on worker threads per batch, whatever `concurrency` asks for:
/// each one is an OS thread with its own stack and (usually) its own
/// connection; more than this is a misuse that would exhaust the process.
pub(crate) const MAX_BATCH_CONCURRENCY: usize = 1024;

/// Stack of a worker thread, in bytes. The engine's call depth is shallow
/// (no recursion); 256 KiB leaves room for TLS handshakes and decompression
/// state kept on the stack.
const WORKER_STACK_BYTES: usize = 256 * 1024;

/// One request, owned (the workers outlive no Python object but run without
/// the GIL, so nothing here may borrow from Python).
struct Job {
    method: String,
    url: String,
    /// Shared by consecutive requests that passed the same header list.
    headers: SharedHeaders,
    body: Option<Vec<u8>>,
}

/// Header fields of a job, shared by the jobs given the same list.
type SharedHeaders = Arc<[(String, String)]>;

/// A response read whole by a worker; Python objects are built later.
struct Done {
    head: Head,
    body: Vec<u8>,
    elapsed: f64,
}

type Outcome = Result<Done, Error>;

/// Everything the workers share.
struct Batch {
    engine: Py<Engine>,
    jar: Option<Py<CookieJar>>,
    jobs: Vec<Job>,
    timeouts: Timeouts,
    /// The next job index to take.
    next: AtomicUsize,
    /// Set on Ctrl-C, or on the first failure when `stop_on_error`: no new
    /// request starts, and a blocking call interrupted by a signal gives up.
    cancel: AtomicBool,
    stop_on_error: bool,
    /// Outcome of each job, by index (each slot is written once, by one worker).
    outcomes: Vec<Mutex<Option<Outcome>>>,
}

/// Workers still running; the last one to finish wakes the caller. One
/// wake-up per batch: a message per response would wake the waiting thread
/// (and switch to it) a thousand times for a thousand requests.
struct Running {
    count: Mutex<usize>,
    all_done: Condvar,
}

impl Running {
    fn finished_one(&self) {
        let mut count = self.count.lock().unwrap_or_else(|p| p.into_inner());
        *count -= 1;
        if *count == 0 {
            self.all_done.notify_all();
        }
    }
}

impl Interrupt for Batch {
    // Workers never touch the GIL: a signal landing on a worker thread only
    // matters if the batch is being cancelled (the waiting thread runs the
    // Python handlers).
    fn should_abort(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

impl Batch {
    /// Worker loop: take the next index, run it, store its outcome.
    fn work(&self) {
        while !self.cancel.load(Ordering::Relaxed) {
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = self.jobs.get(index) else {
                return;
            };
            let outcome = self.run(job);
            if outcome.is_err() && self.stop_on_error {
                self.cancel.store(true, Ordering::Relaxed);
            }
            *self.outcomes[index]
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(outcome);
        }
    }

    /// One request, as `Engine.request` does it, without the GIL: the jar's
    /// Cookie header (unless the request has one), send, read and decode
    /// the body, store Set-Cookie fields, give the connection back.
    fn run(&self, job: &Job) -> Outcome {
        let engine = self.engine.get();
        let jar = self.jar.as_ref().map(|j| j.get());
        let cookie = jar
            .filter(|_| {
                !job.headers
                    .iter()
                    .any(|(name, _)| name.eq_ignore_ascii_case("cookie"))
            })
            .and_then(|jar| jar.header_for(&job.url));
        let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(job.headers.len() + 1);
        pairs.extend(job.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        if let Some(value) = &cookie {
            pairs.push(("Cookie", value.as_str()));
        }
        let body = job.body.as_deref();
        let parts = RequestParts {
            method: &job.method,
            url: &job.url,
            headers: &pairs,
            body,
        };
        let client = &engine.client;
        let prepared = client.prepare(&parts)?;
        let mut exchange = client.send(&prepared, body, self.timeouts, self)?;
        let codings = exchange.content_codings()?.filter(|c| !c.is_empty());
        let mut out = Vec::new();
        match (&codings, exchange.content_length()) {
            (None, Some(len)) if len <= nodelay_core::limits::EXACT_PREALLOC_MAX_BYTES => {
                out.resize(len as usize, 0);
                exchange.read_exact_into(&mut out, self)?;
            }
            _ => exchange.read_to_end(&mut out, self)?,
        }
        if let Some(codings) = codings.filter(|_| !out.is_empty()) {
            out = decode(&codings, out, engine.max_decoded_size)?;
        }
        let elapsed = exchange.started().elapsed().as_secs_f64();
        let head = Head::take(&mut exchange);
        exchange.finish();
        if let Some(jar) = jar {
            jar.store_head(&head, Some(&job.url));
        }
        Ok(Done {
            head,
            body: out,
            elapsed,
        })
    }
}

/// Copies `(method, url, headers, body)` tuples into owned jobs.
fn jobs(requests: &Bound<'_, PyList>) -> PyResult<Vec<Job>> {
    let mut jobs = Vec::with_capacity(requests.len());
    // Consecutive requests usually share one header list object (the
    // client's defaults): convert it once.
    let mut last: Option<(Bound<'_, PyAny>, SharedHeaders)> = None;
    for item in requests.iter() {
        let tuple = item.cast::<PyTuple>()?;
        if tuple.len() != 4 {
            return Err(PyValueError::new_err(
                "requests must be (method, url, headers, body) tuples",
            ));
        }
        let method: String = tuple.get_item(0)?.extract()?;
        let url: String = tuple.get_item(1)?.extract()?;
        let header_list = tuple.get_item(2)?;
        let headers = match &last {
            Some((obj, shared)) if obj.is(&header_list) => shared.clone(),
            _ => {
                let owned: Vec<(String, String)> = header_list.extract()?;
                let shared: SharedHeaders = owned.into();
                last = Some((header_list, shared.clone()));
                shared
            }
        };
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
/// stopped at a failure with `stop_on_error`). See `_core.pyi`.
#[pyfunction]
#[pyo3(signature = (engine, requests, timeout, *, concurrency, jar=None, stop_on_error=true))]
pub(crate) fn request_many<'py>(
    py: Python<'py>,
    engine: Py<Engine>,
    requests: &Bound<'py, PyList>,
    timeout: TimeoutTuple,
    concurrency: usize,
    jar: Option<Py<CookieJar>>,
    stop_on_error: bool,
) -> PyResult<Bound<'py, PyList>> {
    if concurrency == 0 || concurrency > MAX_BATCH_CONCURRENCY {
        return Err(PyValueError::new_err(format!(
            "concurrency must be between 1 and {MAX_BATCH_CONCURRENCY}, got {concurrency}"
        )));
    }
    let batch = Arc::new(Batch {
        engine,
        jar,
        jobs: jobs(requests)?,
        timeouts: timeouts(timeout)?,
        next: AtomicUsize::new(0),
        cancel: AtomicBool::new(false),
        stop_on_error,
        outcomes: (0..requests.len()).map(|_| Mutex::new(None)).collect(),
    });
    let n = batch.jobs.len();
    if n > 0 {
        run_workers(py, &batch, concurrency.min(n))?;
    }
    let outcomes = batch
        .outcomes
        .iter()
        .map(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take());
    let list = PyList::empty(py);
    let signals = SignalCheck::default();
    for (outcome, item) in outcomes.into_iter().zip(requests.iter()) {
        let url = item
            .cast::<PyTuple>()?
            .get_item(1)?
            .cast_into::<PyString>()?;
        match outcome {
            Some(Ok(done)) => {
                let content = PyBytes::new(py, &done.body);
                let raw = RawResponse::new(done.head, &url, content, done.elapsed);
                list.append(Bound::new(py, raw)?)?;
            }
            // Interrupted: the batch was cancelled while this one waited.
            Some(Err(e)) if !e.is_interrupted() => {
                list.append(to_py_err(py, e, &url, &signals).into_value(py))?;
            }
            Some(Err(_)) | None => list.append(py.None())?,
        }
    }
    Ok(list)
}

/// Starts the workers and waits for them with the GIL released; a Python
/// signal handler's exception (Ctrl-C) cancels the batch and is returned at
/// once (the workers finish what they are doing in the background).
fn run_workers(py: Python<'_>, batch: &Arc<Batch>, workers: usize) -> PyResult<()> {
    let running = Arc::new(Running {
        count: Mutex::new(workers),
        all_done: Condvar::new(),
    });
    for started in 0..workers {
        let worker = Arc::clone(batch);
        let done = Arc::clone(&running);
        let spawned = thread::Builder::new()
            .name("nodelay-batch".into())
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || {
                worker.work();
                // Release our share of the batch before the caller learns we
                // are done, so its Python handles are dropped by the caller
                // (with the GIL) in the usual case.
                drop(worker);
                done.finished_one();
            });
        if let Err(e) = spawned {
            batch.cancel.store(true, Ordering::Relaxed);
            for _ in started..workers {
                running.finished_one();
            }
            wait(py, &running, &batch.cancel)?;
            return Err(PyRuntimeError::new_err(format!(
                "cannot start a thread: {e}"
            )));
        }
    }
    wait(py, &running, &batch.cancel)
}

/// Waits until every worker is done, running Python's signal handlers every
/// `SIGNAL_POLL_INTERVAL`; their exception cancels the batch.
fn wait(py: Python<'_>, running: &Running, cancel: &AtomicBool) -> PyResult<()> {
    loop {
        let finished = py.detach(|| {
            let count = running.count.lock().unwrap_or_else(|p| p.into_inner());
            let (count, _) = running
                .all_done
                .wait_timeout_while(count, SIGNAL_POLL_INTERVAL, |c| *c > 0)
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
