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
