//! The per-client keep-alive pool: per-origin LIFO stacks of idle connections,
//! a bound on open connections with a deadline-bounded wait, idle expiry, a
//! liveness check before reuse, and idle connections closed as soon as their
//! server closes them (`reaper.rs`).

use std::collections::HashMap;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::conn::Connection;
use crate::deadline::{Deadlines, Phase};
use crate::error::Error;
use crate::fork;
use crate::interrupt::{Interrupt, SIGNAL_CHECK_INTERVAL};
use crate::proxy::ConnKey;
use crate::reaper::{self, Reap, Watch};
use crate::target::FxBuild;
use crate::tls::TlsSetup;
use crate::tunnel::connect_route;

/// Pool bounds; `None` means unbounded / never expires.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    pub max_connections: Option<usize>,
    pub max_keepalive: Option<usize>,
    pub keepalive_expiry: Option<Duration>,
}

impl PoolConfig {
    /// Whether any connection is kept idle at all (neither a keep-alive
    /// bound of 0 nor an expiry of 0).
    pub(crate) fn keeps_idle(&self) -> bool {
        self.max_keepalive != Some(0) && self.keepalive_expiry != Some(Duration::ZERO)
    }
}

pub(crate) struct Pool {
    state: Mutex<State>,
    /// Signalled whenever a connection slot or an idle connection frees up.
    freed: Condvar,
    config: PoolConfig,
    /// Part of the pool's identity: every connection of this pool was made
    /// with these TLS settings (HOSTILE.md D21).
    tls: TlsSetup,
}

/// An idle connection, with what outlives its checkouts: its socket's
/// descriptor and its registration with the reaper.
struct Idle {
    conn: Connection,
    fd: RawFd,
    watch: Option<Watch>,
}

#[derive(Default)]
struct State {
    idle: HashMap<ConnKey, Vec<Idle>, FxBuild>,
    idle_count: usize,
    /// Connections open: idle plus checked out.
    open: usize,
    generation: u64,
    /// Threads waiting in `checkout` for a slot: `freed` is signalled only
    /// when there is one (a notify is a futex syscall even with no waiter,
    /// one per request otherwise; strace).
    waiters: usize,
}

impl State {
    /// Drops every inherited connection after a fork: in the child they are
    /// copies of the parent's sockets, and checked-out ones belong to threads
    /// that do not exist here.
    fn reset_after_fork(&mut self, generation: u64) {
        self.idle.clear();
        self.idle_count = 0;
        self.open = 0;
        self.generation = generation;
        self.waiters = 0;
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

/// A connection checked out of the pool. Dropping it closes the connection and
/// frees its slot; `Pool::checkin` gives it back for reuse instead.
pub(crate) struct PooledConn {
    /// Always `Some` until `Pool::checkin` takes it.
    conn: Option<Connection>,
    pub reused: bool,
    pool: Arc<Pool>,
    key: ConnKey,
    generation: u64,
    /// The socket's descriptor, for the reaper.
    fd: RawFd,
    /// Set once the connection has been idle in the pool (`checkin`).
    watch: Option<Watch>,
}

impl PooledConn {
    pub fn conn(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("connection present until checkin")
    }

    pub fn conn_ref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("connection present until checkin")
    }

    /// Gives the connection back to its pool for reuse.
    pub fn return_to_pool(self) {
        let pool = Arc::clone(&self.pool);
        pool.checkin(self);
    }
}

impl Drop for PooledConn {
    fn drop(&mut self) {
        if self.conn.take().is_some() {
            self.pool.release_slot(self.generation);
        }
    }
}

impl Pool {
    pub fn new(config: PoolConfig, tls: TlsSetup) -> Self {
        fork::install();
        Pool {
            state: Mutex::new(State {
                generation: fork::generation(),
                ..State::default()
            }),
            freed: Condvar::new(),
            config,
            tls,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave `State` inconsistent in a
        // way that matters more than losing the pool, so poisoning is ignored.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let generation = fork::generation();
        if state.generation != generation {
            state.reset_after_fork(generation);
        }
        state
    }

    /// The TLS settings every connection of this pool (and of the client's
    /// HTTP/2 connections) is made with.
    pub fn tls(&self) -> &TlsSetup {
        &self.tls
    }

    /// Takes over a connection made elsewhere (the HTTP/2 connect, when ALPN
    /// chose HTTP/1.1) as if checked out now. It counts as open from here on;
    /// it was made without waiting for a slot, so `max_connections` can be
    /// exceeded by the few first connections of an origin being negotiated.
    pub fn adopt(
        self: &Arc<Self>,
        key: ConnKey,
        transport: crate::transport::Transport,
    ) -> PooledConn {
        let mut state = self.lock();
        state.open += 1;
        PooledConn {
            fd: transport.tcp().as_raw_fd(),
            conn: Some(Connection::new(transport)),
            reused: false,
            pool: Arc::clone(self),
            key,
            generation: state.generation,
            watch: None,
        }
    }

    /// Takes an idle live connection for `key` (origin and route), or opens a new one when a slot
    /// is free, or waits for one until the pool deadline (`PoolTimeout`).
    /// `fresh` skips the idle connections (the retry after a stale one: its
    /// idle siblings are likely stale too).
    pub fn checkout(
        self: &Arc<Self>,
        key: &ConnKey,
        deadlines: &Deadlines,
        fresh: bool,
        interrupt: &dyn Interrupt,
    ) -> Result<PooledConn, Error> {
        let mut state = self.lock();
        let mut wait_until: Option<Option<Instant>> = None;
        loop {
            let generation = state.generation;
            if let Some(mut idle) = (!fresh).then(|| self.pop_idle(&mut state, key)).flatten() {
                // The liveness check is a poll() syscall: never under the lock
                // (threads sharing the client would queue behind it). The
                // reaper may not have seen a close that just arrived.
                drop(state);
                if idle.conn.is_reusable() {
                    return Ok(PooledConn {
                        conn: Some(idle.conn),
                        reused: true,
                        pool: Arc::clone(self),
                        key: key.clone(),
                        generation,
                        fd: idle.fd,
                        watch: idle.watch,
                    });
                }
                drop(idle);
                self.release_slot(generation);
                state = self.lock();
                continue;
            }
            if self
                .config
                .max_connections
                .is_none_or(|max| state.open < max)
            {
                state.open += 1;
                drop(state);
                // The slot is ours now; the guard frees it if connecting fails.
                let slot = SlotGuard {
                    pool: self,
                    generation,
                    armed: true,
                };
                let stream = connect_route(key, &self.tls, deadlines, interrupt)?;
                slot.disarm();
                return Ok(PooledConn {
                    fd: stream.tcp().as_raw_fd(),
                    conn: Some(Connection::new(stream)),
                    reused: false,
                    pool: Arc::clone(self),
                    key: key.clone(),
                    generation,
                    watch: None,
                });
            }
            if state.evict_one_idle() {
                continue;
            }
            let until = *wait_until.get_or_insert_with(|| deadlines.until(deadlines.timeouts.pool));
            let left = until.map(|until| until.saturating_duration_since(Instant::now()));
            if left.is_some_and(|left| left.is_zero()) {
                return Err(deadlines.timed_out(Phase::POOL));
            }
            // A condition variable wait sees no EINTR: a caller that Ctrl-C
            // can stop waits in slices and asks between them (without the
            // lock: the check takes the GIL, which a thread queued on this
            // lock may hold).
            let polling = interrupt.needs_polling();
            let wait = match left {
                Some(left) if polling => Some(left.min(SIGNAL_CHECK_INTERVAL)),
                None if polling => Some(SIGNAL_CHECK_INTERVAL),
                other => other,
            };
            state.waiters += 1;
            let timed_out;
            (state, timed_out) = match wait {
                None => (
                    self.freed.wait(state).unwrap_or_else(|p| p.into_inner()),
                    false,
                ),
                Some(wait) => {
                    let (state, result) = self
                        .freed
                        .wait_timeout(state, wait)
                        .unwrap_or_else(|p| p.into_inner());
                    (state, result.timed_out())
                }
            };
            state.waiters -= 1;
            if polling && timed_out {
                drop(state);
                if interrupt.should_abort() {
                    return Err(crate::connect::interrupted());
                }
                state = self.lock();
            }
        }
    }

    /// The most recently used idle connection for `key` that has not
    /// expired (expired ones are dropped); the caller checks it is alive.
    fn pop_idle(&self, state: &mut State, key: &ConnKey) -> Option<Idle> {
        let now = Instant::now();
        loop {
            let idle = state.idle.get_mut(key)?.pop()?;
            state.idle_count -= 1;
            let expired = self
                .config
                .keepalive_expiry
                .is_some_and(|expiry| now.saturating_duration_since(idle.conn.idle_since) > expiry);
            if !expired {
                return Some(idle);
            }
            state.open -= 1;
            if state.waiters > 0 {
                self.freed.notify_one();
            }
        }
    }

    /// Returns a connection whose response was read completely.
    pub fn checkin(&self, mut pooled: PooledConn) {
        let Some(mut conn) = pooled.conn.take() else {
            return;
        };
        let keeps_any = self.config.keeps_idle();
        if keeps_any {
            reaper::watch_when_first_idle(
                &mut pooled.watch,
                pooled.fd,
                pooled.generation,
                &pooled.pool,
            );
        }
        let mut state = self.lock();
        if state.generation != pooled.generation {
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
            conn.served += 1;
            conn.idle_since = Instant::now();
            let idle = Idle {
                conn,
                fd: pooled.fd,
                watch: pooled.watch.take(),
            };
            match state.idle.get_mut(&pooled.key) {
                Some(stack) => stack.push(idle),
                None => {
                    state.idle.insert(pooled.key.clone(), vec![idle]);
                }
            }
            state.idle_count += 1;
        } else {
            state.open -= 1;
        }
        let wake = state.waiters > 0;
        drop(state);
        if wake {
            self.freed.notify_one();
        }
    }

    fn release_slot(&self, generation: u64) {
        let mut state = self.lock();
        if state.generation == generation {
            state.open = state.open.saturating_sub(1);
        }
        let wake = state.waiters > 0;
        drop(state);
        if wake {
            self.freed.notify_one();
        }
    }

    /// A connection slot for a connection this pool does not hold (the
    /// client's HTTP/2 connections), so they count towards
    /// `max_connections` too: taken now if one is free (closing the least
    /// recently used idle connection when that frees one), else `None`.
    pub fn try_lease(self: &Arc<Self>) -> Option<SlotLease> {
        let mut state = self.lock();
        loop {
            if self
                .config
                .max_connections
                .is_none_or(|max| state.open < max)
            {
                state.open += 1;
                return Some(SlotLease {
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
        // A notify is a futex syscall even with nobody waiting (one per
        // closed client otherwise, workload j).
        if state.waiters > 0 {
            self.freed.notify_all();
        }
    }

    pub fn idle_count(&self) -> usize {
        self.lock().idle_count
    }
}

impl Reap for Pool {
    fn reap(&self) {
        let mut state = self.lock();
        let closed = state.take_closed();
        if closed.is_empty() {
            return;
        }
        let wake = state.waiters > 0;
        drop(state);
        drop(closed);
        if wake {
            self.freed.notify_all();
        }
    }
}

/// A slot of the pool held by a connection kept elsewhere; freed on drop.
pub(crate) struct SlotLease {
    pool: Arc<Pool>,
    generation: u64,
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        self.pool.release_slot(self.generation);
    }
}

/// Frees a reserved connection slot unless disarmed (connect succeeded).
struct SlotGuard<'p> {
    pool: &'p Pool,
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
