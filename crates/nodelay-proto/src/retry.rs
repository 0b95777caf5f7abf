//! The one retry rule of HTTP/1.1 requests: when a request that failed goes
//! once more on a fresh connection (docs/hostile.md H28).

/// What the retry rule looks at, gathered by the driver from the failed
/// attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedAttempt {
    /// The connection was a reused keep-alive one (not opened for this request).
    pub reused: bool,
    /// The request's method is idempotent (RFC 9110 §9.2.2).
    pub idempotent: bool,
    /// Fresh-connection retries this request has left.
    pub retries_left: usize,
    /// No byte of a response arrived (see `HeadReader::nothing_received`).
    pub nothing_received: bool,
    /// The failure was a deadline (connect, read, write or pool).
    pub timed_out: bool,
    /// The failure was a signal (Ctrl-C).
    pub interrupted: bool,
}

/// Whether a failed request goes once more on a fresh connection: only when
/// its connection was a reused keep-alive one, retries are left, the request
/// is idempotent, and nothing of a response arrived (the server most likely
/// closed the idle connection as it was reused). Never after a timeout (a
/// slow server, not a stale connection: sending again would do the request
/// twice and wait a whole timeout again) nor a Ctrl-C.
///
/// A streamed request body must also rewind before it goes again: the driver
/// asks its source only after this says yes (rewinding has effects of its
/// own), and a source that cannot rewind (a one-shot iterator partly pulled)
/// means no retry.
pub fn retry_on_fresh_connection(attempt: &FailedAttempt) -> bool {
    attempt.reused
        && attempt.retries_left > 0
        && attempt.idempotent
        && attempt.nothing_received
        && !attempt.interrupted
        && !attempt.timed_out
}
