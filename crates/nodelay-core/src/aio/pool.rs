//! The async keep-alive pool: the sync pool's rules (per-origin LIFO stacks,
//! liveness check before reuse, idle expiry, a bound on open connections
//! with a deadline-bounded wait, reset after fork, idle connections closed
//! as soon as their server closes them) with a tokio `Notify` in place of
//! the condition variable, so a waiting request parks its task, not a thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::aconnect::{connect_route, AsyncTransport};
use crate::aio::conn::AsyncConn;
use crate::deadline::{Deadlines, Phase};
use crate::error::Error;
use crate::fork;
use crate::pool::PoolConfig;
use crate::proxy::ConnKey;
use crate::reaper::{self, Reap, Watch};
use crate::tls::TlsSetup;

/// ALPN offered by the HTTP/1.1 driver.
const ALPN_HTTP1: &[&[u8]] = &[b"http/1.1"];

pub(crate) struct AsyncPool {
    state: Mutex<State>,
    /// Signalled whenever a connection slot or an idle connection frees up.
    freed: Notify,
    /// Checkouts parked until a slot frees up: a caller keeping a connection
    /// between its requests (a batch task) hands it back while any wait.
    waiting: AtomicUsize,
    config: PoolConfig,
    /// Part of the pool's identity (HOSTILE.md D21), as on the sync path.
    tls: TlsSetup,
}

/// An idle connection and its registration with the reaper (made when it
/// first went idle, kept for its whole life).
struct Idle {
    conn: AsyncConn,
    watch: Option<Watch>,
}

#[derive(Default)]
struct State {
    /// Keyed by origin and route (a tunnelled connection is never lent to a
    /// direct request, nor the other way round).
    idle: HashMap<ConnKey, Vec<Idle>>,
    idle_count: usize,
    /// Connections open: idle plus checked out.
    open: usize,
    generation: u64,
}

impl State {
    /// A forked child drops every inherited connection (copies of the
    /// parent's sockets, registered with the parent's runtime).
    fn reset_after_fork(&mut self, generation: u64) {
        // The inherited connections belong to the parent's reactor: forget
        // them without running their destructors against a dead runtime.
        for idle in self.idle.drain().flat_map(|(_, stack)| stack) {
            idle.conn.abandon();
        }
        self.idle_count = 0;
        self.open = 0;
        self.generation = generation;
    }

    fn evict_one_idle(&mut self) -> bool {
        let Some(stack) = self.idle.values_mut().find(|s| !s.is_empty()) else {
            return false;
        };
        // The bottom of a LIFO stack is its least recently used connection.
        stack.remove(0);
        self.idle_count -= 1;
        self.open -= 1;
        true
    }

    /// Takes out every idle connection whose peer closed it (the caller
    /// drops them outside the lock).
    fn take_closed(&mut self) -> Vec<Idle> {
        let closed = reaper::take_peer_closed(self.idle.values_mut(), |idle| idle.watch.as_ref());
        self.idle_count -= closed.len();
        self.open -= closed.len();
        closed
    }
}

/// A connection checked out of the async pool. Dropping it (a finished
/// exchange that was not reusable, an error, or a cancelled request's future)
/// closes the connection and frees its slot.
pub(crate) struct AsyncPooled {
    conn: Option<AsyncConn>,
    pub reused: bool,
    pool: Arc<AsyncPool>,
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
    /// no other request waits for a connection slot of this pool, and the
    /// pool keeps connections between requests at all (`max_keepalive` 0
    /// or a zero `keepalive_expiry` close each one after its response).
    pub fn may_keep(&self) -> bool {
        let config = &self.pool.config;
        self.pool.waiting.load(Ordering::Relaxed) == 0
            && config.max_keepalive != Some(0)
            && config.keepalive_expiry != Some(Duration::ZERO)
    }

    /// Gives the connection back to its pool for reuse.
    pub fn return_to_pool(self) {
        let pool = Arc::clone(&self.pool);
        pool.checkin(self);
    }
}

impl Drop for AsyncPooled {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.generation != fork::generation() {
                conn.abandon();
            }
            self.pool.release_slot(self.generation);
        }
    }
}

impl AsyncPool {
    pub fn new(config: PoolConfig, tls: TlsSetup) -> Self {
        fork::install();
        AsyncPool {
            state: Mutex::new(State {
                generation: fork::generation(),
                ..State::default()
            }),
            freed: Notify::new(),
            waiting: AtomicUsize::new(0),
            config,
            tls,
        }
    }

    /// The TLS settings of every connection of this client (HTTP/2 too).
    pub fn tls(&self) -> &TlsSetup {
        &self.tls
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Losing the pool's bookkeeping to a panic matters less than wedging
        // every later request, so poisoning is ignored (as in pool.rs).
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let generation = fork::generation();
        if state.generation != generation {
            state.reset_after_fork(generation);
        }
        state
    }

    /// Takes an idle live connection for `key` (origin and route), or opens a new one when a
    /// slot is free, or waits for one until the pool deadline (`PoolTimeout`).
    /// `fresh` skips idle connections (the retry after a stale one).
    pub async fn checkout(
        self: &Arc<Self>,
        key: &ConnKey,
        deadlines: &Deadlines,
        fresh: bool,
    ) -> Result<AsyncPooled, Error> {
        let mut wait_until: Option<Option<Instant>> = None;
        loop {
            // Registered before the state is inspected, so a slot freed
            // between the check and the wait still wakes us.
            let notified = self.freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let generation = {
                let mut state = self.lock();
                let generation = state.generation;
                if let Some(idle) = (!fresh).then(|| self.pop_idle(&mut state, key)).flatten() {
                    let mut pooled = self.pooled(idle.conn, true, key, generation);
                    pooled.watch = idle.watch;
                    return Ok(pooled);
                }
                if self
                    .config
                    .max_connections
                    .is_none_or(|max| state.open < max)
                {
                    state.open += 1;
                    Some(generation)
                } else if state.evict_one_idle() {
                    continue;
                } else {
                    None
                }
            };
            if let Some(generation) = generation {
                // The slot is ours; the guard frees it if connecting fails or
                // the request is cancelled mid-connect.
                let slot = SlotGuard {
                    pool: self,
                    generation,
                    armed: true,
                };
                let transport = connect_route(key, &self.tls, ALPN_HTTP1, deadlines).await?;
                slot.disarm();
                return Ok(self.pooled(AsyncConn::new(transport), false, key, generation));
            }
            let until = *wait_until.get_or_insert_with(|| deadlines.until(deadlines.timeouts.pool));
            let _waiting = Waiting::new(&self.waiting);
            match until {
                None => notified.await,
                Some(until) => {
                    let timed_out = until <= Instant::now()
                        || tokio::time::timeout_at(until.into(), notified)
                            .await
                            .is_err();
                    if timed_out {
                        return Err(deadlines.timed_out(Phase::POOL));
                    }
                }
            }
        }
    }

    /// Takes over a connection made elsewhere (the HTTP/2 connect, when ALPN
    /// chose HTTP/1.1) as if checked out now (see the sync `Pool::adopt`: it
    /// was made without waiting for a slot).
    pub fn adopt(self: &Arc<Self>, key: &ConnKey, transport: AsyncTransport) -> AsyncPooled {
        let generation = {
            let mut state = self.lock();
            state.open += 1;
            state.generation
        };
        self.pooled(AsyncConn::new(transport), false, key, generation)
    }

    fn pooled(
        self: &Arc<Self>,
        conn: AsyncConn,
        reused: bool,
        key: &ConnKey,
        generation: u64,
    ) -> AsyncPooled {
        AsyncPooled {
            conn: Some(conn),
            reused,
            pool: Arc::clone(self),
            key: key.clone(),
            generation,
            watch: None,
        }
    }

    fn pop_idle(&self, state: &mut State, key: &ConnKey) -> Option<Idle> {
        let now = Instant::now();
        loop {
            let mut idle = state.idle.get_mut(key)?.pop()?;
            state.idle_count -= 1;
            let expired = self
                .config
                .keepalive_expiry
                .is_some_and(|expiry| now.saturating_duration_since(idle.conn.idle_since) > expiry);
            if !expired && idle.conn.is_reusable() {
                return Some(idle);
            }
            state.open -= 1;
            self.freed.notify_one();
        }
    }

    /// Returns a connection whose response was read completely.
    fn checkin(&self, mut pooled: AsyncPooled) {
        let Some(mut conn) = pooled.conn.take() else {
            return;
        };
        let keeps_any = self.config.keeps_idle();
        if keeps_any {
            reaper::watch_when_first_idle(
                &mut pooled.watch,
                conn.raw_fd(),
                pooled.generation,
                &pooled.pool,
            );
        }
        let mut state = self.lock();
        if state.generation != pooled.generation {
            conn.abandon();
            return;
        }
        let keep = keeps_any
            && self
                .config
                .max_keepalive
                .is_none_or(|max| state.idle_count < max)
            // Closed by its server while checked out: the reaper left it to us.
            && !pooled.watch.as_ref().is_some_and(Watch::peer_closed);
        if keep {
            conn.idle_since = Instant::now();
            let idle = Idle {
                conn,
                watch: pooled.watch.take(),
            };
            state.idle.entry(pooled.key.clone()).or_default().push(idle);
            state.idle_count += 1;
        } else {
            state.open -= 1;
        }
        drop(state);
        self.freed.notify_one();
    }

    fn release_slot(&self, generation: u64) {
        let mut state = self.lock();
        if state.generation == generation {
            state.open = state.open.saturating_sub(1);
        }
        drop(state);
        self.freed.notify_one();
    }

    /// A connection slot for a connection this pool does not hold (the
    /// `AsyncClient`'s HTTP/2 connections, `h2/pool.rs`), so they count
    /// towards `max_connections` too (as the sync `Pool::try_lease`): taken
    /// now if one is free (closing the least recently used idle connection
    /// when that frees one), else `None`.
    pub fn try_lease(self: &Arc<Self>) -> Option<AsyncSlotLease> {
        let mut state = self.lock();
        loop {
            if self
                .config
                .max_connections
                .is_none_or(|max| state.open < max)
            {
                state.open += 1;
                return Some(AsyncSlotLease {
                    pool: Arc::clone(self),
                    generation: state.generation,
                });
            }
            if !state.evict_one_idle() {
                return None;
            }
        }
    }

    /// Closes every idle connection.
    pub fn close_idle(&self) {
        let mut state = self.lock();
        let closed = state.idle_count;
        state.idle.clear();
        state.idle_count = 0;
        state.open -= closed;
        drop(state);
        self.freed.notify_waiters();
    }

    pub fn idle_count(&self) -> usize {
        self.lock().idle_count
    }
}

impl Reap for AsyncPool {
    fn reap(&self) {
        let closed = self.lock().take_closed();
        if closed.is_empty() {
            return;
        }
        // Outside the lock: dropping a connection deregisters it from the
        // runtime's reactor.
        drop(closed);
        self.freed.notify_waiters();
    }
}

impl Drop for AsyncPool {
    /// A pool dropped in a forked child (a sync `Client` that ran batches,
    /// garbage-collected in the child) must not deregister the parent's
    /// sockets from the epoll instance both share: its idle connections are
    /// abandoned as on the child's first checkout.
    fn drop(&mut self) {
        let generation = fork::generation();
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        if state.generation != generation {
            state.reset_after_fork(generation);
        }
    }
}

/// A slot of the pool's `max_connections` held by a connection the pool does
/// not hold (see [`AsyncPool::try_lease`]); freed (waking a waiting
/// checkout) when dropped.
pub(crate) struct AsyncSlotLease {
    pool: Arc<AsyncPool>,
    generation: u64,
}

impl Drop for AsyncSlotLease {
    fn drop(&mut self) {
        self.pool.release_slot(self.generation);
    }
}

/// Counts a parked checkout for as long as it waits (also when its future is
/// dropped mid-wait).
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

/// Frees a reserved connection slot unless disarmed (connect succeeded).
struct SlotGuard<'p> {
    pool: &'p AsyncPool,
    generation: u64,
    armed: bool,
}

impl SlotGuard<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.pool.release_slot(self.generation);
        }
    }
}
