//! h2's errors as engine errors, and which of them leave a request unprocessed.

use h2::Reason;

use super::goaway::GoAway;
use crate::error::{Error, ErrorKind};

/// An error on a stream. `got_head`: whether the response head had arrived
/// (a failure before it counts as nothing received).
pub(crate) fn stream_error(e: h2::Error, got_head: bool) -> Error {
    let error = if e.is_io() {
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

/// Why a stream failed before its response head, and whether its request
/// may go again on a new connection (RFC 9113 §8.7, §6.8):
///
/// - REFUSED_STREAM, or a GOAWAY whose last stream id is below the stream
///   (h2 fails those streams, and any opened after the GOAWAY, with a remote
///   GOAWAY error): the server did not process the request. It goes again
///   whatever its method, a POST included: it was not processed.
/// - The connection failed after a GOAWAY whose last stream id covers the
///   stream (`goaway`): the server promised to answer it and broke the
///   promise. It may have processed the request, so only an idempotent one
///   (RFC 9110 §9.2.2) goes again; a POST is never sent twice.
/// - Anything else: the error as it is, no retry.
pub(crate) fn unanswered(
    e: h2::Error,
    stream_id: u32,
    goaway: Option<GoAway>,
    idempotent: bool,
) -> (Error, bool) {
    if e.reason() == Some(Reason::REFUSED_STREAM) || (e.is_go_away() && e.is_remote()) {
        return (stream_error(e, false), true);
    }
    match goaway {
        Some(goaway) if e.is_io() && goaway.last_stream_id >= stream_id => {
            (broken_promise(e, stream_id, goaway), idempotent)
        }
        _ => (stream_error(e, false), false),
    }
}

/// The connection closed after a GOAWAY that covered `stream_id`.
fn broken_promise(e: h2::Error, stream_id: u32, goaway: GoAway) -> Error {
    let GoAway {
        last_stream_id,
        reason,
    } = goaway;
    let message = if reason == Reason::NO_ERROR {
        format!(
            "server sent GOAWAY promising to answer stream {stream_id} (last stream id \
             {last_stream_id}), then closed the connection before answering"
        )
    } else {
        format!(
            "server sent GOAWAY ({reason:?}, last stream id {last_stream_id}), then closed \
             the connection before answering stream {stream_id}"
        )
    };
    Error::new(ErrorKind::RemoteProtocol, message)
        .with_source(e)
        .before_response()
}
