//! h2's errors as engine errors, and which of them leave a request unprocessed.

use h2::Reason;

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

/// Whether the server certainly did not process the request, so it may go
/// again on a new connection (RFC 9113 §8.7): REFUSED_STREAM; or a GOAWAY
/// whose last stream id is below ours, which h2 reports as a remote GOAWAY
/// error: certain for NO_ERROR (a graceful GOAWAY fails only the streams
/// above its last id), and for idempotent requests safe in any case.
pub(crate) fn is_unprocessed(e: &h2::Error, idempotent: bool) -> bool {
    if e.reason() == Some(Reason::REFUSED_STREAM) {
        return true;
    }
    e.is_go_away() && e.is_remote() && (e.reason() == Some(Reason::NO_ERROR) || idempotent)
}
