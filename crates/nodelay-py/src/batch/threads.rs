//! The batch on OS threads over the blocking engine: what clients with
//! proxies use (routing, CONNECT tunnels and proxy TLS live in the sync
//! engine only). Each worker thread drives one request at a time.
//!
//! The workers own what they use (an `Arc` of the batch), so Ctrl-C returns at
//! once: requests not started are never sent, and those in flight finish (or
//! time out) in the background and are dropped.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;

use nodelay_core::{Interrupt, RequestParts};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use super::{header_pairs, wait, Batch, Done, Job, Outcome, Running};
use crate::head::Head;

/// Stack of a worker thread, in bytes. The engine's call depth is shallow
/// (no recursion); 256 KiB leaves room for TLS handshakes and decompression
/// state kept on the stack.
const WORKER_STACK_BYTES: usize = 256 * 1024;

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
        while let Some((index, job)) = self.take_next() {
            let outcome = self.run_blocking(job);
            self.store(index, outcome);
        }
    }

    /// One request, as `Engine.request` does it, without the GIL: the jar's
    /// Cookie header (unless the request has one), send, read and decode
    /// the body, store Set-Cookie fields, give the connection back.
    fn run_blocking(&self, job: &Job) -> Outcome {
        let engine = self.engine.get();
        let cookie = self.cookie_for(job);
        let pairs = header_pairs(job, cookie.as_deref());
        let body = job.body.as_deref();
        let parts = RequestParts {
            method: &job.method,
            url: &job.url,
            headers: &pairs,
            body,
        };
        let client = &engine.client;
        let prepared = client.prepare(&parts)?;
        let exchange = client.send(&prepared, body, self.timeouts, self)?;
        let mut whole = exchange.read_whole(self, engine.max_decoded_size)?;
        let head = Head::fetched(&mut whole);
        let (out, elapsed) = (whole.body, whole.elapsed.as_secs_f64());
        self.store_cookies(&head, job);
        Ok(Done {
            head,
            body: out,
            elapsed,
        })
    }
}

/// Starts `workers` threads and waits for them with the GIL released; a
/// Python signal handler's exception (Ctrl-C) cancels the batch and is
/// returned at once (the workers finish what they are doing in the background).
pub(super) fn run(py: Python<'_>, batch: &Arc<Batch>, workers: usize) -> PyResult<()> {
    let running = Running::new(workers);
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
