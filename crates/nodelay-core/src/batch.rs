//! One whole request as a future on the process runtime, for the sync batch
//! API (`Client.get_many` / `Client.map` in nodelay-py): many of them run at
//! once on the runtime's workers, so a batch needs no OS thread per request
//! in flight.
//!
//! Each request runs the exchange sequence (`sequence.rs`) on the async
//! driver (`aio`) over the client's own pool and HTTP/2 connections
//! (`Client::batch_driver`):
//! - HTTP/2 (the client asked for it and the request may use it): the one
//!   connection per origin that `Client::send` shares, multiplexed, with no
//!   hand-over between threads per request.
//! - HTTP/1.1: a batch reuses the connections `Client::send` left idle and
//!   the other way round, and `max_connections` bounds the client's
//!   requests, batches and HTTP/2 connections together.
//!
//! The caller picks the client's sync path instead for proxied clients (the
//! async driver connects directly only).
//!
//! A batch task keeps its HTTP/1.1 connection between its requests
//! ([`HeldConnection`]) rather than giving it back to the pool after each
//! one: the next request to the same origin then skips the pool's lock and
//! its liveness `poll()` (the reactor's readiness answers that question for
//! a connection just drained, without a syscall). It goes back to the pool
//! when another request waits for a connection slot (`max_connections`
//! still bounds the batch, `PoolTimeout` as before), when the next request
//! is for another origin, and when the task ends.

use std::time::Instant;

use crate::aio::pool::AsyncPooled;
use crate::aio::upload::AsyncOutgoing;
use crate::body::WholeResponse;
use crate::client::Client;
use crate::deadline::{Deadlines, Timeouts};
use crate::error::Error;
use crate::request::Prepared;

/// A response read whole (body decoded), its connection given back.
pub type Fetched = WholeResponse;

/// The HTTP/1.1 connection a batch task keeps from one of its requests to the
/// next (see the module comment). Call [`HeldConnection::release`] when the
/// task is done; dropping it instead (a cancelled task) closes the
/// connection and frees its pool slot.
#[derive(Default)]
pub struct HeldConnection(Option<AsyncPooled>);

impl HeldConnection {
    /// Gives the kept connection back to its pool.
    pub fn release(mut self) {
        if let Some(pooled) = self.0.take() {
            pooled.return_to_pool();
        }
    }

    /// Whether a connection is kept (for tests).
    pub fn is_held(&self) -> bool {
        self.0.is_some()
    }

    /// The kept connection when it serves `prepared` and nothing arrived on
    /// it since its last response; otherwise it goes back to the pool, whose
    /// checkout makes the full liveness check. A non-idempotent request
    /// always gets that check: the reactor may not have processed a close
    /// that a `poll()` would see, and such a request is not resent when it
    /// finds the connection dead (an idempotent one is, once).
    fn take_for(&mut self, prepared: &Prepared) -> Option<AsyncPooled> {
        let pooled = self.0.take()?;
        if prepared.idempotent
            && pooled.key() == &prepared.key
            && !pooled.conn_ref().readiness_seen()
        {
            return Some(pooled);
        }
        pooled.return_to_pool();
        None
    }

    /// Keeps a connection whose response was read whole, unless another
    /// request waits for a slot of its pool or the pool keeps none.
    fn keep(&mut self, mut pooled: AsyncPooled) {
        if !pooled.may_keep() {
            pooled.return_to_pool();
        } else {
            // Its next request is on a used connection: a failure before any
            // response byte may be a server-side close (the stale retry).
            pooled.reused = true;
            self.0 = Some(pooled);
        }
    }
}

/// Sends `prepared` (made by `client.prepare`, not proxied) and reads the
/// whole response: over HTTP/2 on the client's shared connection when the
/// request may use it and the server agrees, else over HTTP/1.1 through the
/// client's pool, on the connection `held` keeps when it serves that origin
/// (a reusable connection is kept there afterwards). `body` is the body given to
/// `prepare`. Timeouts are those of `Client::send`; dropping the future
/// cancels the request (its HTTP/1.1 connection is closed, its HTTP/2
/// stream reset).
pub async fn fetch(
    client: &Client,
    held: &mut HeldConnection,
    prepared: &Prepared,
    body: Option<&[u8]>,
    timeouts: Timeouts,
    max_decoded_bytes: u64,
) -> Result<Fetched, Error> {
    let driver = client.batch_driver();
    let started = Instant::now();
    let deadlines = Deadlines::start(timeouts, started);
    // One rate-limit token per request, before it picks a protocol (the
    // held connection skips the pool's checkout, not the rate).
    driver.admit(&prepared.target.origin, &deadlines).await?;
    let kept = held.take_for(prepared);
    let body = AsyncOutgoing::Bytes(prepared.large_body(body));
    let exchange = driver
        .drive(prepared, body, deadlines, started, kept)
        .await?;
    let (fetched, reusable) = exchange.read_whole_reusable(max_decoded_bytes).await?;
    if let Some(pooled) = reusable {
        held.keep(pooled);
    }
    Ok(fetched)
}
