//! Closes idle pooled connections as soon as their server closes them, so a
//! connection the server gave up on does not sit in CLOSE-WAIT until the
//! pool is next used (docs/pool.md, "Reaping").
//!
//! One thread per process waits in `epoll_wait` on an epoll instance of its
//! own. A pool registers each connection there once, when it first goes idle
//! (`EPOLL_CTL_ADD`, one syscall per connection, none per request), asking
//! only for `EPOLLRDHUP` edge-triggered: the kernel wakes the thread when the
//! peer's FIN (or an RST, `EPOLLHUP`/`EPOLLERR`) arrives, never for response
//! bytes, so a connection in use costs the thread nothing. On a wake-up the
//! thread marks the connection's [`Watch`] closed and asks its pool to drop
//! the idle connections so marked; a connection checked out at that moment
//! is dropped by the pool when it comes back instead of being kept. Closing
//! a socket removes it from the epoll set by itself (no `EPOLL_CTL_DEL`).
//!
//! The same thread ends the grace of idle connections a pool keeps beyond
//! its keep-alive cap (`limits::SURPLUS_IDLE_GRACE`): a pool asks for a
//! sweep at an instant ([`sweep_at`]) and the thread's `epoll_wait` times out
//! then. Asking costs a lock and, when no earlier sweep is due, one write to
//! an eventfd in the epoll set that makes the thread look at its timers again.
//!
//! Fork: the thread does not exist in a child. The first registration in a
//! new fork generation makes a fresh epoll instance and thread; inherited
//! watches are left alone (their pools drop the inherited connections). A
//! `pthread_atfork` handler keeps a fork from landing while the thread holds
//! a pool's lock (the child would find that lock held forever).

use std::collections::HashMap;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};
use std::time::Instant;

use crate::fork;

/// Events taken from the kernel per `epoll_wait`: a burst of server closes
/// larger than this is simply handled over several calls.
const EVENTS_PER_WAIT: usize = 64;

/// Stack of the reaper thread: it only looks up a map and takes pool locks.
const REAPER_STACK_BYTES: usize = 128 * 1024;

/// A pool whose idle connections the reaper can close.
pub(crate) trait Reap: Send + Sync {
    /// Drops every idle connection whose [`Watch`] is marked closed.
    fn reap(&self);

    /// Drops the idle connections kept beyond the keep-alive cap whose
    /// grace ended (and asks for the next sweep if some remain).
    fn sweep(self: Arc<Self>);
}

/// The epoll token of the reaper's eventfd (connection tokens start at 1).
const WAKE_TOKEN: u64 = 0;

/// A connection's registration with the reaper; dropping it forgets the
/// connection (drop it with, or after, the socket).
pub(crate) struct Watch {
    token: u64,
    generation: u64,
    closed: Arc<AtomicBool>,
    reaper: Arc<Reaper>,
}

impl Watch {
    /// Whether the peer closed (or reset) the connection since it was
    /// registered. One atomic load, no syscall.
    pub fn peer_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // A watch inherited from the parent belongs to a reaper whose thread
        // does not exist here: nothing to tell it.
        if self.generation == fork::generation() {
            self.reaper.lock().remove(&self.token);
        }
    }
}

struct Entry {
    closed: Arc<AtomicBool>,
    pool: Weak<dyn Reap>,
}

/// The reaper of one fork generation.
struct Reaper {
    epoll: RawFd,
    /// An eventfd in the epoll set: written when a sweep is asked for
    /// earlier than any other, so the thread's wait ends in time.
    wake: RawFd,
    watched: Mutex<HashMap<u64, Entry>>,
    /// Sweeps asked for: when, and of which pool (one per pool).
    sweeps: Mutex<Vec<(Instant, Weak<dyn Reap>)>>,
}

impl Reaper {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Entry>> {
        self.watched.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sweeps(&self) -> MutexGuard<'_, Vec<(Instant, Weak<dyn Reap>)>> {
        self.sweeps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long `epoll_wait` may wait: until the earliest sweep (in whole
    /// milliseconds, rounded up), or for ever (-1).
    fn wait_ms(&self) -> libc::c_int {
        let Some(earliest) = self.sweeps().iter().map(|(at, _)| *at).min() else {
            return -1;
        };
        let left = earliest.saturating_duration_since(Instant::now());
        let ms = left.as_nanos().div_ceil(1_000_000);
        ms.min(libc::c_int::MAX as u128) as libc::c_int
    }

    /// Takes the sweeps due by now.
    fn due_sweeps(&self) -> Vec<Arc<dyn Reap>> {
        let now = Instant::now();
        let mut due = Vec::new();
        self.sweeps().retain(|(at, pool)| {
            if *at > now {
                return true;
            }
            due.extend(pool.upgrade());
            false
        });
        due
    }
}

/// The reaper of the current fork generation, once started (`None` inside:
/// it could not be started in this generation, and is not tried again).
static REAPER: Mutex<Option<(u64, Option<Arc<Reaper>>)>> = Mutex::new(None);

/// Tokens are never reused in a process (not even across fork generations),
/// so an event or a watch of a closed connection never names a new one.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The reaper of this fork generation, started now if needed (`None` if the
/// system refused an epoll instance or a thread: connections are then only
/// checked when reused, as without a reaper, and no request pays for
/// another attempt).
fn reaper() -> Option<Arc<Reaper>> {
    fork::install();
    install_fork_gate();
    let generation = fork::generation();
    let mut slot = REAPER.lock().unwrap_or_else(|p| p.into_inner());
    match &*slot {
        Some((built_in, reaper)) if *built_in == generation => return reaper.clone(),
        // The reaper of an earlier generation (a parent's, in a child): its
        // thread does not exist here and inherited watches still point to
        // it; only this process's copy of its epoll descriptor is closed.
        Some((_, Some(old))) => {
            // SAFETY: the child's copies of the parent's epoll and eventfd
            // descriptors; nothing in this process waits on them (its thread
            // was not forked).
            unsafe {
                libc::close(old.epoll);
                libc::close(old.wake);
            }
        }
        _ => {}
    }
    let reaper = start();
    *slot = Some((generation, reaper.clone()));
    reaper
}

/// A new epoll instance and the thread that waits on it.
fn start() -> Option<Arc<Reaper>> {
    // SAFETY: plain syscall; the descriptor is owned by the reaper from here on.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epoll < 0 {
        return None;
    }
    // SAFETY: plain syscall; the descriptor is owned by the reaper from here on.
    let wake = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    let mut event = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: WAKE_TOKEN,
    };
    // SAFETY: `wake` is the eventfd just made (or -1, which epoll_ctl
    // refuses), `event` a valid epoll_event for the duration of the call.
    if wake < 0 || unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, wake, &mut event) } != 0 {
        // SAFETY: descriptors created above and used by nothing else.
        unsafe {
            libc::close(epoll);
            if wake >= 0 {
                libc::close(wake);
            }
        }
        return None;
    }
    let reaper = Arc::new(Reaper {
        epoll,
        wake,
        watched: Mutex::new(HashMap::new()),
        sweeps: Mutex::new(Vec::new()),
    });
    let running = Arc::clone(&reaper);
    let spawned = std::thread::Builder::new()
        .name("nodelay-reaper".into())
        .stack_size(REAPER_STACK_BYTES)
        .spawn(move || run(&running));
    if spawned.is_err() {
        // SAFETY: the descriptors were created above and are used by nothing else.
        unsafe {
            libc::close(epoll);
            libc::close(wake);
        }
        return None;
    }
    Some(reaper)
}

/// Registers a connection going back to `pool` the first time it goes idle
/// (`watch` still empty), for its whole life: one syscall per connection,
/// none per request. A connection from before a fork is left alone (its pool
/// drops it). Call it outside the pool's lock.
pub(crate) fn watch_when_first_idle<P: Reap + 'static>(
    watch: &mut Option<Watch>,
    fd: RawFd,
    generation: u64,
    pool: &Arc<P>,
) {
    if watch.is_none() && generation == fork::generation() {
        let pool: Weak<P> = Arc::downgrade(pool);
        *watch = self::watch(fd, pool);
    }
}

/// Has the reaper thread call `pool.sweep()` at `at` (or earlier, when the
/// pool asked for an earlier sweep already). Without a reaper (the system
/// refused one) surplus connections close at their next checkout instead.
pub(crate) fn sweep_at<P: Reap + 'static>(at: Instant, pool: &Arc<P>) {
    let Some(reaper) = reaper() else {
        return;
    };
    let pool: Weak<P> = Arc::downgrade(pool);
    let pool: Weak<dyn Reap> = pool;
    let mut sweeps = reaper.sweeps();
    if sweeps
        .iter()
        .any(|(when, p)| Weak::ptr_eq(p, &pool) && *when <= at)
    {
        return;
    }
    let earliest = sweeps.iter().map(|(when, _)| *when).min();
    sweeps.retain(|(_, p)| !Weak::ptr_eq(p, &pool));
    sweeps.push((at, pool));
    drop(sweeps);
    if earliest.is_none_or(|earliest| at < earliest) {
        let one: u64 = 1;
        // SAFETY: `wake` is the reaper's open eventfd; `one` is 8 readable bytes.
        unsafe { libc::write(reaper.wake, (&one as *const u64).cast(), 8) };
    }
}

/// Registers the connection on `fd` (a TCP socket owned by a connection of
/// `pool`) so that a close by its peer marks the returned watch and makes the
/// reaper call `pool.reap()`.
pub(crate) fn watch(fd: RawFd, pool: Weak<dyn Reap>) -> Option<Watch> {
    let reaper = reaper()?;
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let closed = Arc::new(AtomicBool::new(false));
    reaper.lock().insert(
        token,
        Entry {
            closed: Arc::clone(&closed),
            pool,
        },
    );
    let mut event = libc::epoll_event {
        events: (libc::EPOLLRDHUP | libc::EPOLLET) as u32,
        u64: token,
    };
    // SAFETY: `fd` is an open socket owned by the caller's connection and
    // `event` is a valid epoll_event for the duration of the call.
    let added = unsafe { libc::epoll_ctl(reaper.epoll, libc::EPOLL_CTL_ADD, fd, &mut event) };
    let watch = Watch {
        token,
        generation: fork::generation(),
        closed,
        reaper,
    };
    // Not watched (the descriptor is not a socket epoll accepts): the entry
    // goes with `watch`, and the pool's check at reuse still applies.
    (added == 0).then_some(watch)
}

/// The reaper thread: waits for peer closes, marks them, has the pools drop
/// their idle connections so marked.
fn run(reaper: &Reaper) {
    block_signals();
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS_PER_WAIT];
    loop {
        // SAFETY: `events` is a valid writable array of EVENTS_PER_WAIT entries.
        let n = unsafe {
            libc::epoll_wait(
                reaper.epoll,
                events.as_mut_ptr(),
                EVENTS_PER_WAIT as libc::c_int,
                reaper.wait_ms(),
            )
        };
        if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            // The epoll instance is unusable (never expected): stop, and let
            // the pools' check at reuse do the work, rather than spin.
            return;
        }
        // n < 0: EINTR (signals are blocked, but a debugger may still
        // interrupt); n == 0: a sweep is due.
        let events = &events[..n.max(0) as usize];
        let _gate = ForkGate::enter();
        for pool in reaper.due_sweeps() {
            pool.sweep();
        }
        let mut pools: Vec<Arc<dyn Reap>> = Vec::new();
        {
            let watched = reaper.lock();
            for event in events {
                let token = event.u64;
                if token == WAKE_TOKEN {
                    let mut count: u64 = 0;
                    // SAFETY: `wake` is the reaper's open non-blocking
                    // eventfd; `count` is 8 writable bytes.
                    unsafe { libc::read(reaper.wake, (&mut count as *mut u64).cast(), 8) };
                    continue;
                }
                let Some(entry) = watched.get(&token) else {
                    continue;
                };
                entry.closed.store(true, Ordering::Release);
                if let Some(pool) = entry.pool.upgrade() {
                    if !pools.iter().any(|p| Arc::ptr_eq(p, &pool)) {
                        pools.push(pool);
                    }
                }
            }
        }
        for pool in &pools {
            pool.reap();
        }
        // A pool whose client is gone meanwhile is dropped here, after the
        // map's lock is released (its connections' watches take that lock).
        drop(pools);
    }
}

/// Signals are for the program's own threads (Python runs its handlers on
/// the main thread; a signal delivered here would not interrupt the call
/// that waits for it there).
fn block_signals() {
    // SAFETY: `set` is initialised by sigfillset before use; changing this
    // thread's own mask has no other effect.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// A pthread mutex the reaper thread holds while it touches pools, and
/// `fork` holds from its prepare handler until the child (and the parent)
/// resume: a fork never copies a pool lock the reaper holds. A raw pthread
/// mutex because it is locked and unlocked in different handler calls.
struct ForkGate;

static GATE: GateCell = GateCell(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
static GATE_HANDLERS: Once = Once::new();

struct GateCell(std::cell::UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: the cell is only used through pthread_mutex_* calls, which
// synchronise access themselves.
unsafe impl Sync for GateCell {}

impl ForkGate {
    fn enter() -> ForkGate {
        gate_lock();
        ForkGate
    }
}

impl Drop for ForkGate {
    fn drop(&mut self) {
        gate_unlock();
    }
}

extern "C" fn gate_lock() {
    // SAFETY: GATE is a statically initialised pthread mutex that lives for
    // the whole program.
    unsafe {
        libc::pthread_mutex_lock(GATE.0.get());
    }
}

extern "C" fn gate_unlock() {
    // SAFETY: called by the thread that locked GATE (the reaper after its
    // work; the forking thread in the parent and, as the same thread, in the
    // child).
    unsafe {
        libc::pthread_mutex_unlock(GATE.0.get());
    }
}

fn install_fork_gate() {
    GATE_HANDLERS.call_once(|| {
        // SAFETY: the handlers only lock/unlock a static mutex and live for
        // the whole program.
        unsafe {
            libc::pthread_atfork(Some(gate_lock), Some(gate_unlock), Some(gate_unlock));
        }
    });
}
