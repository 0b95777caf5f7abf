//! The blocking executor: runs a future from the calling thread, parked
//! between polls, inside the process runtime's context (its workers drive the
//! sockets and connection tasks). The sync face of HTTP/2 (`h2/exchange.rs`,
//! `Client::send`) runs on it; it sits below the deadline code, which asks it
//! for wake-ups (`wake_by`).
//!
//! A small executor of our own rather than `Runtime::block_on`: deadlines of
//! the waits inside (`deadline::within`) become the park timeout of this
//! thread instead of timers on the runtime's shared timer wheel, and signals
//! (Ctrl-C) are checked on the same park.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Instant;

use crate::error::{Error, ErrorKind};
use crate::interrupt::{Interrupt, SIGNAL_CHECK_INTERVAL};
use crate::runtime::runtime;

thread_local! {
    /// Inside [`block_on`]: the earliest deadline any pending wait asked for
    /// during the current poll (`Some(None)`: none). Outside: `None`.
    static PARK_DEADLINE: Cell<Option<Option<Instant>>> = const { Cell::new(None) };
}

/// Whether the calling code runs under [`block_on`], which honours
/// [`wake_by`] deadlines (on a runtime worker only timers do).
pub(crate) fn parks_with_deadlines() -> bool {
    PARK_DEADLINE.with(|d| d.get().is_some())
}

/// Asks the enclosing [`block_on`] to poll again by `until`.
pub(crate) fn wake_by(until: Instant) {
    PARK_DEADLINE.with(|d| {
        if let Some(current) = d.get() {
            d.set(Some(Some(current.map_or(until, |c| c.min(until)))));
        }
    });
}

/// Wakes the blocked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Restores the thread-local state when `block_on` ends, panics included.
struct Reset(Option<Option<Instant>>);

impl Drop for Reset {
    fn drop(&mut self) {
        PARK_DEADLINE.with(|d| d.set(self.0));
    }
}

/// Runs `fut` to completion on the calling thread, parked while it waits.
/// Every [`SIGNAL_CHECK_INTERVAL`] of waiting, asks `interrupt` whether to
/// give up (when it may ever say yes on this thread). Must not be called from
/// a runtime thread.
pub(crate) fn block_on<T>(
    fut: impl Future<Output = Result<T, Error>>,
    interrupt: &dyn Interrupt,
) -> Result<T, Error> {
    let _context = runtime().enter();
    let _reset = Reset(PARK_DEADLINE.with(Cell::get));
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    let watch_signals = interrupt.needs_polling();
    let mut next_signal_check = Instant::now() + SIGNAL_CHECK_INTERVAL;
    loop {
        PARK_DEADLINE.with(|d| d.set(Some(None)));
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        let mut until = PARK_DEADLINE.with(Cell::get).flatten();
        if watch_signals {
            until = Some(until.map_or(next_signal_check, |u| u.min(next_signal_check)));
        }
        match until {
            None => thread::park(),
            Some(until) => {
                let left = until.saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    thread::park_timeout(left);
                }
            }
        }
        if watch_signals && Instant::now() >= next_signal_check {
            if interrupt.should_abort() {
                return Err(Error::new(
                    ErrorKind::Interrupted,
                    "interrupted by a signal",
                ));
            }
            next_signal_check = Instant::now() + SIGNAL_CHECK_INTERVAL;
        }
    }
}
