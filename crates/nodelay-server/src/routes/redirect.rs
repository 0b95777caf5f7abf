//! `/redirect/{n}` and `/redirect-to`: redirect chains and chosen redirects, for
//! a client's redirect following and limits.

use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, LOCATION};
use hyper::{Request, StatusCode};

use super::parse_u64;
use crate::body::ResponseBody;
use crate::limits::MAX_REDIRECTS;
use crate::response::{self, Reply};

/// Status `/redirect-to` uses when the query names none: 302 Found, as httpbin does.
const DEFAULT_REDIRECT_STATUS: StatusCode = StatusCode::FOUND;

/// The redirect statuses of RFC 9110 §15.4 that carry a `Location` to follow.
const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

/// `/redirect/{n}`: 302 to `/redirect/{n-1}`, and `{"redirected": true}` at 0.
pub(super) fn redirect(n: &str) -> Reply {
    match parse_u64(n).filter(|&n| n <= MAX_REDIRECTS) {
        Some(0) => response::json(Bytes::from_static(b"{\"redirected\": true}")),
        Some(n) => {
            let location = format!("/redirect/{}", n - 1);
            // Digits and slashes are always a valid header value.
            match HeaderValue::try_from(location) {
                Ok(location) => redirect_reply(StatusCode::FOUND, location),
                Err(_) => response::bad_request("bad location\n"),
            }
        }
        None => response::bad_request("n must be an integer in 0..=100\n"),
    }
}

/// `/redirect-to?url=U&status_code=C` (any method): status C with `Location: U`.
pub(super) fn redirect_to(req: &Request<Incoming>) -> Reply {
    let mut url = None;
    let mut status = Some(DEFAULT_REDIRECT_STATUS);
    let query = req.uri().query().unwrap_or("");
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match &*key {
            "url" => url = Some(value),
            "status_code" => {
                status = value
                    .parse::<u16>()
                    .ok()
                    .filter(|c| REDIRECT_STATUSES.contains(c))
                    .and_then(|c| StatusCode::from_u16(c).ok());
            }
            _ => {}
        }
    }
    let Some(status) = status else {
        return response::bad_request("status_code must be one of 301, 302, 303, 307, 308\n");
    };
    let Some(url) = url else {
        return response::bad_request("missing url parameter\n");
    };
    match HeaderValue::from_str(&url) {
        Ok(location) => redirect_reply(status, location),
        Err(_) => response::bad_request("url is not a valid header value\n"),
    }
}

/// An empty-bodied redirect.
fn redirect_reply(status: StatusCode, location: HeaderValue) -> Reply {
    let mut reply = response::with_body(status, None, ResponseBody::empty());
    reply.headers_mut().insert(LOCATION, location);
    reply
}
