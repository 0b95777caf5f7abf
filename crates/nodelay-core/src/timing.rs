//! An opt-in record of how long opening the last connection took, phase by
//! phase (name lookup, TCP connect, TLS handshake), for `nodelay get -v`
//! (curl's `-w '%{time_namelookup} %{time_connect} %{time_appconnect}'`).
//!
//! Off by default: then a connect pays one relaxed atomic load and reads no
//! clock. Requests on reused connections record nothing, which is the
//! point: the record says whether, and how expensively, the last request
//! opened a connection. Process-wide, so meant for a single-request tool, not
//! for attributing phases among concurrent requests.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Phases of opening one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectTimings {
    /// Name lookup (zero for an IP literal; `None` when it is not measured
    /// apart from the TCP connect: the async connect's lookup and connect
    /// are one step).
    pub dns: Option<Duration>,
    /// TCP connect, after the lookup (or including it when `dns` is `None`).
    pub tcp: Duration,
    /// TLS handshake, after the TCP connect (`None` for cleartext).
    pub tls: Option<Duration>,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static LAST: Mutex<Option<ConnectTimings>> = Mutex::new(None);

/// Starts (or stops) recording connect timings for this process.
pub fn record_connect_timings(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// The timings of the last connection opened since the previous call, if
/// recording is on and one was opened.
pub fn take_connect_timings() -> Option<ConnectTimings> {
    LAST.lock().unwrap_or_else(|p| p.into_inner()).take()
}

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

pub(crate) fn note(timings: ConnectTimings) {
    *LAST.lock().unwrap_or_else(|p| p.into_inner()) = Some(timings);
}
