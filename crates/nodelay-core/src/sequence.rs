//! The sequence of one HTTP/1.1 exchange up to its final head, without I/O:
//! checkout → send → (the answer to a request whose send failed or was cut
//! short) → head, and the stale-connection retry around them. The blocking
//! driver (`Client::send_h1`) and the tokio driver (`AsyncClient::send_h1`)
//! both run it: each asks [`Sequence::next`] what to do, does it on its own
//! connection type, and reports the result back. Every decision (which head
//! reader, whether an answer may follow a failed write, whether to retry, on
//! what connection, after rewinding the body) is taken here, once. The body
//! and the reuse verdict are the exchange's (`nodelay_proto::BodyReader`).

use nodelay_proto::{answer_may_follow, HeadReader, ResponseHead, SendFailure};

use crate::error::{Error, ErrorKind};
use crate::limits::STALE_CONNECTION_RETRIES;

/// What the driver does next.
pub(crate) enum Step {
    /// Take a connection (the one ALPN handed over while there is one, else
    /// from the pool: a new one when `fresh`), then report
    /// [`Sequence::checked_out`]. A failed checkout ends the sequence.
    Checkout {
        /// A retry: a new connection, not an idle one.
        fresh: bool,
    },
    /// Write the request on the connection, then report [`Sequence::sent`].
    Send,
    /// Read a response head with this reader, then report
    /// [`Sequence::received`].
    Receive(HeadReader),
    /// Start the request body over for a retry, then report
    /// [`Sequence::rewound`].
    Rewind,
    /// The final head: the exchange goes on with its body.
    Head(ResponseHead, Box<[u8]>),
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
    idempotent: bool,
    /// The body can start over (bytes always; a stream when its source
    /// rewinds), asked with [`Step::Rewind`] before a retry.
    ask_rewind: bool,
    retries_left: usize,
    /// Whether the connection in use was reused from the pool.
    reused: bool,
    state: State,
}

enum State {
    Checkout,
    Send,
    Receive {
        reader: HeadReader,
        /// The failed write this read looks for an answer to: the error the
        /// attempt ends with when none comes.
        failed: Option<Error>,
    },
    Receiving {
        failed: Option<Error>,
    },
    Rewind(Error),
    Rewinding(Error),
    Head(ResponseHead, Box<[u8]>),
    Fail(Error),
    Done,
}

impl Sequence {
    /// The sequence of a request; `streamed`: its body comes from a source
    /// that must be rewound before the request goes again.
    pub(crate) fn new(is_head: bool, idempotent: bool, streamed: bool) -> Sequence {
        Sequence {
            is_head,
            idempotent,
            ask_rewind: streamed,
            retries_left: STALE_CONNECTION_RETRIES,
            reused: false,
            state: State::Checkout,
        }
    }

    /// What to do next; each step is reported back before the next call.
    pub(crate) fn next(&mut self) -> Step {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Checkout => Step::Checkout {
                fresh: self.retries_left < STALE_CONNECTION_RETRIES,
            },
            State::Send => Step::Send,
            State::Receive { reader, failed } => {
                self.state = State::Receiving { failed };
                Step::Receive(reader)
            }
            State::Rewind(error) => {
                self.state = State::Rewinding(error);
                Step::Rewind
            }
            State::Head(head, bytes) => Step::Head(head, bytes),
            State::Fail(error) => Step::Fail(error),
            State::Receiving { .. } | State::Rewinding(_) | State::Done => {
                unreachable!("Sequence::next before the last step was reported")
            }
        }
    }

    /// A connection was taken; `reused`: an idle one from the pool (a
    /// failure on it before any response byte may be a server-side close).
    pub(crate) fn checked_out(&mut self, reused: bool) {
        self.reused = reused;
        self.state = State::Send;
    }

    /// The request was written (or not): `closed` tells whether the
    /// connection is known closed, asked only after a failed write.
    pub(crate) fn sent(&mut self, outcome: Sent, closed: impl FnOnce() -> bool) {
        self.state = match outcome {
            Sent::Whole => State::Receive {
                reader: HeadReader::new(self.is_head),
                failed: None,
            },
            Sent::Cut => State::Receive {
                reader: HeadReader::after_cut_request(self.is_head),
                failed: None,
            },
            // The server may have answered and closed before the body was
            // all out (a 413): that answer is the response. A failed write
            // with no answer (EPIPE, ECONNRESET on a stale reused connection)
            // received nothing: idempotent requests may go again.
            Sent::Failed(error) if answer_may_follow(send_failure(&error), closed) => {
                State::Receive {
                    reader: HeadReader::after_cut_request(self.is_head),
                    failed: Some(error),
                }
            }
            Sent::Failed(error) => self.attempt_failed(error),
        };
    }

    /// The head read ended.
    pub(crate) fn received(&mut self, result: Result<(ResponseHead, Box<[u8]>), Error>) {
        let State::Receiving { failed } = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!("Sequence::received without Step::Receive")
        };
        self.state = match (result, failed) {
            (Ok((head, bytes)), _) => State::Head(head, bytes),
            // No answer after a failed write: the write's error stands,
            // unless the wait for the answer was interrupted (Ctrl-C).
            (Err(e), Some(failed)) if !e.is_interrupted() => self.attempt_failed(failed),
            (Err(e), _) => self.attempt_failed(e),
        };
    }

    /// The body source was asked to start over: `Ok(false)` when it cannot.
    pub(crate) fn rewound(&mut self, result: Result<bool, Error>) {
        let State::Rewinding(error) = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!("Sequence::rewound without Step::Rewind")
        };
        self.state = match result {
            Ok(true) => self.retry(),
            Ok(false) => State::Fail(error),
            Err(e) => State::Fail(e),
        };
    }

    /// An attempt ended with `error`: a stale keep-alive connection (a
    /// reused one that failed before any response byte) is replaced once
    /// for an idempotent request; anything else is the request's error.
    fn attempt_failed(&mut self, error: Error) -> State {
        if !error.allows_fresh_connection_retry(self.reused, self.idempotent, self.retries_left) {
            return State::Fail(error);
        }
        if self.ask_rewind {
            State::Rewind(error)
        } else {
            self.retry()
        }
    }

    fn retry(&mut self) -> State {
        self.retries_left -= 1;
        State::Checkout
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
