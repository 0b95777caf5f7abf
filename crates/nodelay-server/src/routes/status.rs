//! `/status/{code}` and `/delay/{ms}`: chosen status codes and slow answers, for
//! error handling and timeout tests.

use std::time::Duration;

use hyper::StatusCode;

use super::parse_u64;
use crate::body::ResponseBody;
use crate::limits::MAX_DELAY;
use crate::response::{self, Reply};

/// Status codes `/status` answers with: final ones only. A 1xx is interim
/// (RFC 9110 §15.2) and cannot end an exchange, so it is refused.
const FINAL_STATUSES: std::ops::RangeInclusive<u64> = 200..=599;

/// `/status/{code}`: that status with an empty body.
pub(super) fn status(code: &str) -> Reply {
    let status = parse_u64(code)
        .filter(|c| FINAL_STATUSES.contains(c))
        .and_then(|c| u16::try_from(c).ok())
        .and_then(|c| StatusCode::from_u16(c).ok());
    match status {
        // hyper sends neither body nor Content-Length for 204 and 304
        // (RFC 9110 §8.6); other codes get `Content-Length: 0`.
        Some(status) => response::with_body(status, None, ResponseBody::empty()),
        None => response::bad_request("code must be an integer in 200..=599\n"),
    }
}

/// `/delay/{ms}`: waits without blocking other connections, then answers `delayed`.
pub(super) async fn delay(ms: &str) -> Reply {
    let delay = parse_u64(ms)
        .map(Duration::from_millis)
        .filter(|d| *d <= MAX_DELAY);
    match delay {
        Some(delay) => {
            tokio::time::sleep(delay).await;
            response::text(StatusCode::OK, "delayed")
        }
        None => response::bad_request("ms must be an integer in 0..=60000\n"),
    }
}
