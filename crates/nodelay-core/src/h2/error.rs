//! h2's errors as engine errors, and whether a request whose stream failed
//! before its response head may go again.

use h2::Reason;

use super::conn::H2Conn;
use super::goaway::GoAway;
use crate::error::{Error, ErrorKind};

/// An error on a stream. `got_head`: whether the response head had arrived
/// (a failure before it counts as nothing received).
pub(crate) fn stream_error(e: h2::Error, got_head: bool) -> Error {
    let closed = e
        .get_io()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
    let error = if closed {
        // h2 reports the server's close as "broken pipe" (its own words for
        // an end of stream, and EPIPE when a write finds it).
        let before = if got_head {
            "the end of the response body"
        } else {
            "answering"
        };
        Error::new(
            ErrorKind::Read,
            format!("the server closed the HTTP/2 connection before {before}"),
        )
    } else if e.is_io() {
        Error::new(ErrorKind::Read, format!("HTTP/2 connection failed: {e}"))
    } else {
        Error::new(
            ErrorKind::RemoteProtocol,
            format!("HTTP/2 stream failed: {e}"),
        )
    };
    let error = error.with_source(e);
    if got_head {
        error
    } else {
        error.before_response()
    }
}

/// Whether, and where, a request whose stream failed before its response
/// head may go again (RFC 9113 §8.7, §6.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Again {
    /// Refused (REFUSED_STREAM) on a connection that stays open: not
    /// processed; again on the same connection, which now knows the server's
    /// limits (a server refuses the streams beyond its
    /// SETTINGS_MAX_CONCURRENT_STREAMS that came before our client saw it).
    Refused,
    /// Not processed, on a connection going away: above a GOAWAY's last
    /// stream id, or never sent. Again on a new connection, whatever the
    /// method (a POST included: the server did not process it).
    /// `progress`: the server's GOAWAY shows it processed streams on that
    /// connection (a server recycling connections every N streams), so
    /// going again is no loop: each connection answers some requests.
    NotProcessed { progress: bool },
    /// An idempotent request (RFC 9110 §9.2.2) on a stream whose connection
    /// closed after a GOAWAY covering it: the server broke its promise to
    /// answer and may have processed it. Again on a new connection.
    /// `progress`: other requests were answered on that connection (a server
    /// recycling connections that drops the streams in flight, as hypercorn
    /// does), so going again is no loop.
    MaybeProcessed { progress: bool },
}

/// Why a stream failed before its response head, and whether its request
/// may go again:
///
/// - REFUSED_STREAM: [`Again::Refused`].
/// - A GOAWAY whose last stream id is below the stream (h2 fails those
///   streams, and any opened after the GOAWAY, with a remote GOAWAY error):
///   [`Again::NotProcessed`].
/// - The connection failed after a GOAWAY whose last stream id covers the
///   stream: the server broke its promise to answer; the error says so.
///   Only an idempotent request goes again ([`Again::MaybeProcessed`]): a
///   POST is never sent twice. Likewise, without a GOAWAY seen, an
///   idempotent request whose connection failed after answering others.
/// - Anything else: the error as it is, not again.
pub(crate) fn unanswered(
    e: h2::Error,
    stream_id: u32,
    conn: &H2Conn,
    idempotent: bool,
) -> (Error, Option<Again>) {
    let goaway = conn.goaway();
    if e.reason() == Some(Reason::REFUSED_STREAM) {
        return (stream_error(e, false), Some(Again::Refused));
    }
    if e.is_go_away() && e.is_remote() {
        return (stream_error(e, false), Some(not_processed(goaway)));
    }
    match goaway {
        Some(goaway) if e.is_io() && goaway.last_stream_id >= stream_id => (
            broken_promise(e, stream_id, goaway, "answering").before_response(),
            idempotent.then_some(Again::MaybeProcessed {
                progress: conn.answered_any(),
            }),
        ),
        // The GOAWAY may have been sent and lost: a server that closes with
        // our frames unread resets the connection, and the reset discards
        // what it sent before. A connection that answered others is then a
        // reused HTTP/1.1 connection found closed: an idempotent request goes
        // again.
        _ if e.is_io() && idempotent && conn.answered_any() => (
            stream_error(e, false),
            Some(Again::MaybeProcessed { progress: true }),
        ),
        _ => (stream_error(e, false), None),
    }
}

/// [`Again::NotProcessed`], with progress when `goaway` says the server
/// processed streams on the connection.
pub(crate) fn not_processed(goaway: Option<GoAway>) -> Again {
    Again::NotProcessed {
        progress: goaway.is_some_and(|g| g.last_stream_id > 0),
    }
}

/// An error on a stream whose response head had arrived: as
/// [`stream_error`], unless the connection closed after a GOAWAY covering
/// the stream (`goaway`), which the error then says.
pub(crate) fn body_error(e: h2::Error, stream_id: u32, goaway: Option<GoAway>) -> Error {
    match goaway {
        Some(goaway) if e.is_io() && goaway.last_stream_id >= stream_id => {
            broken_promise(e, stream_id, goaway, "the end of the response body")
        }
        _ => stream_error(e, true),
    }
}

/// The connection closed after a GOAWAY that covered `stream_id`, before
/// `what` (the answer, the end of its body) arrived.
fn broken_promise(e: h2::Error, stream_id: u32, goaway: GoAway, what: &str) -> Error {
    let GoAway {
        last_stream_id,
        reason,
    } = goaway;
    let message = if reason == Reason::NO_ERROR {
        format!(
            "server sent GOAWAY promising to answer stream {stream_id} (last stream id \
             {last_stream_id}), then closed the connection before {what}"
        )
    } else {
        format!(
            "server sent GOAWAY ({reason:?}, last stream id {last_stream_id}), then closed \
             the connection before {what} of stream {stream_id}"
        )
    };
    Error::new(ErrorKind::RemoteProtocol, message).with_source(e)
}
