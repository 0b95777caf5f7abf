//! The pool's tokio face: checkout and
//! checkin for the async HTTP/1.1 driver, and slot leases for HTTP/2
//! connections. A checkout that finds every slot busy parks its task on the
//! pool's `Notify`, which any release wakes (a task's, a thread's, or an
//! HTTP/2 connection's lease).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;

use super::handover::{fits_async, into_async};
use super::state::Opened;
use super::{Claim, Driven, Pool, SlotGuard, SlotLease};
use crate::aconnect::{connect_route, AsyncTransport};
use crate::aio::conn::AsyncConn;
use crate::deadline::Deadlines;
use crate::error::{Error, ErrorKind};
use crate::fork;
use crate::proxy::ConnKey;
use crate::reaper::Watch;
use crate::target::Origin;

/// ALPN offered by the HTTP/1.1 driver.
const ALPN_HTTP1: &[&[u8]] = &[b"http/1.1"];

/// A connection checked out of the pool for the async driver. Dropping it (a
/// finished exchange that was not reusable, an error, or a cancelled
/// request's future) closes the connection and frees its slot.
pub(crate) struct AsyncPooled {
    conn: Option<AsyncConn>,
    pub reused: bool,
    pool: Arc<Pool>,
    key: ConnKey,
    generation: u64,
    /// Set once the connection has been idle in the pool (`checkin`).
    watch: Option<Watch>,
}

impl AsyncPooled {
    pub fn conn(&mut self) -> &mut AsyncConn {
        self.conn
            .as_mut()
            .expect("connection present until checkin")
    }

    pub fn conn_ref(&self) -> &AsyncConn {
        self.conn
            .as_ref()
            .expect("connection present until checkin")
    }

    /// The origin and route this connection serves.
    pub fn key(&self) -> &ConnKey {
        &self.key
    }

    /// Whether its holder may keep this connection for its next request:
    /// no other request (thread or task) waits for a connection slot of
    /// this pool, and the pool keeps connections between requests at all.
    pub fn may_keep(&self) -> bool {
        self.pool.may_keep()
    }

    /// The connection fitted to the driver of the calling thread (watched by
    /// its event loop, or on tokio's reactor: `aio/watched.rs`).
    fn fit_to_thread(mut self) -> Result<Self, Error> {
        let conn = self.conn.take().expect("connection present until checkin");
        match conn.fit_to_thread() {
            Ok(conn) => {
                self.conn = Some(conn);
                Ok(self)
            }
            Err(e) => {
                // The socket is gone with the error; the slot is freed here
                // since `Drop` only frees it along with a connection.
                self.pool.release_slot(&self.key, self.generation);
                Err(
                    Error::new(ErrorKind::Connect, format!("socket setup failed: {e}"))
                        .with_source(e),
                )
            }
        }
    }

    /// Gives the connection back to its pool for reuse.
    pub fn return_to_pool(self) {
        let pool = Arc::clone(&self.pool);
        pool.checkin_async(self);
    }
}

impl Drop for AsyncPooled {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.generation != fork::generation() {
                conn.abandon();
            }
            self.pool.release_slot(&self.key, self.generation);
        }
    }
}

/// Counts a parked task for as long as it waits (also when its future is
/// dropped mid-wait). Raised under the pool's lock.
struct Waiting<'p>(&'p AtomicUsize);

impl<'p> Waiting<'p> {
    fn new(count: &'p AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Pool {
    fn pooled_async(
        self: &Arc<Self>,
        conn: AsyncConn,
        reused: bool,
        key: &ConnKey,
        generation: u64,
        watch: Option<Watch>,
    ) -> AsyncPooled {
        self.used(conn.raw_fd());
        AsyncPooled {
            conn: Some(conn),
            reused,
            pool: Arc::clone(self),
            key: key.clone(),
            generation,
            watch,
        }
    }

    /// Takes an idle live connection for `key` (origin and route), or opens a
    /// new one when a slot is free, or waits for one until the pool deadline
    /// (`PoolTimeout`). `fresh` skips idle connections (the retry after a
    /// stale one).
    pub async fn checkout_async(
        self: &Arc<Self>,
        key: &ConnKey,
        deadlines: &Deadlines,
        fresh: bool,
    ) -> Result<AsyncPooled, Error> {
        let mut wait_until: Option<Option<Instant>> = None;
        loop {
            let counted = |state| {
                let waiting = Waiting::new(&self.waiting_tasks);
                drop(state);
                waiting
            };
            match self.claim(key, fresh, fits_async, into_async, counted) {
                Claim::Reuse {
                    conn,
                    generation,
                    watch,
                } => {
                    return self
                        .pooled_async(conn, true, key, generation, watch)
                        .fit_to_thread()
                }
                Claim::Connect(generation) => {
                    // The guard frees the slot if connecting fails or the
                    // request is cancelled mid-connect.
                    let slot = SlotGuard::new(self, key, generation);
                    let transport = connect_route(key, &self.tls, ALPN_HTTP1, deadlines).await?;
                    slot.disarm();
                    let conn = AsyncConn::new(transport);
                    return self
                        .pooled_async(conn, false, key, generation, None)
                        .fit_to_thread();
                }
                Claim::Wait(waiting, bound) => {
                    let until =
                        *wait_until.get_or_insert_with(|| deadlines.until(deadlines.timeouts.pool));
                    if !wait(&self.freed_async, until).await {
                        return Err(Pool::wait_timed_out(deadlines, key, bound));
                    }
                    drop(waiting);
                }
            }
        }
    }

    /// Takes over a connection made elsewhere (the HTTP/2 connect, when ALPN
    /// chose HTTP/1.1) as if checked out now (see [`Pool::adopt`]).
    pub fn adopt_async(self: &Arc<Self>, key: &ConnKey, transport: AsyncTransport) -> AsyncPooled {
        let generation = self.lock().adopt(key);
        self.pooled_async(AsyncConn::new(transport), false, key, generation, None)
    }

    /// Returns a connection whose response was read completely.
    fn checkin_async(&self, mut pooled: AsyncPooled) {
        let Some(conn) = pooled.conn.take() else {
            return;
        };
        let fd = conn.raw_fd();
        Pool::give_back(
            &pooled.pool,
            &pooled.key,
            Driven::Async(conn),
            fd,
            pooled.generation,
            pooled.watch.take(),
        );
    }

    /// A slot for a new HTTP/2 connection to `key`, waiting for one (a
    /// release of either kind wakes us) until the pool deadline
    /// (`PoolTimeout`).
    pub async fn lease(
        self: &Arc<Self>,
        key: ConnKey,
        deadlines: &Deadlines,
    ) -> Result<SlotLease, Error> {
        let mut until = None;
        loop {
            let (opened, generation, waiting) = {
                let mut state = self.lock();
                let opened = state.open_slot(&key);
                let waiting =
                    matches!(opened, Opened::Full(_)).then(|| Waiting::new(&self.waiting_tasks));
                (opened, state.generation(), waiting)
            };
            let evicted = match opened {
                Opened::Slot => None,
                Opened::Evicted(idle) => Some(idle),
                Opened::Full(bound) => {
                    let until =
                        *until.get_or_insert_with(|| deadlines.until(deadlines.timeouts.pool));
                    if !wait(&self.freed_async, until).await {
                        return Err(Pool::wait_timed_out(deadlines, &key, bound));
                    }
                    drop(waiting);
                    continue;
                }
            };
            drop(evicted);
            return Ok(SlotLease {
                pool: Arc::clone(self),
                key,
                generation,
            });
        }
    }

    /// Waits on the runtime (a tokio sleep) for a rate-limit token for a
    /// request to `origin` (see [`Pool::take_token`]); at once without a
    /// rate limit or with a token in the bucket.
    pub async fn admit_async(&self, origin: &Origin, deadlines: &Deadlines) -> Result<(), Error> {
        if let Some(at) = self.take_token(origin, deadlines)? {
            tokio::time::sleep_until(at.into()).await;
        }
        Ok(())
    }
}

/// Waits for a release until `until` (`None`: no limit): `false` when
/// `until` passed first (the caller's `PoolTimeout`). The caller counted
/// itself in `waiting_tasks` under the pool's lock, after finding no slot: a
/// release after that calls `notify_one`, which leaves a permit when it
/// comes before this wait registers, so no release is missed (and no
/// `Notified` is made on the path that finds a slot).
async fn wait(freed: &Notify, until: Option<Instant>) -> bool {
    let notified = freed.notified();
    match until {
        None => {
            notified.await;
            true
        }
        Some(until) => {
            until > Instant::now()
                && tokio::time::timeout_at(until.into(), notified)
                    .await
                    .is_ok()
        }
    }
}
