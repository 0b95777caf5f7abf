//! Timeouts as deadlines: each blocking point gets the smaller of its phase
//! timeout and what is left of the total; no timer threads.
//!
//! The read timeout bounds two things (docs/timeouts.md): the wait for the
//! *whole* response head, from the moment the request is sent (as Go's
//! `ResponseHeaderTimeout`: a head dripped byte by byte cannot stretch it),
//! and then each read of the body on its own (inactivity). The rule lives
//! here, in [`Deadlines::for_head`] and [`Deadlines::read_budget`], and every
//! driver (blocking, async, HTTP/2) asks it. Timeout errors are built here
//! too ([`Deadlines::timed_out`]): they name the phase and the configured
//! timeout, never the slice of it a wait happened to get.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Per-phase timeouts of one request; `None` disables one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timeouts {
    /// The longest a connection may take to open (DNS, TCP, TLS, a proxy's
    /// CONNECT).
    pub connect: Option<Duration>,
    /// The longest wait for the whole response head once the request is
    /// sent, then for each read of the body.
    pub read: Option<Duration>,
    /// The longest one write of the request may block.
    pub write: Option<Duration>,
    /// The longest a request may wait for a connection slot of the pool.
    pub pool: Option<Duration>,
    /// Whole request, from start to the last body byte.
    pub total: Option<Duration>,
    /// The total as the caller configured it, when `total` is only what is
    /// left of it for this exchange (a redirect hop or retry after others):
    /// named in timeout messages. `None` when `total` is the whole of it.
    pub total_configured: Option<Duration>,
}

/// What a request was doing when a timeout fired: which timeout bounds it
/// and the words that name it in the error message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Phase<'a> {
    timeout: Which,
    /// Completes "... timeout of 2.0 s while ...".
    doing: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Connect,
    Read,
    Write,
    Pool,
}

impl Phase<'static> {
    pub const POOL: Phase<'static> = Phase {
        timeout: Which::Pool,
        doing: "waiting for a free connection",
    };
    pub const H2_STREAM: Phase<'static> = Phase {
        timeout: Which::Pool,
        doing: "waiting for a free HTTP/2 stream",
    };
    pub const SEND: Phase<'static> = Phase {
        timeout: Which::Write,
        doing: "sending the request",
    };
    pub const HEAD: Phase<'static> = Phase {
        timeout: Which::Read,
        doing: "waiting for the response head",
    };
    pub const BODY: Phase<'static> = Phase {
        timeout: Which::Read,
        doing: "reading the response body",
    };
}

impl<'a> Phase<'a> {
    /// A wait bounded by the pool timeout, with its own words (a slot of
    /// one origin, a rate limit's token).
    pub fn pool(doing: &'a str) -> Self {
        Phase {
            timeout: Which::Pool,
            doing,
        }
    }

    /// A step of opening a connection ("connecting to host:port", "the TLS
    /// handshake with host", ...), bounded by the connect timeout.
    pub fn connect(doing: &'a str) -> Self {
        Phase {
            timeout: Which::Connect,
            doing,
        }
    }

    /// A write phase with its own words (an HTTP/2 upload waiting for
    /// flow-control window).
    pub fn write(doing: &'a str) -> Self {
        Phase {
            timeout: Which::Write,
            doing,
        }
    }
}

/// Where a request is in reading its response: the read timeout means a
/// different thing for the head and for the body.
#[derive(Debug, Clone, Copy)]
enum Reading {
    /// Each read waits at most the read timeout (inactivity).
    Body,
    /// The whole head must have arrived by `until` (the read timeout after
    /// the request was sent; `None` without a read timeout).
    Head { until: Option<Instant> },
}

/// The deadlines of one request in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    pub timeouts: Timeouts,
    pub total: Option<Instant>,
    reading: Reading,
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
            reading: Reading::Body,
        }
    }

    /// The deadlines of waiting for the response head of a request whose
    /// last byte was just written: the read timeout bounds the whole head
    /// (interim 1xx responses included) from now. The exchange keeps the
    /// original deadlines for the body.
    pub fn for_head(&self) -> Self {
        Deadlines {
            reading: Reading::Head {
                until: self.timeouts.read.map(|read| Instant::now() + read),
            },
            ..*self
        }
    }

    /// The phase a read timeout names: the head or the body.
    pub fn read_phase(&self) -> Phase<'static> {
        match self.reading {
            Reading::Head { .. } => Phase::HEAD,
            Reading::Body => Phase::BODY,
        }
    }

    /// How long a read may wait by the read timeout alone (the total not
    /// counted): what is left of the head's deadline while the head is
    /// awaited, else the read timeout less `waited`, the time this read
    /// already spent in earlier waits (a blocking read waiting in slices).
    /// The clock is read only for a head.
    pub fn read_limit(&self, waited: Duration) -> Option<Duration> {
        match self.reading {
            Reading::Head { until } => {
                until.map(|until| until.saturating_duration_since(Instant::now()))
            }
            Reading::Body => self.timeouts.read.map(|t| t.saturating_sub(waited)),
        }
    }

    /// The budget of a read (see [`Deadlines::read_limit`]), or the timeout
    /// error when nothing is left of it.
    pub fn read_budget(&self, waited: Duration) -> Result<Option<Duration>, Error> {
        match self.budget(self.read_limit(waited)) {
            Budget::Wait(t) => Ok(t),
            Budget::Expired => Err(self.timed_out(self.read_phase())),
        }
    }

    /// The budget of a write, or the timeout error when nothing is left.
    pub fn write_budget(&self) -> Result<Option<Duration>, Error> {
        match self.budget(self.timeouts.write) {
            Budget::Wait(t) => Ok(t),
            Budget::Expired => Err(self.timed_out(Phase::SEND)),
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

    /// The error of a wait in `phase` that ran out of time: the total's when
    /// the total deadline is what ended it (it has passed, or comes no later
    /// than the head's deadline, or the phase has no timeout of its own),
    /// else the phase's. The message names the phase and the configured
    /// timeout ("read timeout of 2.0 s while waiting for the response
    /// head"); the class is the phase's either way.
    pub fn timed_out(&self, phase: Phase<'_>) -> Error {
        let own = match phase.timeout {
            Which::Connect => self.timeouts.connect,
            Which::Read => self.timeouts.read,
            Which::Write => self.timeouts.write,
            Which::Pool => self.timeouts.pool,
        };
        let total_ended_it = self.total.is_some_and(|total| {
            own.is_none()
                || Instant::now() >= total
                || matches!(
                    (phase.timeout, self.reading),
                    (Which::Read, Reading::Head { until: Some(until) }) if total <= until
                )
        });
        let (kind, name) = match phase.timeout {
            Which::Connect => (ErrorKind::ConnectTimeout, "connect"),
            Which::Read => (ErrorKind::ReadTimeout, "read"),
            Which::Write => (ErrorKind::WriteTimeout, "write"),
            Which::Pool => (ErrorKind::PoolTimeout, "pool"),
        };
        let mut message = String::new();
        if total_ended_it {
            let total = self.timeouts.total_configured.or(self.timeouts.total);
            message.push_str("total timeout");
            push_seconds(&mut message, total);
            message.push_str(" exceeded");
        } else {
            message.push_str(name);
            message.push_str(" timeout");
            push_seconds(&mut message, own);
        }
        message.push_str(" while ");
        message.push_str(phase.doing);
        Error::new(kind, message)
    }
}

/// " of 2.0 s" (a whole number keeps one decimal, as Python prints floats);
/// nothing for `None`.
fn push_seconds(out: &mut String, t: Option<Duration>) {
    let Some(t) = t else { return };
    let secs = t.as_secs_f64();
    if secs.fract() == 0.0 {
        let _ = write!(out, " of {secs:.1} s");
    } else {
        let _ = write!(out, " of {secs} s");
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
        Budget::Wait(Some(limit)) if crate::executor::parks_with_deadlines() => {
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
                        crate::executor::wake_by(until);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts(read: f64, total: Option<f64>) -> Timeouts {
        Timeouts {
            read: Some(Duration::from_secs_f64(read)),
            total: total.map(Duration::from_secs_f64),
            ..Timeouts::default()
        }
    }

    #[test]
    fn a_head_read_gets_what_is_left_of_the_head_deadline() {
        let head = Deadlines::start(timeouts(1.0, None), Instant::now()).for_head();
        std::thread::sleep(Duration::from_millis(50));
        let left = head.read_limit(Duration::ZERO).unwrap();
        assert!(left <= Duration::from_millis(950), "{left:?}");
        // `waited` is a body read's business; a head's deadline is fixed.
        assert!(head.read_limit(Duration::from_millis(900)).unwrap() <= left);
        assert_eq!(head.read_phase().doing, Phase::HEAD.doing);
    }

    #[test]
    fn a_body_read_gets_the_read_timeout_less_what_it_waited() {
        let body = Deadlines::start(timeouts(1.0, None), Instant::now());
        assert_eq!(
            body.read_limit(Duration::from_millis(300)),
            Some(Duration::from_millis(700))
        );
        assert_eq!(body.read_phase().doing, Phase::BODY.doing);
    }

    #[test]
    fn an_expired_head_deadline_is_the_read_timeout_error() {
        let head = Deadlines::start(timeouts(0.0, None), Instant::now()).for_head();
        let error = head.read_budget(Duration::ZERO).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ReadTimeout);
        assert_eq!(
            error.message(),
            "read timeout of 0.0 s while waiting for the response head"
        );
    }

    #[test]
    fn messages_name_the_phase_and_the_configured_timeout() {
        let deadlines = Deadlines::start(
            Timeouts {
                connect: Some(Duration::from_secs(1)),
                write: Some(Duration::from_millis(2500)),
                pool: Some(Duration::from_millis(300)),
                ..timeouts(2.0, None)
            },
            Instant::now(),
        );
        let cases = [
            (
                deadlines.timed_out(Phase::connect("connecting to 127.0.0.1:8080")),
                ErrorKind::ConnectTimeout,
                "connect timeout of 1.0 s while connecting to 127.0.0.1:8080",
            ),
            (
                deadlines.timed_out(Phase::SEND),
                ErrorKind::WriteTimeout,
                "write timeout of 2.5 s while sending the request",
            ),
            (
                deadlines.timed_out(Phase::POOL),
                ErrorKind::PoolTimeout,
                "pool timeout of 0.3 s while waiting for a free connection",
            ),
            (
                deadlines.for_head().timed_out(Phase::HEAD),
                ErrorKind::ReadTimeout,
                "read timeout of 2.0 s while waiting for the response head",
            ),
            (
                deadlines.timed_out(Phase::BODY),
                ErrorKind::ReadTimeout,
                "read timeout of 2.0 s while reading the response body",
            ),
        ];
        for (error, kind, message) in cases {
            assert_eq!((error.kind(), error.message()), (kind, message));
        }
    }

    #[test]
    fn a_spent_total_names_the_total_as_configured() {
        // A later hop: 0 s left of a 5 s total.
        let hop = Timeouts {
            total_configured: Some(Duration::from_secs(5)),
            ..timeouts(30.0, Some(0.0))
        };
        let deadlines = Deadlines::start(hop, Instant::now());
        let error = deadlines.read_budget(Duration::ZERO).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ReadTimeout);
        assert_eq!(
            error.message(),
            "total timeout of 5.0 s exceeded while reading the response body"
        );
    }

    #[test]
    fn a_total_ending_before_the_head_deadline_is_the_one_named() {
        // The head's deadline (30 s) lies past the total's (2 s): a head
        // wait that ran out did so by the total.
        let head = Deadlines::start(timeouts(30.0, Some(2.0)), Instant::now()).for_head();
        assert_eq!(
            head.timed_out(Phase::HEAD).message(),
            "total timeout of 2.0 s exceeded while waiting for the response head"
        );
        // The other way round, the read timeout is.
        let head = Deadlines::start(timeouts(1.0, Some(20.0)), Instant::now()).for_head();
        assert_eq!(
            head.timed_out(Phase::HEAD).message(),
            "read timeout of 1.0 s while waiting for the response head"
        );
    }
}
