//! `/bytes/{n}`, `/chunked/{n}` and `/json/{n}`: the benchmark payloads, served
//! from the shared caches without copying.

use hyper::StatusCode;

use super::parse_u64;
use crate::body::ResponseBody;
use crate::limits::{MAX_JSON_BYTES, MAX_PAYLOAD_BYTES};
use crate::response::{self, Reply, OCTET_STREAM};
use crate::state::State;

/// `/bytes/{n}`: `n` pattern bytes with `Content-Length`.
pub(super) fn bytes(n: &str, state: &State) -> Reply {
    match payload_len(n) {
        Some(n) => response::with_body(
            StatusCode::OK,
            Some(OCTET_STREAM),
            ResponseBody::full(state.payloads.bytes(n)),
        ),
        None => response::bad_request("n must be an integer in 0..=1073741824\n"),
    }
}

/// `/chunked/{n}`: the same bytes as `/bytes/{n}`, with chunked transfer coding.
pub(super) fn chunked(n: &str, state: &State) -> Reply {
    match payload_len(n) {
        Some(n) => response::with_body(
            StatusCode::OK,
            Some(OCTET_STREAM),
            ResponseBody::chunked(state.payloads.bytes(n)),
        ),
        None => response::bad_request("n must be an integer in 0..=1073741824\n"),
    }
}

/// `/json/{n}`: a JSON document of at least `n` bytes.
pub(super) fn json(n: &str, state: &State) -> Reply {
    match parse_u64(n).filter(|&n| n <= MAX_JSON_BYTES) {
        Some(n) => response::json(state.payloads.json(n)),
        None => response::bad_request("n must be an integer in 0..=67108864\n"),
    }
}

/// Parses a payload size and checks it against [`MAX_PAYLOAD_BYTES`].
fn payload_len(n: &str) -> Option<usize> {
    parse_u64(n)
        .filter(|&n| n <= MAX_PAYLOAD_BYTES)
        .and_then(|n| usize::try_from(n).ok())
}
