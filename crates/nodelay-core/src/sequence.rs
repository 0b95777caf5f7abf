//! The sequence of one HTTP/1.1 exchange up to its final head, without I/O:
//! checkout → send → (the answer to a request whose send failed or was cut
//! short) → head, and the stale-connection retry around them. The blocking
//! driver (`Client::send_h1`) and the tokio driver (`AsyncClient::send_h1`)
//! both run it: each asks [`Sequence::next`] what to do, does it on its own
//! connection type, and reports the result back. Every decision (which head
//! reader, whether an answer may follow a failed write, whether to retry, on
//! what connection, after rewinding the body) is taken here, once. The body
//! and the reuse verdict are the exchange's (`nodelay_proto::BodyReader`).

use nodelay_proto::{answer_may_follow, HeadReader, SendFailure};

use crate::error::{Error, ErrorKind};
use crate::limits::STALE_CONNECTION_RETRIES;

/// What the driver does next.
pub(crate) enum Step {
    /// Take a connection (the one ALPN handed over while there is one, else
    /// from the pool: a new one when `fresh`), then report
    /// [`Sequence::checked_out`]. A failed checkout ends the request.
    Checkout {
        /// A retry: a new connection, not an idle one.
        fresh: bool,
    },
    /// Write the request on the connection, then report [`Sequence::sent`].
    Send,
    /// Read a response head with this reader: a head is the response (the
    /// exchange goes on with its body); a failure is reported with
    /// [`Sequence::not_received`].
    Receive(HeadReader),
    /// Start the request body over for a retry, then report
    /// [`Sequence::rewound`].
    Rewind,
    /// The request failed.
    Fail(Error),
}

/// How writing the request went.
pub(crate) enum Sent {
    /// Head and body are out.
    Whole,
    /// The server answered before the body was all out (a streamed body
    /// stopped at the answer): the answer is the response.
    Cut,
    /// The write failed with this error.
    Failed(Error),
}

/// One exchange's way to its final head (see the module comment).
pub(crate) struct Sequence {
    is_head: bool,
    closes: bool,
    idempotent: bool,
    /// The body must be rewound (a stream) before the request goes again.
    ask_rewind: bool,
    retries_left: usize,
    /// Whether the connection in use was reused from the pool.
    reused: bool,
    next: Next,
    /// The failed write the head read looks for an answer to: the error the
    /// attempt ends with when none comes.
    failed_send: Option<Error>,
    /// The error a rewind or the request's end reports.
    error: Option<Error>,
}

/// The step [`Sequence::next`] gives; no heap data, so moving it costs
/// nothing on the hot path.
enum Next {
    Checkout,
    Send,
    Receive(HeadReader),
    Rewind,
    Fail,
    /// The last step was given and not reported yet.
    Waiting,
}

impl Sequence {
    /// The sequence of a request; `streamed`: its body comes from a source
    /// that must be rewound before the request goes again.
    /// `closes`: the request's own fields ask to close the connection after
    /// it, so its response never gives the connection back to the pool.
    pub(crate) fn new(is_head: bool, closes: bool, idempotent: bool, streamed: bool) -> Sequence {
        Sequence {
            is_head,
            closes,
            idempotent,
            ask_rewind: streamed,
            retries_left: STALE_CONNECTION_RETRIES,
            reused: false,
            next: Next::Checkout,
            failed_send: None,
            error: None,
        }
    }

    /// What to do next; each step is reported back before the next call.
    pub(crate) fn next(&mut self) -> Step {
        match std::mem::replace(&mut self.next, Next::Waiting) {
            Next::Checkout => Step::Checkout {
                fresh: self.retries_left < STALE_CONNECTION_RETRIES,
            },
            Next::Send => Step::Send,
            Next::Receive(reader) => Step::Receive(reader),
            Next::Rewind => Step::Rewind,
            Next::Fail => Step::Fail(self.error.take().expect("the request's error")),
            Next::Waiting => unreachable!("Sequence::next before the last step was reported"),
        }
    }

    /// A connection was taken; `reused`: an idle one from the pool (a
    /// failure on it before any response byte may be a server-side close).
    pub(crate) fn checked_out(&mut self, reused: bool) {
        self.reused = reused;
        self.next = Next::Send;
    }

    /// The request was written (or not): `closed` tells whether the
    /// connection is known closed, asked only after a failed write.
    pub(crate) fn sent(&mut self, outcome: Sent, closed: impl FnOnce() -> bool) {
        match outcome {
            Sent::Whole => self.next = Next::Receive(self.reader_after_whole_request()),
            Sent::Cut => self.next = Next::Receive(HeadReader::after_cut_request(self.is_head)),
            // The server may have answered and closed before the body was
            // all out (a 413): that answer is the response. A failed write
            // with no answer (EPIPE, ECONNRESET on a stale reused connection)
            // received nothing: idempotent requests may go again.
            Sent::Failed(error) if answer_may_follow(send_failure(&error), closed) => {
                self.failed_send = Some(error);
                self.next = Next::Receive(HeadReader::after_cut_request(self.is_head));
            }
            Sent::Failed(error) => self.attempt_failed(error),
        }
    }

    /// The head phase of a response to a request written whole.
    fn reader_after_whole_request(&self) -> HeadReader {
        if self.closes {
            HeadReader::after_closing_request(self.is_head)
        } else {
            HeadReader::new(self.is_head)
        }
    }

    /// The head read failed with `error`.
    pub(crate) fn not_received(&mut self, error: Error) {
        match self.failed_send.take() {
            // No answer after a failed write: the write's error stands,
            // unless the wait for the answer was interrupted (Ctrl-C).
            Some(failed) if !error.is_interrupted() => self.attempt_failed(failed),
            _ => self.attempt_failed(error),
        }
    }

    /// The body source was asked to start over: `Ok(false)` when it cannot.
    pub(crate) fn rewound(&mut self, result: Result<bool, Error>) {
        match result {
            Ok(true) => self.retry(),
            Ok(false) => self.next = Next::Fail,
            Err(e) => self.fail(e),
        }
    }

    /// An attempt ended with `error`: a stale keep-alive connection (a
    /// reused one that failed before any response byte) is replaced once
    /// for an idempotent request; anything else is the request's error.
    fn attempt_failed(&mut self, error: Error) {
        if !error.allows_fresh_connection_retry(self.reused, self.idempotent, self.retries_left) {
            self.fail(error);
        } else if self.ask_rewind {
            // Kept: the request's error if the body cannot start over.
            self.error = Some(error);
            self.next = Next::Rewind;
        } else {
            self.retry();
        }
    }

    fn fail(&mut self, error: Error) {
        self.error = Some(error);
        self.next = Next::Fail;
    }

    fn retry(&mut self) {
        self.retries_left -= 1;
        self.error = None;
        self.next = Next::Checkout;
    }
}

/// How a failed send is seen by the early-answer rule.
fn send_failure(e: &Error) -> SendFailure {
    match e.kind() {
        ErrorKind::Write => SendFailure::Broken,
        ErrorKind::WriteTimeout => SendFailure::TimedOut,
        _ => SendFailure::Other,
    }
}
