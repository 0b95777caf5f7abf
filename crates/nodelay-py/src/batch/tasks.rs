//! The batch as futures on the process runtime (`nodelay_core::runtime`):
//! `concurrency` tasks, each taking the next request when its previous one is
//! done, driven by the runtime's workers (as many as the machine has cores,
//! at most 4) instead of one OS thread per request in flight. A request is
//! `nodelay_core::batch::fetch`: HTTP/2 multiplexed on the client's shared
//! connection, HTTP/1.1 through the client's one pool (its idle connections
//! are the ones `Client.get` uses, and its `max_connections` bounds both).
//!
//! Ctrl-C aborts every task: a dropped request future closes its HTTP/1.1
//! connection (never pooled half-used) or resets its HTTP/2 stream, so
//! nothing of the batch outlives the `KeyboardInterrupt`.

use std::sync::Arc;

use nodelay_core::batch::{fetch, HeldConnection};
use nodelay_core::runtime::runtime;
use nodelay_core::{Error, Prepared, RequestParts};
use pyo3::prelude::*;

use super::{header_pairs, wait, Batch, Done, Job, Outcome, Running, SharedHeaders};
use crate::head::Head;

/// The request a task prepared last, reused as is for its next job when
/// that is the same request (same method, URL and header objects, no body,
/// no cookie from the jar): a batch polling one URL encodes it once per
/// task instead of once per request.
struct LastPrepared {
    method: Arc<str>,
    url: Arc<str>,
    headers: SharedHeaders,
    prepared: Prepared,
}

impl LastPrepared {
    fn is_for(&self, job: &Job) -> bool {
        job.body.is_none()
            && Arc::ptr_eq(&self.url, &job.url)
            && Arc::ptr_eq(&self.method, &job.method)
            && Arc::ptr_eq(&self.headers, &job.headers)
    }
}

impl Batch {
    /// The request of `job` encoded for the wire, with the jar's Cookie
    /// header (unless the request has one).
    fn prepare(&self, job: &Job, cookie: Option<&str>) -> Result<Prepared, Error> {
        let client = &self.engine.get().client;
        let body = job.body.as_deref();
        if let (None, Some(encoded)) = (cookie, &job.headers.encoded) {
            let parts = RequestParts {
                method: &job.method,
                url: &job.url,
                headers: &[],
                body,
            };
            return client.prepare_encoded(&parts, encoded);
        }
        let pairs = header_pairs(job, cookie);
        let parts = RequestParts {
            method: &job.method,
            url: &job.url,
            headers: &pairs,
            body,
        };
        client.prepare(&parts)
    }

    /// One request as `Engine.request` does it, on the runtime: the jar's
    /// Cookie header (unless the request has one), send, read and decode the
    /// whole body, store Set-Cookie fields.
    async fn run_async(
        &self,
        job: &Job,
        held: &mut HeldConnection,
        last: &mut Option<LastPrepared>,
    ) -> Outcome {
        let cookie = self.cookie_for(job);
        if cookie.is_none() && job.body.is_none() {
            if !last.as_ref().is_some_and(|l| l.is_for(job)) {
                *last = Some(LastPrepared {
                    method: Arc::clone(&job.method),
                    url: Arc::clone(&job.url),
                    headers: Arc::clone(&job.headers),
                    prepared: self.prepare(job, None)?,
                });
            }
            let prepared = &last.as_ref().expect("stored above").prepared;
            return self.send(job, held, prepared).await;
        }
        let prepared = self.prepare(job, cookie.as_deref())?;
        self.send(job, held, &prepared).await
    }

    /// Sends `prepared` (the request of `job`) and reads the whole response.
    async fn send(&self, job: &Job, held: &mut HeldConnection, prepared: &Prepared) -> Outcome {
        let engine = self.engine.get();
        let body = job.body.as_deref();
        let mut fetched = fetch(
            &engine.client,
            held,
            prepared,
            body,
            self.timeouts,
            engine.max_decoded_size,
        )
        .await?;
        let head = Head::fetched(&mut fetched);
        self.store_cookies(&head, job);
        Ok(Done {
            head,
            body: fetched.body,
            elapsed: fetched.elapsed.as_secs_f64(),
        })
    }
}

/// One task: requests one after another until none is left, on the
/// HTTP/1.1 connection it keeps between them (given back to the pool at the
/// end; closed if the task is aborted).
async fn drive(batch: Arc<Batch>, running: Arc<Running>) {
    let mut held = HeldConnection::default();
    let mut last = None;
    while let Some((index, job)) = batch.take_next() {
        let outcome = batch.run_async(job, &mut held, &mut last).await;
        batch.store(index, outcome);
    }
    held.release();
    // Release our share of the batch before the caller learns we are done,
    // so its Python handles are dropped by the caller (with the GIL).
    drop(last);
    drop(batch);
    running.finished_one();
}

/// Spawns `tasks` runners on the runtime and waits for them with the GIL
/// released; a Python signal handler's exception (Ctrl-C) aborts them all and
/// is returned at once.
pub(super) fn run(py: Python<'_>, batch: &Arc<Batch>, tasks: usize) -> PyResult<()> {
    let running = Running::new(tasks);
    let rt = runtime();
    let handles: Vec<_> = (0..tasks)
        .map(|_| rt.spawn(drive(Arc::clone(batch), Arc::clone(&running))))
        .collect();
    let waited = wait(py, &running, &batch.cancel);
    if waited.is_err() {
        for handle in &handles {
            handle.abort();
        }
    }
    waited
}
