//! The bridge between asyncio and the tokio runtime.
//!
//! A request becomes an asyncio future on the running loop and a Rust future
//! that owns only Rust values. The loop thread polls that Rust future itself
//! (see docs/async.md): the first poll, right where the request is made,
//! writes the request. A plain connection it checks out is watched by the
//! loop itself, off tokio's reactor (`sockets.rs`, nodelay-core's
//! `aio/watched.rs`): when the answer arrives, the loop reports the bridge's
//! epoll set readable and `_ready` wakes the request there, on the loop
//! thread, with no other thread involved. Wake-ups from other threads (the
//! reactor, for a TLS socket; the runtime's timers; a runtime task's outcome)
//! go through the request's waker, which does not take the GIL: it pushes the
//! request's key onto the loop's completion queue and, when the queue was
//! empty, signals an eventfd the loop watches (`loop.add_reader`, see
//! `wake.rs`). The loop thread, which holds the GIL anyway, then drains the
//! whole queue: polls each woken future and completes the asyncio future of
//! each finished one. Many wake-ups cost one signal. A poll never waits: the
//! GIL is held only for the CPU work of moving and parsing bytes already
//! received.
//!
//! Only a request started while no other request of the loop is in flight
//! is driven this way (the sequential case, where the crossing to a runtime
//! thread and back dominates a request's cost). While others are in flight,
//! a request runs as a runtime task from the start: the runtime's threads
//! then read and parse answers beside the loop thread, and wake-ups are
//! shared by many completions, so the loop thread's own time per request,
//! which bounds the throughput, stays smallest.
//!
//! An exchange still unfinished after [`LOCAL_POLLS`] polls (a large body, a
//! TLS handshake) moves to a runtime task, so long work runs on the runtime's
//! threads instead of the loop's; that task pushes its finished outcome onto
//! the same queue.
//!
//! A response body larger than [`LOOP_BODY_LIMIT`] makes the loop start its
//! next request on the runtime, until a request ends with a smaller one: a body
//! buffer allocated by a poll on the loop thread (the main thread, in most
//! programs) comes from glibc's main heap, where it and the `bytes` object
//! copied from it together pass the heap's trim threshold, so every such
//! response shrank and regrew the heap (`brk`) and faulted its pages in again:
//! workload c (335 KiB) ran at half the speed. A runtime thread's buffer comes
//! from that thread's own arena, which stays warm.
//!
//! Cancelling the asyncio task cancels the future; its done-callback drops
//! the Rust future (or aborts its runtime task), which closes the connection
//! it held.
//!
//! One bridge per event loop, cached per thread (a thread runs at most one
//! loop at a time); a forked child builds a new one.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use nodelay_core::aio::{watching, Watcher};
use nodelay_core::runtime;
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};
use tokio::task::AbortHandle;

use crate::aio::sockets::LoopSockets;
use crate::aio::wake::WakeFd;

/// Polls of a request's future on the loop thread before it moves to a
/// runtime task. A request on a kept-alive connection finishes in two (one
/// writes it, one reads the answer), on a new plain-TCP connection in three;
/// a body that arrives in many pieces, or a TLS handshake, takes more, and
/// its CPU work then runs on the runtime's threads, not the loop's.
pub(crate) const LOCAL_POLLS: u32 = 4;

/// The largest response body after which the loop keeps driving requests
/// itself (see the module comment): 64 KiB, well below glibc's smallest trim
/// threshold (128 KiB), and above the small answers that the loop-driven path
/// exists for.
pub(crate) const LOOP_BODY_LIMIT: usize = 64 * 1024;

/// What a finished request hands to the loop thread: builds the Python
/// result (or the exception) with the GIL held. `url` is the request's URL,
/// for exceptions.
pub(crate) trait Complete: Send {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>>;

    /// Bytes of response body this outcome holds in one buffer (see
    /// [`LOOP_BODY_LIMIT`]); 0 for outcomes that hold none.
    fn body_len(&self) -> usize {
        0
    }
}

/// A request's future, type-erased (boxed once: it is a few KiB, every
/// phase's state inline, and moving a pointer is cheaper than copying it).
type Task = Pin<Box<dyn Future<Output = Box<dyn Complete>> + Send>>;

/// A request's future with its outcome boxed: polled in place, where an
/// `async` block awaiting it would move the whole future into its own state
/// on the first poll (a copy of a few KiB per request).
struct Erased<F>(F);

impl<F, C> Future for Erased<F>
where
    F: Future<Output = C>,
    C: Complete + 'static,
{
    type Output = Box<dyn Complete>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: the inner future is never moved out of `self` (structural
        // pinning: `Erased` has no `Drop` and no other field).
        let inner = unsafe { self.map_unchecked_mut(|erased| &mut erased.0) };
        inner
            .poll(cx)
            .map(|outcome| Box::new(outcome) as Box<dyn Complete>)
    }
}

/// An entry of the loop's queue: a runtime task's finished outcome, or a
/// wake-up of a future the loop polls (`outcome: None`).
struct Completion {
    key: usize,
    /// Tells this request from a later one whose future got the same address.
    seq: u64,
    outcome: Option<Box<dyn Complete>>,
}

/// The part of a bridge the other threads see: no Python objects.
struct Shared {
    queue: Mutex<Vec<Completion>>,
    /// Signalled by wakers and tasks, watched and cleared by the loop.
    wake: WakeFd,
    /// Set while the loop's thread wakes requests whose sockets it found
    /// ready (`_ready`): it drains the queue right after, so a push then
    /// need not signal.
    waking_here: AtomicBool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Vec<Completion>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, completion: Completion) {
        let mut queue = self.queue();
        let was_empty = queue.is_empty();
        queue.push(completion);
        drop(queue);
        if was_empty && !self.waking_here.load(Ordering::Acquire) {
            // A queue that was not empty has signalled already, and the loop
            // drains the whole queue on each signal.
            self.wake.signal();
        }
    }
}

/// The waker of a future the loop polls: queues a poll of it.
struct LoopWaker {
    shared: Arc<Shared>,
    key: usize,
    seq: u64,
}

impl Wake for LoopWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.shared.push(Completion {
            key: self.key,
            seq: self.seq,
            outcome: None,
        });
    }
}

/// Who runs a pending request's future.
enum Driver {
    /// The loop thread, on each wake-up. `task` is `None` only while a poll
    /// has it out of the table.
    Loop {
        task: Option<Task>,
        waker: Waker,
        polls: u32,
    },
    /// A runtime task, which queues the outcome when done.
    Runtime(AbortHandle),
}

/// A request in flight, seen from the loop thread.
struct Pending {
    seq: u64,
    future: Py<PyAny>,
    url: Py<PyString>,
    /// The done-callback registered on `future` (`LoopBridge._on_done`),
    /// removed before the future is completed: it has nothing to do then, and
    /// each callback left on a future costs the loop one more handle to run.
    on_done: Py<PyAny>,
    driver: Driver,
}

/// One event loop's end of the bridge (see the module comment).
#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct LoopBridge {
    shared: Arc<Shared>,
    /// The sockets of the requests this loop's thread drives (`sockets.rs`).
    sockets: Arc<LoopSockets>,
    /// `sockets`, as the core's connections hold it.
    watcher: Arc<dyn Watcher>,
    /// Keyed by the address of the asyncio future (unique while it is alive,
    /// and the entry keeps it alive). Only touched with the GIL held.
    pending: Mutex<HashMap<usize, Pending>>,
    /// Sequence numbers of requests (see `Completion::seq`).
    next_seq: AtomicU64,
    /// Set when the last finished request's body was larger than
    /// [`LOOP_BODY_LIMIT`]: the next request starts on the runtime.
    large_bodies: AtomicBool,
    /// The wakers `_ready` takes from `sockets`, empty between turns (kept
    /// for its capacity).
    woken: Mutex<Vec<Waker>>,
}

impl LoopBridge {
    fn pending(&self) -> MutexGuard<'_, HashMap<usize, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn woken(&self) -> MutexGuard<'_, Vec<Waker>> {
        self.woken.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers whether a finished request's body was large (see
    /// [`LOOP_BODY_LIMIT`]).
    fn note_body(&self, outcome: &dyn Complete) {
        self.large_bodies
            .store(outcome.body_len() > LOOP_BODY_LIMIT, Ordering::Relaxed);
    }

    /// Whether the loop thread drives a request starting now: only when no
    /// other request of this loop is in flight and the last body was small.
    fn drives_next(&self) -> bool {
        self.pending().is_empty() && !self.large_bodies.load(Ordering::Relaxed)
    }

    /// Polls every queued future and completes the asyncio futures of the
    /// finished ones (see `_drain`).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        let batch = std::mem::take(&mut *self.shared.queue());
        let mut batch = batch.into_iter();
        while let Some(completion) = batch.next() {
            let (key, seq) = (completion.key, completion.seq);
            let Some(outcome) = completion.outcome.or_else(|| self.poll_woken(key, seq)) else {
                continue;
            };
            self.note_body(outcome.as_ref());
            let entry = {
                let mut pending = self.pending();
                match pending.get(&key) {
                    Some(entry) if entry.seq == seq => pending.remove(&key),
                    // Cancelled meanwhile (and the address maybe reused).
                    _ => None,
                }
            };
            if let Some(entry) = entry {
                let future = entry.future.bind(py);
                let waiters = take_waiters(future, entry.on_done.bind(py));
                complete(py, future, entry.url.bind(py), outcome);
                if let Err(err) = run_waiters(py, future, waiters) {
                    // A KeyboardInterrupt or SystemExit out of a task leaves
                    // the loop as it would leave a loop's handle; what is
                    // left of the batch waits for the next drain.
                    for rest in batch {
                        self.shared.push(rest);
                    }
                    return Err(err);
                }
            }
        }
        Ok(())
    }

    /// Polls the loop-driven future of `key` once (the table lock is not held
    /// meanwhile: the future may wake itself or other requests). Returns its
    /// outcome when it finished; moves it to a runtime task when it used up
    /// its polls.
    fn poll_woken(&self, key: usize, seq: u64) -> Option<Box<dyn Complete>> {
        let (mut task, waker, polls) = {
            let mut pending = self.pending();
            let entry = pending.get_mut(&key).filter(|e| e.seq == seq)?;
            let Driver::Loop { task, waker, polls } = &mut entry.driver else {
                return None; // a stale wake-up of a future now on the runtime
            };
            *polls += 1;
            (task.take()?, waker.clone(), *polls)
        };
        match poll_once(&mut task, &waker, &self.watcher) {
            Poll::Ready(outcome) => Some(outcome),
            Poll::Pending => {
                let driver = if polls >= LOCAL_POLLS {
                    Driver::Runtime(to_runtime(task, &self.shared, key, seq))
                } else {
                    Driver::Loop {
                        task: Some(task),
                        waker,
                        polls,
                    }
                };
                if let Some(entry) = self.pending().get_mut(&key) {
                    entry.driver = driver;
                }
                None
            }
        }
    }
}

/// One poll of `task` on the loop's thread, inside the runtime's context
/// (its timers, and any TLS socket, register with the runtime), with the
/// loop's socket watcher as the thread's (its plain connections are watched
/// by the loop, `sockets.rs`).
fn poll_once(
    task: &mut Task,
    waker: &Waker,
    watcher: &Arc<dyn Watcher>,
) -> Poll<Box<dyn Complete>> {
    let _context = runtime::runtime().enter();
    watching(watcher, || {
        task.as_mut().poll(&mut Context::from_waker(waker))
    })
}

/// Runs `task` to its end on the runtime; its outcome is queued for the loop.
fn to_runtime(task: Task, shared: &Arc<Shared>, key: usize, seq: u64) -> AbortHandle {
    let shared = Arc::clone(shared);
    runtime::runtime()
        .spawn(async move {
            let outcome = task.await;
            shared.push(Completion {
                key,
                seq,
                outcome: Some(outcome),
            });
        })
        .abort_handle()
}

#[pymethods]
impl LoopBridge {
    /// Called by the loop when the wake-up descriptor is readable: polls
    /// every woken future and completes the asyncio futures of the finished
    /// ones, running their waiters' callbacks right here (see
    /// [`take_waiters`]).
    fn _drain(&self, py: Python<'_>) -> PyResult<()> {
        // Cleared before the queue is taken: a signal after this point is
        // for an entry the next drain will see.
        self.shared.wake.clear();
        self.drain(py)
    }

    /// Called by the loop when the socket watcher's descriptor is readable:
    /// wakes the requests whose sockets are ready (their wakers queue them,
    /// without a signal) and drains the queue as `_drain` does.
    fn _ready(&self, py: Python<'_>) -> PyResult<()> {
        let mut woken = std::mem::take(&mut *self.woken());
        self.sockets.take_ready(&mut woken);
        self.shared.waking_here.store(true, Ordering::Release);
        for waker in woken.drain(..) {
            waker.wake();
        }
        self.shared.waking_here.store(false, Ordering::Release);
        // Kept, empty, with its capacity, for the next turn.
        *self.woken() = woken;
        self.drain(py)
    }

    /// Done-callback of every pending future: a cancelled one drops its
    /// request.
    fn _on_done(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = future.as_ptr() as usize;
        if !self.pending().contains_key(&key) {
            return Ok(()); // completed by `_drain`: the usual case
        }
        if future
            .call_method0(intern!(future.py(), "cancelled"))?
            .is_truthy()?
        {
            let entry = self.pending().remove(&key);
            if let Some(Pending {
                driver: Driver::Runtime(abort),
                ..
            }) = &entry
            {
                abort.abort();
            }
            // A loop-driven future is dropped here, outside the table lock
            // (dropping its pool checkout may wake other requests).
            drop(entry);
        }
        Ok(())
    }
}

/// Takes every done-callback off `future` (a pending asyncio future) and
/// returns them, without `on_done` (the bridge's own, which has nothing to do
/// once the request finished), as `(callback, context)` pairs.
///
/// Completing a future schedules its callbacks with `loop.call_soon`, so the
/// task awaiting it would resume only in the loop's next iteration: one more
/// `epoll_wait` and one more pass of the loop's Python code per request.
/// `_drain` runs them itself instead, right after completing the future: it
/// is a loop callback like those the loop would run, with no task current,
/// in the same thread. A future without a readable `_callbacks` keeps the
/// loop's scheduling.
fn take_waiters<'py>(
    future: &Bound<'py, PyAny>,
    on_done: &Bound<'py, PyAny>,
) -> Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let py = future.py();
    let remove = |callback: &Bound<'py, PyAny>| {
        future
            .call_method1(intern!(py, "remove_done_callback"), (callback,))
            .is_ok()
    };
    let listed = future
        .getattr(intern!(py, "_callbacks"))
        .ok()
        .filter(|c| !c.is_none());
    let Some(listed) = listed else {
        remove(on_done);
        return Vec::new();
    };
    let Ok(pairs) = listed.extract::<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>>() else {
        remove(on_done);
        return Vec::new();
    };
    let mut waiters = Vec::with_capacity(pairs.len());
    for (callback, context) in pairs {
        if callback.is(on_done) {
            remove(on_done);
        } else if remove(&callback) {
            waiters.push((callback, context));
        }
    }
    waiters
}

/// Runs the callbacks [`take_waiters`] took, each in its own context, as
/// the loop would (`Handle._run`): an `Exception` goes to the loop's
/// exception handler; a `KeyboardInterrupt` or `SystemExit` is returned, and
/// the callbacks not yet run are scheduled on the loop.
fn run_waiters<'py>(
    py: Python<'py>,
    future: &Bound<'py, PyAny>,
    waiters: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
) -> PyResult<()> {
    let mut waiters = waiters.into_iter();
    while let Some((callback, context)) = waiters.next() {
        let Err(err) = context.call_method1(intern!(py, "run"), (&callback, future)) else {
            continue;
        };
        let event_loop = future.call_method0(intern!(py, "get_loop"))?;
        if !err.is_instance_of::<pyo3::exceptions::PyException>(py) {
            let kwargs = pyo3::types::PyDict::new(py);
            for (callback, context) in waiters {
                kwargs.set_item(intern!(py, "context"), context)?;
                event_loop.call_method(
                    intern!(py, "call_soon"),
                    (callback, future),
                    Some(&kwargs),
                )?;
            }
            return Err(err);
        }
        let report = pyo3::types::PyDict::new(py);
        report.set_item("message", format!("Exception in callback {callback}"))?;
        report.set_item("exception", err.value(py))?;
        report.set_item("future", future)?;
        event_loop.call_method1(intern!(py, "call_exception_handler"), (report,))?;
    }
    Ok(())
}

/// Completes `future` with what `outcome` builds. A future cancelled after
/// the request finished refuses a result (InvalidStateError); nothing is
/// waiting for it, so the result is dropped.
fn complete(
    py: Python<'_>,
    future: &Bound<'_, PyAny>,
    url: &Bound<'_, PyString>,
    outcome: Box<dyn Complete>,
) {
    let _ = match outcome.build(py, url) {
        Ok(value) => future.call_method1(intern!(py, "set_result"), (value,)),
        Err(err) => future.call_method1(intern!(py, "set_exception"), (err.value(py),)),
    };
}

/// The running loop's bridge, cached for this thread.
struct Current {
    event_loop: Py<PyAny>,
    bridge: Py<LoopBridge>,
    /// `bridge._on_done`, bound once.
    on_done: Py<PyAny>,
    generation: u64,
    /// Whether the loop records the thread running it in `_thread_id`
    /// (asyncio's own loops do; see [`running_cached`]).
    has_thread_id: bool,
    /// What [`running_marker`] read when `event_loop` was found running on
    /// this thread (see [`running_cached`]).
    marker: Option<Py<PyAny>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The key under which CPython's `_asyncio` keeps the running loop of a
/// thread in that thread's state dictionary (`asyncio._set_running_loop`).
const RUNNING_LOOP_KEY: &str = "__asyncio_running_event_loop__";

/// What this thread's state dictionary holds under [`RUNNING_LOOP_KEY`]:
/// `_set_running_loop` stores a new object there each time a loop starts or
/// stops running on the thread, so while the object is the one seen when a
/// loop was found running, that loop still runs here. `None` when the
/// interpreter keeps the running loop elsewhere.
fn running_marker(py: Python<'_>) -> Option<Bound<'_, PyAny>> {
    // SAFETY: the GIL is held; the result is a borrowed reference to this
    // thread's dictionary, or NULL (without an exception set).
    let dict = unsafe { Bound::from_borrowed_ptr_or_opt(py, pyo3::ffi::PyThreadState_GetDict())? };
    dict.cast_into::<PyDict>()
        .ok()?
        .get_item(intern!(py, RUNNING_LOOP_KEY))
        .ok()
        .flatten()
}

fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let get = GET_RUNNING_LOOP.get_or_try_init(py, || {
        py.import("asyncio")?
            .getattr("get_running_loop")
            .map(Bound::unbind)
    })?;
    get.bind(py).call0()
}

/// The cached loop of this thread when it is the one running here, known
/// without `asyncio.get_running_loop` (which makes a `getpid` system call on
/// every call, to notice a fork). An asyncio loop sets `_thread_id` to the
/// ident of the thread running it (`threading.get_ident`, which is
/// `pthread_self`) and clears it when it stops; a thread runs at most one
/// loop at a time, so a cached loop running on this thread is the running
/// loop. A loop without `_thread_id` (uvloop's) is known running here by
/// [`running_marker`] instead. A fork is noticed by the fork generation.
fn running_cached(py: Python<'_>) -> Option<(Bound<'_, PyAny>, Py<LoopBridge>, Py<PyAny>)> {
    let generation = runtime::fork_generation();
    // Cloned out first: no Python code runs while the cell is borrowed.
    let (event_loop, bridge, on_done, has_thread_id, marker) = CURRENT.with_borrow(|current| {
        current
            .as_ref()
            .filter(|c| c.generation == generation)
            .map(|c| {
                (
                    c.event_loop.clone_ref(py),
                    c.bridge.clone_ref(py),
                    c.on_done.clone_ref(py),
                    c.has_thread_id,
                    c.marker.as_ref().map(|m| m.clone_ref(py)),
                )
            })
    })?;
    let event_loop = event_loop.into_bound(py);
    if !has_thread_id {
        let seen = running_marker(py)?;
        return marker
            .is_some_and(|m| m.bind(py).is(&seen))
            .then_some((event_loop, bridge, on_done));
    }
    let runner: u64 = event_loop
        .getattr(intern!(py, "_thread_id"))
        .ok()?
        .extract()
        .ok()?;
    // SAFETY: pthread_self has no preconditions and cannot fail.
    let this_thread = unsafe { libc::pthread_self() } as u64;
    (runner == this_thread).then_some((event_loop, bridge, on_done))
}

/// The bridge of the loop running on this thread (built and registered
/// with the loop on first use).
fn current(py: Python<'_>) -> PyResult<(Bound<'_, PyAny>, Py<LoopBridge>, Py<PyAny>)> {
    if let Some(found) = running_cached(py) {
        return Ok(found);
    }
    let event_loop = running_loop(py)?;
    let marker = running_marker(py).map(Bound::unbind);
    let generation = runtime::fork_generation();
    let cached = CURRENT.with_borrow_mut(|current| {
        current
            .as_mut()
            .filter(|c| c.generation == generation && c.event_loop.bind(py).is(&event_loop))
            .map(|c| {
                let fresh = marker.as_ref().map(|m| m.clone_ref(py));
                let stale = std::mem::replace(&mut c.marker, fresh);
                (c.bridge.clone_ref(py), c.on_done.clone_ref(py), stale)
            })
    });
    // The stale marker is dropped here, after the cell's borrow: releasing it
    // may run Python code.
    if let Some((bridge, on_done, _stale)) = cached {
        return Ok((event_loop, bridge, on_done));
    }
    let wake = WakeFd::new().map_err(|e| {
        PyRuntimeError::new_err(format!("cannot create the wake-up descriptor: {e}"))
    })?;
    let fd = wake.raw();
    let sockets =
        Arc::new(LoopSockets::new().map_err(|e| {
            PyRuntimeError::new_err(format!("cannot create the socket watcher: {e}"))
        })?);
    let sockets_fd = sockets.raw();
    let bridge = Py::new(
        py,
        LoopBridge {
            shared: Arc::new(Shared {
                queue: Mutex::new(Vec::new()),
                wake,
                waking_here: AtomicBool::new(false),
            }),
            watcher: Arc::clone(&sockets) as Arc<dyn Watcher>,
            sockets,
            pending: Mutex::new(HashMap::new()),
            next_seq: AtomicU64::new(0),
            large_bodies: AtomicBool::new(false),
            woken: Mutex::new(Vec::new()),
        },
    )?;
    let on_done = bridge.bind(py).getattr(intern!(py, "_on_done"))?.unbind();
    event_loop.call_method1(
        intern!(py, "add_reader"),
        (fd, bridge.bind(py).getattr(intern!(py, "_drain"))?),
    )?;
    event_loop.call_method1(
        intern!(py, "add_reader"),
        (sockets_fd, bridge.bind(py).getattr(intern!(py, "_ready"))?),
    )?;
    let has_thread_id = event_loop.hasattr(intern!(py, "_thread_id"))?;
    let previous = CURRENT.with_borrow_mut(|current| {
        current.replace(Current {
            event_loop: event_loop.clone().unbind(),
            bridge: bridge.clone_ref(py),
            on_done: on_done.clone_ref(py),
            generation,
            has_thread_id,
            marker,
        })
    });
    // The previous loop of this thread is not running any more; unhook it if
    // it still can be (a closed loop has nothing to unhook). Not in a forked
    // child: there the old loop's selector is shared with the parent.
    if let Some(previous) = previous.filter(|p| p.generation == generation) {
        let old_loop = previous.event_loop.bind(py);
        let closed = old_loop
            .call_method0(intern!(py, "is_closed"))
            .and_then(|c| c.is_truthy())
            .unwrap_or(true);
        if !closed {
            let old = previous.bridge.get();
            for old_fd in [old.shared.wake.raw(), old.sockets.raw()] {
                let _ = old_loop.call_method1(intern!(py, "remove_reader"), (old_fd,));
            }
        }
    }
    Ok((event_loop, bridge, on_done))
}

/// Starts `task` and returns an asyncio future (on the running loop) that
/// completes with what its outcome builds. When no other request of the loop
/// is in flight, the first poll runs here, on the loop thread (see the module
/// comment): a request whose answer is already at hand completes without any
/// wake-up. `task` must own everything it
/// uses: no Python object crosses into it.
///
/// Inlined, so the caller's future is boxed where it is built: each move of
/// it by value would copy its few KiB.
#[inline(always)]
pub(crate) fn start<'py, F, C>(
    py: Python<'py>,
    url: &Bound<'py, PyString>,
    task: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = C> + Send + 'static,
    C: Complete + 'static,
{
    start_with(py, url, Box::pin(Erased(task)), false)
}

/// [`start`] for a task that often finishes in its first poll (a read of a
/// response body, whose bytes usually came with the head): that poll runs
/// here, on the loop thread, even while other requests are in flight, since
/// a runtime task would cost two crossings between threads for a copy of
/// bytes at hand. A task still pending after it goes on as [`start`] says.
/// Not after a large body (see [`LOOP_BODY_LIMIT`]). Inlined as [`start`] is.
#[inline(always)]
pub(crate) fn start_local<'py, F, C>(
    py: Python<'py>,
    url: &Bound<'py, PyString>,
    task: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = C> + Send + 'static,
    C: Complete + 'static,
{
    start_with(py, url, Box::pin(Erased(task)), true)
}

fn start_with<'py>(
    py: Python<'py>,
    url: &Bound<'py, PyString>,
    mut task: Task,
    poll_here: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (event_loop, bridge, on_done) = current(py)?;
    let bridge = bridge.get();
    let future = event_loop.call_method0(intern!(py, "create_future"))?;
    let key = future.as_ptr() as usize;
    let seq = bridge.next_seq.fetch_add(1, Ordering::Relaxed);
    let drives = bridge.drives_next();
    let driver = if drives || (poll_here && !bridge.large_bodies.load(Ordering::Relaxed)) {
        let waker = Waker::from(Arc::new(LoopWaker {
            shared: Arc::clone(&bridge.shared),
            key,
            seq,
        }));
        if let Poll::Ready(outcome) = poll_once(&mut task, &waker, &bridge.watcher) {
            bridge.note_body(outcome.as_ref());
            complete(py, &future, url, outcome);
            return Ok(future);
        }
        if drives {
            Driver::Loop {
                task: Some(task),
                waker,
                polls: 1,
            }
        } else {
            // Others are in flight: the rest runs on the runtime (a wake-up
            // of this first poll's waker is then ignored as stale).
            Driver::Runtime(to_runtime(task, &bridge.shared, key, seq))
        }
    } else {
        // Other requests of this loop are in flight, or the last body was
        // large: see the module comment.
        Driver::Runtime(to_runtime(task, &bridge.shared, key, seq))
    };
    future.call_method1(intern!(py, "add_done_callback"), (&on_done,))?;
    bridge.pending().insert(
        key,
        Pending {
            seq,
            future: future.clone().unbind(),
            url: url.clone().unbind(),
            on_done,
            driver,
        },
    );
    Ok(future)
}

/// An already completed future holding `value` (for reads of a finished stream).
pub(crate) fn ready<'py>(py: Python<'py>, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let event_loop = running_loop(py)?;
    let future = event_loop.call_method0(intern!(py, "create_future"))?;
    future.call_method1(intern!(py, "set_result"), (value,))?;
    Ok(future)
}
