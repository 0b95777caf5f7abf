//! The bridge between asyncio and the tokio runtime.
//!
//! A request becomes an asyncio future on the running loop and a tokio task
//! that owns only Rust values. The task never takes the GIL: it pushes its
//! outcome onto the loop's completion queue and, when the queue was empty,
//! writes one byte to a socket pair the loop watches (`loop.add_reader`).
//! The loop thread, which holds the GIL anyway, then drains the whole queue:
//! builds each result and completes its future. Many completions cost one
//! wake-up, and a runtime thread never waits for the GIL (which a busy loop
//! thread holds for up to the 5 ms switch interval).
//!
//! Cancelling the asyncio task cancels the future; its done-callback aborts
//! the tokio task, whose dropped future closes the connection it held.
//!
//! One bridge per event loop, cached per thread (a thread runs at most one
//! loop at a time); a forked child builds a new one.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, MutexGuard};

use nodelay_core::runtime;
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use tokio::task::AbortHandle;

/// Bytes drained from the wake-up socket per `read` (one per batch of
/// completions, so a few at most).
const WAKE_DRAIN_BYTES: usize = 256;

/// What a finished task hands to the loop thread: builds the Python result
/// (or the exception) with the GIL held. `url` is the request's URL, for
/// exceptions.
pub(crate) trait Complete: Send {
    fn build(self: Box<Self>, py: Python<'_>, url: &Bound<'_, PyString>) -> PyResult<Py<PyAny>>;
}

struct Completion {
    key: usize,
    /// Tells this request from a later one whose future got the same address.
    seq: u64,
    outcome: Box<dyn Complete>,
}

/// The part of a bridge the tokio tasks see: no Python objects.
struct Shared {
    queue: Mutex<Vec<Completion>>,
    /// Written by tasks, read by the loop.
    wake_tx: UnixStream,
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
        if was_empty {
            // WouldBlock means the socket is full of wake-ups the loop has
            // not read yet: it will drain the queue anyway.
            let _ = (&self.wake_tx).write(&[1]);
        }
    }
}

/// A request in flight, seen from the loop thread.
struct Pending {
    seq: u64,
    future: Py<PyAny>,
    url: Py<PyString>,
    abort: AbortHandle,
}

/// One event loop's end of the bridge (see the module comment).
#[pyclass(frozen, module = "nodelay._core")]
pub(crate) struct LoopBridge {
    shared: Arc<Shared>,
    wake_rx: UnixStream,
    /// Keyed by the address of the asyncio future (unique while it is alive,
    /// and the entry keeps it alive). Only touched with the GIL held.
    pending: Mutex<HashMap<usize, Pending>>,
    /// Sequence numbers of requests (see `Completion::seq`).
    next_seq: std::sync::atomic::AtomicU64,
}

impl LoopBridge {
    fn pending(&self) -> MutexGuard<'_, HashMap<usize, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl LoopBridge {
    /// Called by the loop when the wake-up socket is readable: completes the
    /// futures of every finished task.
    fn _drain(&self, py: Python<'_>) {
        let mut sink = [0u8; WAKE_DRAIN_BYTES];
        loop {
            match (&self.wake_rx).read(&mut sink) {
                Ok(n) if n == sink.len() => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                _ => break,
            }
        }
        let batch = std::mem::take(&mut *self.shared.queue());
        for completion in batch {
            let entry = {
                let mut pending = self.pending();
                match pending.get(&completion.key) {
                    Some(entry) if entry.seq == completion.seq => pending.remove(&completion.key),
                    // Cancelled meanwhile (and the address maybe reused).
                    _ => None,
                }
            };
            let Some(entry) = entry else {
                continue;
            };
            let future = entry.future.bind(py);
            let url = entry.url.bind(py);
            // A future cancelled after the task finished refuses a result
            // (InvalidStateError); nothing is waiting for it, so it is dropped.
            let _ = match completion.outcome.build(py, url) {
                Ok(value) => future.call_method1(intern!(py, "set_result"), (value,)),
                Err(err) => future.call_method1(intern!(py, "set_exception"), (err.value(py),)),
            };
        }
    }

    /// Done-callback of every future: a cancelled one aborts its task.
    fn _on_done(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = future.as_ptr() as usize;
        if !self.pending().contains_key(&key) {
            return Ok(()); // completed by `_drain`: the usual case
        }
        if future
            .call_method0(intern!(future.py(), "cancelled"))?
            .is_truthy()?
        {
            if let Some(entry) = self.pending().remove(&key) {
                entry.abort.abort();
            }
        }
        Ok(())
    }
}

/// The running loop's bridge, cached for this thread.
struct Current {
    event_loop: Py<PyAny>,
    bridge: Py<LoopBridge>,
    /// `bridge._on_done`, bound once.
    on_done: Py<PyAny>,
    generation: u64,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let get = GET_RUNNING_LOOP.get_or_try_init(py, || {
        py.import("asyncio")?
            .getattr("get_running_loop")
            .map(Bound::unbind)
    })?;
    get.bind(py).call0()
}

/// The bridge of the loop running on this thread (built and registered
/// with the loop on first use).
fn current(py: Python<'_>) -> PyResult<(Bound<'_, PyAny>, Py<LoopBridge>, Py<PyAny>)> {
    let event_loop = running_loop(py)?;
    let generation = runtime::fork_generation();
    let cached = CURRENT.with_borrow(|current| {
        current
            .as_ref()
            .filter(|c| c.generation == generation && c.event_loop.bind(py).is(&event_loop))
            .map(|c| (c.bridge.clone_ref(py), c.on_done.clone_ref(py)))
    });
    if let Some((bridge, on_done)) = cached {
        return Ok((event_loop, bridge, on_done));
    }
    let (wake_rx, wake_tx) = UnixStream::pair()
        .and_then(|(rx, tx)| {
            rx.set_nonblocking(true)?;
            tx.set_nonblocking(true)?;
            Ok((rx, tx))
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot create the wake-up socket: {e}")))?;
    let fd = wake_rx.as_raw_fd();
    let bridge = Py::new(
        py,
        LoopBridge {
            shared: Arc::new(Shared {
                queue: Mutex::new(Vec::new()),
                wake_tx,
            }),
            wake_rx,
            pending: Mutex::new(HashMap::new()),
            next_seq: std::sync::atomic::AtomicU64::new(0),
        },
    )?;
    let on_done = bridge.bind(py).getattr(intern!(py, "_on_done"))?.unbind();
    event_loop.call_method1(
        intern!(py, "add_reader"),
        (fd, bridge.bind(py).getattr(intern!(py, "_drain"))?),
    )?;
    let previous = CURRENT.with_borrow_mut(|current| {
        current.replace(Current {
            event_loop: event_loop.clone().unbind(),
            bridge: bridge.clone_ref(py),
            on_done: on_done.clone_ref(py),
            generation,
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
            let old_fd = previous.bridge.get().wake_rx.as_raw_fd();
            let _ = old_loop.call_method1(intern!(py, "remove_reader"), (old_fd,));
        }
    }
    Ok((event_loop, bridge, on_done))
}

/// Runs `task` on the tokio runtime and returns an asyncio future (on the
/// running loop) that completes with what its outcome builds. `task` must
/// own everything it uses: no Python object crosses into it.
pub(crate) fn spawn<'py, F, C>(
    py: Python<'py>,
    url: &Bound<'py, PyString>,
    task: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = C> + Send + 'static,
    C: Complete + 'static,
{
    let (event_loop, bridge, on_done) = current(py)?;
    let bridge = bridge.get();
    let future = event_loop.call_method0(intern!(py, "create_future"))?;
    let key = future.as_ptr() as usize;
    let seq = bridge
        .next_seq
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let shared = Arc::clone(&bridge.shared);
    // A request's future is a few KiB (every phase's state inline): boxed
    // once here, the spawn below moves a pointer instead of memcpy-ing it
    // into tokio's task cell through several frames (~5 copies, ~19k
    // instructions per request, callgrind).
    let task = Box::pin(task);
    let handle = runtime::handle().spawn(async move {
        let outcome = task.await;
        shared.push(Completion {
            key,
            seq,
            outcome: Box::new(outcome),
        });
    });
    future.call_method1(intern!(py, "add_done_callback"), (on_done,))?;
    bridge.pending().insert(
        key,
        Pending {
            seq,
            future: future.clone().unbind(),
            url: url.clone().unbind(),
            abort: handle.abort_handle(),
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
