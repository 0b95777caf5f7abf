//! The sequence of one exchange up to its final head, without I/O: the
//! HTTP/2 attempt when the request has an HTTP/2 form, then (when it has
//! none, or ALPN chose HTTP/1.1) the HTTP/1.1 exchange: checkout → send →
//! (the answer to a request whose send failed or was cut short) → head, and
//! the stale-connection retry around them. The blocking driver
//! (`Client::drive`) and the tokio driver (`AsyncClient::drive`, which batches
//! run too) both run it: each asks [`Sequence::next`] what to do, does it on
//! its own connection type, and reports the result back. Every decision
//! (HTTP/2 first, what follows when the server declines it, which head
//! reader, whether an answer may follow a failed write, whether to retry, on
//! what connection, after rewinding the body) is taken here, once. The
//! HTTP/2 connection and the retries of a stream the server did not process
//! are the HTTP/2 pool's (`h2::pool`, docs/http2.md); the body and the reuse
//! verdict are the exchange's (`nodelay_proto::BodyReader`).

use nodelay_proto::{answer_may_follow, HeadReader, SendFailure};

use crate::error::{Error, ErrorKind};
use crate::limits::STALE_CONNECTION_RETRIES;

/// Whether a request tries HTTP/2 first, and what may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Http2Attempt {
    /// HTTP/1.1 only: the client does not ask for HTTP/2, or the route
    /// (a proxy) does not allow it.
    None,
    /// HTTP/2 over TLS: ALPN may pick HTTP/1.1, and the request then goes
    /// on as HTTP/1.1 on the connection ALPN made.
    ThenHttp1,
    /// HTTP/2 by prior knowledge over cleartext (h2c, RFC 9113 §3.3):
    /// nothing can choose HTTP/1.1, so the request has no HTTP/1.1 form.
    Only,
}

/// What the driver does next.
pub(crate) enum Step {
    /// Send the request over HTTP/2 on the origin's shared connection (made
    /// when there is none; the HTTP/2 pool sends a stream the server did not
    /// process again itself). A response or a failure ends the sequence;
    /// when ALPN chose HTTP/1.1, report [`Sequence::http2_declined`] and keep
    /// the connection ALPN made for the next checkout (nothing of the body
    /// was pulled for it).
    Http2,
    /// Take a connection (the one ALPN handed over when there is one, else
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
    http2: Http2Attempt,
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
    Http2,
    Checkout,
    Send,
    Receive(HeadReader),
    Rewind,
    Fail,
    /// The last step was given and not reported yet.
    Waiting,
}

impl Sequence {
    /// The sequence of a request; `http2`: whether it tries HTTP/2 first;
    /// `streamed`: its body comes from a source that must be rewound before
    /// the request goes again. `closes`: the request's own fields ask to
    /// close the connection after it, so its response never gives the
    /// connection back to the pool.
    pub(crate) fn new(
        http2: Http2Attempt,
        is_head: bool,
        closes: bool,
        idempotent: bool,
        streamed: bool,
    ) -> Sequence {
        Sequence {
            http2,
            is_head,
            closes,
            idempotent,
            ask_rewind: streamed,
            retries_left: STALE_CONNECTION_RETRIES,
            reused: false,
            next: match http2 {
                Http2Attempt::None => Next::Checkout,
                Http2Attempt::ThenHttp1 | Http2Attempt::Only => Next::Http2,
            },
            failed_send: None,
            error: None,
        }
    }

    /// What to do next; each step is reported back before the next call.
    pub(crate) fn next(&mut self) -> Step {
        match std::mem::replace(&mut self.next, Next::Waiting) {
            Next::Http2 => Step::Http2,
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

    /// The server declined HTTP/2 (ALPN chose HTTP/1.1): the request goes
    /// on over HTTP/1.1, first on the connection ALPN made. A request by
    /// prior knowledge has no HTTP/1.1 form to go on with.
    pub(crate) fn http2_declined(&mut self) {
        match self.http2 {
            Http2Attempt::ThenHttp1 => self.next = Next::Checkout,
            Http2Attempt::None | Http2Attempt::Only => self.fail(Error::new(
                ErrorKind::RemoteProtocol,
                "the server declined HTTP/2 for a request sent by prior knowledge, which has no HTTP/1.1 form",
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence(http2: Http2Attempt) -> Sequence {
        Sequence::new(http2, false, false, true, false)
    }

    #[test]
    fn http1_only_starts_with_a_checkout_from_the_pool() {
        let mut sequence = sequence(Http2Attempt::None);
        assert!(matches!(sequence.next(), Step::Checkout { fresh: false }));
    }

    #[test]
    fn http2_goes_first_and_a_decline_goes_on_with_a_checkout() {
        let mut sequence = sequence(Http2Attempt::ThenHttp1);
        assert!(matches!(sequence.next(), Step::Http2));
        sequence.http2_declined();
        // Not a retry: the connection ALPN made (or an idle one) serves.
        assert!(matches!(sequence.next(), Step::Checkout { fresh: false }));
        sequence.checked_out(false);
        assert!(matches!(sequence.next(), Step::Send));
    }

    #[test]
    fn a_request_by_prior_knowledge_never_falls_back_to_http1() {
        let mut sequence = sequence(Http2Attempt::Only);
        assert!(matches!(sequence.next(), Step::Http2));
        sequence.http2_declined();
        match sequence.next() {
            Step::Fail(e) => assert_eq!(e.kind(), ErrorKind::RemoteProtocol),
            _ => panic!("a request with no HTTP/1.1 form went on over HTTP/1.1"),
        }
    }
}
