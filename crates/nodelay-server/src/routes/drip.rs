//! `/drip/{n}?ms=T`: a body that trickles, for clients that must hand out
//! what has arrived without waiting for more (server-sent events, streamed
//! answers).

use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use hyper::{Request, StatusCode};

use super::parse_u64;
use crate::body::ResponseBody;
use crate::limits::{DEFAULT_DRIP_INTERVAL, MAX_DRIP_INTERVAL, MAX_DRIP_PIECES};
use crate::response::{self, Reply};

const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");

/// `n` server-sent events `data: {i}\n\n`, the first at once, then one every
/// `ms` milliseconds (default [`DEFAULT_DRIP_INTERVAL`]), with no
/// Content-Length: chunked over HTTP/1.1, DATA frames over HTTP/2.
pub(super) fn drip(n: &str, req: &Request<Incoming>) -> Reply {
    let Some(pieces) = parse_u64(n).filter(|&n| n <= MAX_DRIP_PIECES) else {
        return response::bad_request("n must be an integer in 0..=1000\n");
    };
    let interval = match query_ms(req) {
        None => DEFAULT_DRIP_INTERVAL,
        Some(Some(ms)) if Duration::from_millis(ms) <= MAX_DRIP_INTERVAL => {
            Duration::from_millis(ms)
        }
        Some(_) => return response::bad_request("ms must be an integer in 0..=60000\n"),
    };
    let events = (0..pieces).map(|i| Bytes::from(format!("data: {i}\n\n")));
    response::with_body(
        StatusCode::OK,
        Some(EVENT_STREAM),
        ResponseBody::drip(events, interval),
    )
}

/// The `ms` query parameter: `None` when absent, `Some(None)` when not a number.
fn query_ms(req: &Request<Incoming>) -> Option<Option<u64>> {
    let query = req.uri().query()?;
    let value = query.split('&').find_map(|pair| pair.strip_prefix("ms="))?;
    Some(parse_u64(value))
}
