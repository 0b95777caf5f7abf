//! The batch as futures on the process runtime (`nodelay_core::runtime`):
//! `concurrency` tasks, each taking the next request when its previous one is
//! done, driven by the runtime's workers (as many as the machine has cores,
//! at most 4) instead of one OS thread per request in flight. A request is
//! `nodelay_core::batch::fetch`: HTTP/2 multiplexed on the client's shared
//! connection, HTTP/1.1 on the Engine's batch pool (`Engine::batch_h1`).
//!
//! Ctrl-C aborts every task: a dropped request future closes its HTTP/1.1
//! connection (never pooled half-used) or resets its HTTP/2 stream, so
//! nothing of the batch outlives the `KeyboardInterrupt`.

use std::sync::Arc;

use nodelay_core::batch::fetch;
use nodelay_core::runtime::runtime;
use nodelay_core::RequestParts;
use pyo3::prelude::*;

use super::{header_pairs, wait, Batch, Done, Job, Outcome, Running};
use crate::head::Head;

impl Batch {
    /// One request as `Engine.request` does it, on the runtime: the jar's
    /// Cookie header (unless the request has one), send, read and decode the
    /// whole body, store Set-Cookie fields.
    async fn run_async(&self, job: &Job) -> Outcome {
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
        let prepared = engine.client.prepare(&parts)?;
        let mut fetched = fetch(
            &engine.client,
            &engine.batch_h1,
            &prepared,
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

/// One task: requests one after another until none is left.
async fn drive(batch: Arc<Batch>, running: Arc<Running>) {
    while let Some((index, job)) = batch.take_next() {
        let outcome = batch.run_async(job).await;
        batch.store(index, outcome);
    }
    // Release our share of the batch before the caller learns we are done,
    // so its Python handles are dropped by the caller (with the GIL).
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
