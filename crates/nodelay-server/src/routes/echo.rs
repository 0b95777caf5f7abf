//! `/echo`: the request body sent back verbatim, for upload benchmarks.

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::{Request, StatusCode};

use crate::body::ResponseBody;
use crate::limits::MAX_ECHO_BODY_BYTES;
use crate::response::{self, Reply};

/// Response header naming the request method, so a client can check what it sent.
const X_ECHO_METHOD: HeaderName = HeaderName::from_static("x-echo-method");

/// `/echo` (any method): 200 with the request body and its `Content-Type`.
pub(super) async fn echo(req: Request<Incoming>) -> Reply {
    let (parts, body) = req.into_parts();
    let body = match read_body(body, MAX_ECHO_BODY_BYTES).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let content_type = parts.headers.get(CONTENT_TYPE).cloned();
    let mut reply = response::with_body(StatusCode::OK, content_type, ResponseBody::full(body));
    // A method is a token (RFC 9110 §9.1), always a valid header value.
    if let Ok(method) = HeaderValue::from_str(parts.method.as_str()) {
        reply.headers_mut().insert(X_ECHO_METHOD, method);
    }
    reply
}

/// `/count` (any method): reads the request body frame by frame without keeping it
/// and answers `{"body_len": N}`, so upload tests measure the client, not the echo.
pub(super) async fn count(req: Request<Incoming>) -> Reply {
    let mut body = req.into_body();
    let mut received: u64 = 0;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => received += frame.data_ref().map_or(0, |d| d.len() as u64),
            Err(_) => return response::bad_request("could not read request body\n"),
        }
    }
    response::json(format!("{{\"body_len\": {received}}}"))
}

/// Reads a whole request body of at most `limit` bytes. A body that arrived in one
/// piece is returned without copying.
pub(super) async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, Reply> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<LengthLimitError>() => Err(response::text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body too large\n",
        )),
        // The client went away or sent malformed framing; hyper closes the
        // connection after this answer.
        Err(_) => Err(response::bad_request("could not read request body\n")),
    }
}
