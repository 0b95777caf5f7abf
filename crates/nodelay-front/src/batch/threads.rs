//! The batch on OS threads over the blocking engine: what clients with
//! proxies use (routing, CONNECT tunnels and proxy TLS live in the sync
//! engine only). Each worker thread drives one request at a time.
//!
//! The workers own what they use (an `Arc` of the batch), so an abort
//! returns at once: requests not started are never sent, and those in
//! flight give up at their next interrupt check (or finish) in the
//! background and are dropped.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;

use nodelay_core::{Interrupt, RequestParts};

use super::{header_pairs, Batch, Host, Job, Outcome, Running, Started};
use crate::Head;

/// Stack of a worker thread, in bytes. The engine's call depth is shallow
/// (no recursion); 256 KiB leaves room for TLS handshakes and decompression
/// state kept on the stack.
const WORKER_STACK_BYTES: usize = 256 * 1024;

impl<H: Host> Interrupt for Batch<H> {
    // Workers never run the host's signal handlers: a signal landing on a
    // worker thread only matters if the batch is being cancelled (the
    // waiting thread runs the handlers).
    fn should_abort(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

impl<H: Host> Batch<H> {
    /// Worker loop: take the next index, run it, store its outcome.
    fn work(&self) {
        while let Some((index, job)) = self.take_next() {
            let outcome = self.run_blocking(job);
            self.store(index, outcome);
        }
    }

    /// One request without the front's lock: the jar's Cookie header
    /// (unless the request has one), send, read and decode the body, store
    /// Set-Cookie fields, give the connection back.
    fn run_blocking(&self, job: &Job) -> Outcome {
        let cookie = self.cookie_for(job);
        let pairs = header_pairs(job, cookie.as_deref());
        let body = job.body.as_deref();
        let parts = RequestParts {
            method: &job.method,
            url: &job.url,
            headers: &pairs,
            body,
        };
        let client = self.host.client();
        let prepared = client.prepare(&parts)?;
        let exchange = client.send(&prepared, body, self.timeouts_now(), self)?;
        let mut whole = exchange.read_whole(self, self.host.max_decoded_size())?;
        let head = Head::fetched(&mut whole);
        let body = std::mem::take(&mut whole.body);
        Ok(self.done(job, head, body, whole.elapsed))
    }
}

/// Starts `workers` threads. When one cannot be started, the batch is
/// cancelled (the started ones stop after their current request) and the
/// error is kept for [`Started::spawn_error`].
pub(super) fn start<H: Host>(
    batch: &Arc<Batch<H>>,
    running: Arc<Running>,
    workers: usize,
) -> Started<H> {
    for started in 0..workers {
        let worker = Arc::clone(batch);
        let done = Arc::clone(&running);
        let spawned = thread::Builder::new()
            .name("nodelay-batch".into())
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || {
                worker.work();
                // Release our share of the batch before the caller learns we
                // are done, so that what the host holds is dropped by the
                // caller in the usual case.
                drop(worker);
                done.finished_one();
            });
        if let Err(e) = spawned {
            batch.cancel.store(true, Ordering::Relaxed);
            for _ in started..workers {
                running.finished_one();
            }
            return Started::new(batch, running, Vec::new(), Some(e));
        }
    }
    Started::new(batch, running, Vec::new(), None)
}
