//! One connection pool per client, shared by everything the client sends:
//! the blocking HTTP/1.1 driver (`blocking.rs`), the tokio driver
//! (`asynchronous.rs`: `AsyncClient`, and the batches of a sync `Client`) and
//! the client's HTTP/2 connections (`h2/pool.rs`, which lease slots), under
//! one slot budget.
//!
//! The bookkeeping is `state.rs` (no I/O, no waiting), and `rate.rs` for the
//! rate limit's token buckets. This file wraps it
//! once: the lock, the fork check, the idle connections of either driver,
//! and the two wait primitives. A thread waits on a condition variable, a
//! task on a tokio `Notify`; whoever frees a slot wakes one waiter of each
//! kind that waits, so a thread is woken by a task's release and the other
//! way round. The faces (`blocking.rs`, `asynchronous.rs`) do the I/O: connect,
//! the liveness check, and moving a socket from one driver to the other
//! (`handover.rs`) when a request finds an idle connection the other driver
//! left.

pub(crate) mod asynchronous;
pub(crate) mod blocking;
mod handover;
mod rate;
mod state;

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::Notify;

pub use rate::RateLimit;
use rate::Rates;
pub use state::PoolConfig;
use state::{Bound, CheckedIn, Opened, PoolState, Popped};

use crate::aio::conn::AsyncConn;
use crate::conn::Connection;
use crate::deadline::{Deadlines, Phase};
use crate::error::Error;
use crate::fork;
use crate::limits::SURPLUS_IDLE_GRACE;
use crate::proxy::ConnKey;
use crate::reaper::{self, Reap, Watch};
use crate::target::Origin;
use crate::tls::TlsSetup;

pub(crate) struct Pool {
    state: Mutex<PoolState<ConnKey, Idle>>,
    /// Threads waiting for a slot (the blocking face).
    freed: Condvar,
    /// Tasks waiting for a slot (the tokio face).
    freed_async: Notify,
    /// Waiters of each kind. Raised under the lock (so a release, which
    /// reads them after changing the state under the same lock, never
    /// misses one); a notify is done only when one waits (a condvar notify
    /// is a futex syscall even with nobody waiting: one per request).
    waiting_threads: AtomicUsize,
    waiting_tasks: AtomicUsize,
    config: PoolConfig,
    /// Part of the pool's identity: every connection of this pool was made
    /// with these TLS settings (docs/hostile.md D21).
    tls: TlsSetup,
    /// The rate limit's buckets, under a lock of their own (a request takes
    /// it once, before its checkout); `None` without a rate limit.
    rates: Option<Mutex<Rates<Origin>>>,
    /// The socket of the HTTP/1.1 connection the latest checkout took
    /// (`NO_CONNECTION`: none yet, or one is being made), so [`Pool::kept_peer`] can tell whether it went back idle.
    /// A descriptor names one open socket at a time, and every connection of
    /// this pool is made by a checkout, which writes it here: one relaxed
    /// store per request, the lookup left to the rare caller who asks.
    last_used: AtomicI32,
}

/// `Pool::last_used` when no connection is the latest checkout's (never a
/// descriptor).
const NO_CONNECTION: RawFd = -1;

/// An idle connection, in the form of the driver that used it last.
pub(crate) enum Driven {
    Blocking(Connection),
    Async(AsyncConn),
}

/// An idle connection, with what outlives its checkouts: its registration
/// with the reaper.
pub(crate) struct Idle {
    conn: Driven,
    watch: Option<Watch>,
}

impl Driven {
    /// The connection's socket.
    fn fd(&self) -> RawFd {
        match self {
            Driven::Blocking(conn) => conn.transport().tcp().as_raw_fd(),
            Driven::Async(conn) => conn.raw_fd(),
        }
    }
}

impl Idle {
    /// Disposes of a connection inherited from the parent process: an async
    /// one is abandoned (dropping its tokio socket would deregister it from
    /// the epoll instance the child shares with the parent and so break the
    /// parent's connection), a blocking one is closed (our descriptor only).
    fn dispose_inherited(self) {
        match self.conn {
            Driven::Blocking(conn) => drop(conn),
            Driven::Async(conn) => conn.abandon(),
        }
    }

    fn peer_closed(&self) -> bool {
        self.watch.as_ref().is_some_and(Watch::peer_closed)
    }
}

/// What a checkout does next, decided under the lock by [`Pool::step`].
enum Step {
    /// An idle connection, its slot now the caller's: check it is alive.
    Reuse(Idle),
    /// An idle connection past its expiry (its slot freed): close it, look again.
    Expired(Idle),
    /// A slot for a new connection is the caller's; close the evicted idle
    /// connection, if any, first.
    Connect(Option<Idle>),
    /// Every slot is busy (of the pool, or of the origin): wait for a release.
    Wait(Bound),
}

/// What [`Pool::claim`] leaves to the face that called it: the two things
/// that differ by driver, connecting and waiting.
enum Claim<C, W> {
    /// A live idle connection, in the caller's driver form, and its slot.
    Reuse {
        conn: C,
        generation: u64,
        watch: Option<Watch>,
    },
    /// A slot (of this fork generation) is the caller's: connect.
    Connect(u64),
    /// Every slot is busy: what `on_wait` made of the locked state (it
    /// registers the caller as a waiter before any release can look for
    /// one), and the bound it waits on.
    Wait(W, Bound),
}

impl Pool {
    pub fn new(config: PoolConfig, tls: TlsSetup) -> Self {
        fork::install();
        Pool {
            state: Mutex::new(PoolState::new(
                config,
                fork::generation(),
                SURPLUS_IDLE_GRACE,
            )),
            freed: Condvar::new(),
            freed_async: Notify::new(),
            waiting_threads: AtomicUsize::new(0),
            waiting_tasks: AtomicUsize::new(0),
            rates: config.rate.map(|limit| Mutex::new(Rates::new(limit))),
            config,
            tls,
            last_used: AtomicI32::new(NO_CONNECTION),
        }
    }

    /// Records that a checkout took the connection on socket `fd`
    /// (`NO_CONNECTION`: it is connecting a new one).
    fn used(&self, fd: RawFd) {
        self.last_used.store(fd, Ordering::Relaxed);
    }

    /// The peer address (the server's, or the proxy's the connection goes
    /// through) of the HTTP/1.1 connection the latest request used, when
    /// that connection is idle in the pool now, alive and unexpired (kept
    /// for the next request); `None` otherwise (it was closed, it is in use,
    /// the request went over HTTP/2, or no request was made). Walks the
    /// idle connections: for callers that ask once in a while (HTTP::Tiny's
    /// `connected`), not per request.
    pub fn kept_peer(&self) -> Option<SocketAddr> {
        let fd = self.last_used.load(Ordering::Relaxed);
        if fd == NO_CONNECTION {
            return None;
        }
        let state = self.lock();
        let idle = state.find_idle(Instant::now(), |idle| {
            idle.conn.fd() == fd && !idle.peer_closed()
        })?;
        // SAFETY: `fd` is the socket of `idle`, which stays open while the
        // lock is held (nothing takes it out of the pool meanwhile).
        let socket = unsafe { BorrowedFd::borrow_raw(idle.conn.fd()) };
        socket2::SockRef::from(&socket)
            .peer_addr()
            .ok()?
            .as_socket()
    }

    fn lock(&self) -> MutexGuard<'_, PoolState<ConnKey, Idle>> {
        // A panic while holding the lock cannot leave the state inconsistent
        // in a way that matters more than losing the pool, so poisoning is
        // ignored.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let generation = fork::generation();
        if state.generation() != generation {
            state.reset(generation).for_each(Idle::dispose_inherited);
        }
        state
    }

    /// The TLS settings every connection of this client is made with
    /// (HTTP/2 too).
    pub fn tls(&self) -> &TlsSetup {
        &self.tls
    }

    /// The checkout rule both faces follow: the most recent idle connection
    /// for `key` that `fits` the driver (unless `fresh`: the retry after a
    /// stale one, whose idle siblings are likely stale too), else a slot
    /// for a new connection, else wait.
    fn step(
        state: &mut PoolState<ConnKey, Idle>,
        key: &ConnKey,
        fresh: bool,
        fits: impl Fn(&Idle) -> bool,
    ) -> Step {
        if !fresh {
            match state.pop_idle(key, Instant::now(), fits) {
                Some(Popped::Fresh(idle)) => return Step::Reuse(idle),
                Some(Popped::Expired(idle)) => return Step::Expired(idle),
                None => {}
            }
        }
        match state.open_slot(key) {
            Opened::Slot => Step::Connect(None),
            Opened::Evicted(idle) => Step::Connect(Some(idle)),
            Opened::Full(bound) => Step::Wait(bound),
        }
    }

    /// The checkout loop of both faces, up to connecting and waiting: follows
    /// [`Pool::step`] until it gives a live idle connection, a slot, or
    /// nothing. An idle connection is converted by `into` (the liveness
    /// check, a syscall: never under the lock, where threads sharing the
    /// client would queue behind it); a dead one frees its slot and an
    /// expired one is closed, and the step is taken again. When every slot
    /// is busy, `on_wait` gets the state still locked: a thread keeps the
    /// lock for its condition variable, a task counts itself and unlocks
    /// (a lock guard may not be held across an `.await`).
    fn claim<'p, C, W>(
        &'p self,
        key: &ConnKey,
        fresh: bool,
        fits: impl Fn(&Idle) -> bool + Copy,
        into: impl Fn(Driven) -> Option<C>,
        on_wait: impl FnOnce(MutexGuard<'p, PoolState<ConnKey, Idle>>) -> W,
    ) -> Claim<C, W> {
        loop {
            let mut state = self.lock();
            let generation = state.generation();
            match Pool::step(&mut state, key, fresh, fits) {
                Step::Reuse(Idle { conn, watch }) => {
                    drop(state);
                    match into(conn) {
                        Some(conn) => {
                            return Claim::Reuse {
                                conn,
                                generation,
                                watch,
                            }
                        }
                        None => self.release_slot(key, generation),
                    }
                }
                Step::Expired(idle) => {
                    drop(state);
                    drop(idle);
                    self.wake_one();
                }
                Step::Connect(evicted) => {
                    drop(state);
                    drop(evicted);
                    // No connection is this request's until one is made.
                    self.used(NO_CONNECTION);
                    return Claim::Connect(generation);
                }
                Step::Wait(bound) => return Claim::Wait(on_wait(state), bound),
            }
        }
    }

    /// Whether anyone (thread or task) waits for a slot.
    fn has_waiters(&self) -> bool {
        self.waiting_threads.load(Ordering::Relaxed) + self.waiting_tasks.load(Ordering::Relaxed)
            > 0
    }

    /// Whether a holder may keep a connection past its response (a batch
    /// task, for its next request): nobody waits for a slot and the pool
    /// keeps connections at all.
    pub(crate) fn may_keep(&self) -> bool {
        !self.has_waiters() && self.config.keeps_idle()
    }

    /// Wakes one waiter of each kind after a slot or an idle connection
    /// freed up (call without the lock). The one that does not get it waits
    /// again. Under a `max_per_host` it wakes them all: waiters then wait
    /// for different things (a slot of the pool, a slot of their origin), and
    /// the one woken might not be able to use what freed up while another
    /// could.
    fn wake_one(&self) {
        if self.config.max_per_host.is_some() {
            return self.wake_all();
        }
        if self.waiting_threads.load(Ordering::Relaxed) > 0 {
            self.freed.notify_one();
        }
        if self.waiting_tasks.load(Ordering::Relaxed) > 0 {
            self.freed_async.notify_one();
        }
    }

    /// Wakes every waiter (several slots freed at once).
    fn wake_all(&self) {
        if self.waiting_threads.load(Ordering::Relaxed) > 0 {
            self.freed.notify_all();
        }
        if self.waiting_tasks.load(Ordering::Relaxed) > 0 {
            self.freed_async.notify_waiters();
            // `notify_waiters` leaves no permit: a task counted but not yet
            // parked (`asynchronous.rs`'s `wait`) takes this one.
            self.freed_async.notify_one();
        }
    }

    /// A checkin of either face: `conn` (socket `fd`, checked out in fork
    /// `generation`) goes back among the idle connections of `key`. On its
    /// first idle spell it is registered with the reaper; one its server
    /// closed while it was checked out (the reaper left it to us) is closed.
    fn give_back(
        pool: &Arc<Pool>,
        key: &ConnKey,
        conn: Driven,
        fd: RawFd,
        generation: u64,
        mut watch: Option<Watch>,
    ) {
        if pool.config.keeps_idle() {
            reaper::watch_when_first_idle(&mut watch, fd, generation, pool);
        }
        let alive = !watch.as_ref().is_some_and(Watch::peer_closed);
        let idle = Idle { conn, watch };
        let outcome = pool
            .lock()
            .checkin(key, idle, generation, Instant::now(), alive);
        Pool::checked_in(pool, outcome);
    }

    /// Finishes a checkin (outside the lock): closes what was not kept, has
    /// the reaper end a surplus connection's grace, wakes a waiter.
    fn checked_in(pool: &Arc<Pool>, outcome: CheckedIn<Idle>) {
        match outcome {
            CheckedIn::Kept => {}
            CheckedIn::Surplus(until) => reaper::sweep_at(until, pool),
            CheckedIn::Closed(idle) => drop(idle),
            CheckedIn::Foreign(idle) => idle.dispose_inherited(),
        }
        pool.wake_one();
    }

    /// Frees the slot of a closed connection to `key` of `generation`.
    fn release_slot(&self, key: &ConnKey, generation: u64) {
        self.lock().release(key, generation);
        self.wake_one();
    }

    /// The `PoolTimeout` of a checkout for `key` that waited on `bound`
    /// until its deadline.
    fn wait_timed_out(deadlines: &Deadlines, key: &ConnKey, bound: Bound) -> Error {
        match bound {
            Bound::Pool => deadlines.timed_out(Phase::POOL),
            Bound::Host(max) => {
                let doing = format!(
                    "waiting for a free connection to {}://{}:{} (max_connections_per_host={max})",
                    key.origin.scheme, key.origin.host, key.origin.port
                );
                deadlines.timed_out(Phase::pool(&doing))
            }
        }
    }

    /// Takes a rate-limit token for a request to `origin` (one per request,
    /// whichever driver and protocol carries it): the instant the request
    /// may start, `None` for now (always, without a rate limit). A token
    /// that would come after the pool deadline is not taken: the request
    /// fails at once with `PoolTimeout` (waiting could not help). The wait
    /// itself is the face's (`blocking.rs`, `asynchronous.rs`).
    fn take_token(&self, origin: &Origin, deadlines: &Deadlines) -> Result<Option<Instant>, Error> {
        let Some(rates) = &self.rates else {
            return Ok(None);
        };
        let now = Instant::now();
        let until = deadlines.until(deadlines.timeouts.pool);
        let mut rates = rates.lock().unwrap_or_else(|p| p.into_inner());
        match rates.reserve(origin, now, until) {
            Ok(wait) if wait.is_zero() => Ok(None),
            Ok(wait) => Ok(Some(now + wait)),
            Err(_) => {
                let limit = *rates.limit();
                drop(rates);
                let doing = rate_wait_words(&limit, origin);
                Err(deadlines.timed_out(Phase::pool(&doing)))
            }
        }
    }

    /// Closes every idle connection.
    pub fn close_idle(&self) {
        let closed = self.lock().take_all_idle();
        if !closed.is_empty() {
            drop(closed);
            self.wake_all();
        }
    }

    pub fn idle_count(&self) -> usize {
        self.lock().idle_count()
    }
}

impl Reap for Pool {
    fn reap(&self) {
        let closed = self.lock().take_idle_where(Idle::peer_closed);
        if closed.is_empty() {
            return;
        }
        // Outside the lock: dropping an async connection deregisters it from
        // the runtime's reactor.
        drop(closed);
        self.wake_all();
    }

    fn sweep(self: Arc<Self>) {
        let (closed, next) = self.lock().take_surplus_expired(Instant::now());
        if let Some(next) = next {
            reaper::sweep_at(next, &self);
        }
        if !closed.is_empty() {
            drop(closed);
            self.wake_all();
        }
    }
}

impl Drop for Pool {
    /// A pool dropped in a forked child (a client garbage-collected there)
    /// must not deregister the parent's sockets from the epoll instance
    /// both share: its inherited connections are disposed of as on the
    /// child's first checkout.
    fn drop(&mut self) {
        let generation = fork::generation();
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        if state.generation() != generation {
            state.reset(generation).for_each(Idle::dispose_inherited);
        }
    }
}

/// "waiting for the rate limit of 5 requests/s (burst 1) to
/// http://host:80" (or "of this client" for a limit over all hosts).
fn rate_wait_words(limit: &RateLimit, origin: &Origin) -> String {
    if limit.per_host() {
        format!(
            "waiting for the rate limit of {} requests/s (burst {}) to {}://{}:{}",
            limit.per_second(),
            limit.burst(),
            origin.scheme,
            origin.host,
            origin.port
        )
    } else {
        format!(
            "waiting for the rate limit of {} requests/s (burst {}) of this client",
            limit.per_second(),
            limit.burst()
        )
    }
}

/// A slot of the pool held by a connection kept elsewhere (an HTTP/2
/// connection); freed on drop, waking a waiter of either kind.
pub(crate) struct SlotLease {
    pool: std::sync::Arc<Pool>,
    key: ConnKey,
    generation: u64,
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        self.pool.release_slot(&self.key, self.generation);
    }
}

/// Frees a reserved connection slot unless disarmed (connect succeeded, or
/// the connection now holds it); also when a connecting future is cancelled.
struct SlotGuard<'p> {
    pool: &'p Pool,
    key: &'p ConnKey,
    generation: u64,
    armed: bool,
}

impl<'p> SlotGuard<'p> {
    fn new(pool: &'p Pool, key: &'p ConnKey, generation: u64) -> Self {
        SlotGuard {
            pool,
            key,
            generation,
            armed: true,
        }
    }

    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.pool.release_slot(self.key, self.generation);
        }
    }
}
