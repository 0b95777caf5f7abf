//! Timeouts as deadlines: each blocking point gets the smaller of its phase
//! timeout and what is left of the total; no timer threads.

use std::time::{Duration, Instant};

/// Per-phase timeouts of one request; `None` disables one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timeouts {
    pub connect: Option<Duration>,
    /// Inactivity: the longest wait for any byte of the response.
    pub read: Option<Duration>,
    pub write: Option<Duration>,
    pub pool: Option<Duration>,
    /// Whole request, from start to the last body byte.
    pub total: Option<Duration>,
}

/// The deadlines of one request in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    pub timeouts: Timeouts,
    pub total: Option<Instant>,
}

/// The budget for one blocking wait, or `Expired` when the total ran out.
pub(crate) enum Budget {
    Wait(Option<Duration>),
    Expired,
}

impl Deadlines {
    pub fn start(timeouts: Timeouts, now: Instant) -> Self {
        Deadlines {
            timeouts,
            total: timeouts.total.map(|t| now + t),
        }
    }

    /// Budget of a wait whose own timeout is `phase`.
    /// A zero budget (a phase timeout of 0, or the total used up) is
    /// `Expired`: a zero socket timeout would mean "wait forever" to the OS.
    pub fn budget(&self, phase: Option<Duration>) -> Budget {
        if phase.is_some_and(|p| p.is_zero()) {
            return Budget::Expired;
        }
        let Some(total) = self.total else {
            return Budget::Wait(phase);
        };
        let left = total.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Budget::Expired;
        }
        Budget::Wait(Some(phase.map_or(left, |p| p.min(left))))
    }

    /// The instant a wait of `phase` must end (for condvar/poll waits).
    pub fn until(&self, phase: Option<Duration>) -> Option<Instant> {
        let phase_end = phase.map(|p| Instant::now() + p);
        match (phase_end, self.total) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Runs `fut` within the budget of `phase` (and the total deadline): the async
/// counterpart of the blocking driver's socket timeouts. `on_timeout` builds
/// the error for an expired budget (its kind names the phase). A future that
/// is ready at once (a free stream slot, data already received) never arms a
/// timer: timers cost a lock on the runtime's timer wheel, shared by every
/// thread, twice.
pub(crate) async fn within<T>(
    deadlines: &Deadlines,
    phase: Option<Duration>,
    on_timeout: impl FnOnce() -> crate::error::Error,
    fut: impl std::future::Future<Output = Result<T, crate::error::Error>>,
) -> Result<T, crate::error::Error> {
    let mut fut = std::pin::pin!(fut);
    if let Some(ready) = poll_once(fut.as_mut()).await {
        return ready;
    }
    match deadlines.budget(phase) {
        Budget::Expired => Err(on_timeout()),
        Budget::Wait(None) => fut.await,
        // A blocked sync caller parks with the deadline: no timer needed.
        Budget::Wait(Some(limit)) if crate::h2::parks_with_deadlines() => {
            let until = Instant::now() + limit;
            let mut on_timeout = Some(on_timeout);
            std::future::poll_fn(|cx| {
                if let std::task::Poll::Ready(out) = fut.as_mut().poll(cx) {
                    return std::task::Poll::Ready(out);
                }
                match on_timeout.take() {
                    Some(timed_out) if Instant::now() >= until => {
                        std::task::Poll::Ready(Err(timed_out()))
                    }
                    kept => {
                        on_timeout = kept;
                        crate::h2::wake_by(until);
                        std::task::Poll::Pending
                    }
                }
            })
            .await
        }
        Budget::Wait(Some(limit)) => tokio::time::timeout(limit, fut)
            .await
            .unwrap_or_else(|_| Err(on_timeout())),
    }
}

/// Polls `fut` once: its output if ready, else `None` (its waker is registered,
/// so awaiting it afterwards loses nothing).
pub(crate) async fn poll_once<F: std::future::Future>(
    fut: std::pin::Pin<&mut F>,
) -> Option<F::Output> {
    let mut fut = fut;
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match fut.as_mut().poll(cx) {
            std::task::Poll::Ready(out) => Some(out),
            std::task::Poll::Pending => None,
        })
    })
    .await
}
