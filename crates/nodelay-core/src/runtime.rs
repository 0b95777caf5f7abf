//! The process's one tokio runtime, for async requests and HTTP/2 connections
//! (docs/design.md: one runtime per process, rebuilt after `fork`).
//!
//! Created on first use, so a program that only makes sync HTTP/1.1 requests
//! never starts its threads. A forked child does not have the parent's worker
//! threads: the first call in a new fork generation builds a fresh runtime and
//! leaks the parent's (dropping it would wait for threads that do not exist).

use std::sync::Mutex;

use tokio::runtime::{Builder, Handle, Runtime};

use crate::fork;

/// Worker threads of the runtime: enough to drive many connections' I/O and
/// TLS in parallel, never more than the machine has cores (the requests'
/// Python work runs on the callers' threads, not here).
pub const RUNTIME_MAX_WORKER_THREADS: usize = 4;

/// The runtime of the current fork generation, if built.
static RUNTIME: Mutex<Option<(u64, &'static Runtime)>> = Mutex::new(None);

fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, RUNTIME_MAX_WORKER_THREADS)
}

thread_local! {
    /// This thread's last answer of [`runtime`], so the common call is one
    /// atomic load instead of a lock every thread contends for.
    static CACHED: std::cell::Cell<Option<(u64, &'static Runtime)>> =
        const { std::cell::Cell::new(None) };
}

/// The runtime for this process (built now if needed, or again after a fork).
pub fn runtime() -> &'static Runtime {
    fork::install();
    let generation = fork::generation();
    if let Some((built_in, rt)) = CACHED.with(std::cell::Cell::get) {
        if built_in == generation {
            return rt;
        }
    }
    let rt = runtime_locked(generation);
    CACHED.with(|cached| cached.set(Some((generation, rt))));
    rt
}

fn runtime_locked(generation: u64) -> &'static Runtime {
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    match *slot {
        Some((built_in, rt)) if built_in == generation => rt,
        _ => {
            let rt = Builder::new_multi_thread()
                .worker_threads(worker_threads())
                .thread_name("nodelay-rt")
                .enable_all()
                .build()
                .expect("nodelay: cannot start the tokio runtime (threads or epoll unavailable)");
            // Leaked on purpose: see the module comment (at most one per fork).
            let rt: &'static Runtime = Box::leak(Box::new(rt));
            *slot = Some((generation, rt));
            rt
        }
    }
}

/// The fork generation of this process (bumped in every forked child), so
/// callers can drop per-process state a child must not reuse.
pub fn fork_generation() -> u64 {
    fork::install();
    fork::generation()
}

/// A handle to [`runtime`], for spawning tasks.
pub fn handle() -> Handle {
    runtime().handle().clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_is_built_once_per_generation() {
        let a = runtime() as *const Runtime;
        let b = runtime() as *const Runtime;
        assert_eq!(a, b);
        assert_eq!(handle().block_on(async { 7 }), 7);
    }
}
