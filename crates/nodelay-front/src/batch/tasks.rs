//! The batch as futures on the process runtime (`nodelay_core::runtime`):
//! one task per runner, each taking the next request when its previous one
//! is done, driven by the runtime's workers (as many as the machine has
//! cores, at most 4) instead of one OS thread per request in flight. A
//! request is `nodelay_core::batch::fetch`: HTTP/2 multiplexed on the
//! client's shared connection, HTTP/1.1 through the client's one pool (its
//! idle connections are the ones single requests use, and its
//! `max_connections` and per-host limit bound both).
//!
//! An abort drops every task: a dropped request future closes its HTTP/1.1
//! connection (never pooled half-used) or resets its HTTP/2 stream, so
//! nothing of the batch outlives the interrupt.

use std::sync::Arc;

use nodelay_core::batch::{fetch, HeldConnection};
use nodelay_core::runtime::runtime;
use nodelay_core::{Error, Prepared, RequestParts};

use super::{header_pairs, Batch, Host, Job, Outcome, Running, Started};
use crate::Head;

/// The request a task prepared last, reused as is for its next job when
/// that is the same request (same method, URL and header list, no body, no
/// cookie from the jar): a batch polling one URL encodes it once per task
/// instead of once per request.
struct LastPrepared {
    method: Arc<str>,
    url: Arc<str>,
    headers: Arc<super::HeaderSet>,
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

impl<H: Host> Batch<H> {
    /// The request of `job` encoded for the wire, with the jar's Cookie
    /// header (unless the request has one).
    fn prepare(&self, job: &Job, cookie: Option<&str>) -> Result<Prepared, Error> {
        let client = self.host.client();
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

    /// One request on the runtime: the jar's Cookie header (unless the
    /// request has one), send, read and decode the whole body, store
    /// Set-Cookie fields.
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
        let mut fetched = fetch(
            self.host.client(),
            held,
            prepared,
            job.body.as_deref(),
            self.timeouts_now(),
            self.host.max_decoded_size(),
        )
        .await?;
        let head = Head::fetched(&mut fetched);
        let body = std::mem::take(&mut fetched.body);
        Ok(self.done(job, head, body, fetched.elapsed))
    }
}

/// One task: requests one after another until none is left, on the
/// HTTP/1.1 connection it keeps between them (given back to the pool at the
/// end; closed if the task is aborted).
async fn drive<H: Host>(batch: Arc<Batch<H>>, running: Arc<Running>) {
    let mut held = HeldConnection::default();
    let mut last = None;
    while let Some((index, job)) = batch.take_next() {
        let outcome = batch.run_async(job, &mut held, &mut last).await;
        batch.store(index, outcome);
    }
    held.release();
    // Release our share of the batch before the caller learns we are done,
    // so that what the host holds is dropped by the caller (a Python
    // binding's objects, with its interpreter lock).
    drop(last);
    drop(batch);
    running.finished_one();
}

/// Spawns `tasks` runners on the runtime.
pub(super) fn start<H: Host>(
    batch: &Arc<Batch<H>>,
    running: Arc<Running>,
    tasks: usize,
) -> Started<H> {
    let rt = runtime();
    let handles = (0..tasks)
        .map(|_| rt.spawn(drive(Arc::clone(batch), Arc::clone(&running))))
        .collect();
    Started::new(batch, running, handles, None)
}
