//! `/cookies/set`, `/login` and `/cookies`: set cookies, then read back what the
//! client's jar sends, for cookie handling tests and the lab's cookie flow (workload h).

use std::sync::atomic::{AtomicU64, Ordering};

use hyper::body::Incoming;
use hyper::header::{HeaderValue, COOKIE, SET_COOKIE};
use hyper::{Method, Request};

use super::echo::read_body;
use crate::json;
use crate::limits::MAX_LOGIN_BODY_BYTES;
use crate::response::{self, Reply};

/// Name of the cookie `/login` sets.
const SESSION_COOKIE: &str = "session";

/// Numbers each login in this process, so every session value is new and a client
/// can only send the right one by having stored the `Set-Cookie` it got.
static LOGINS: AtomicU64 = AtomicU64::new(0);

/// `POST /login` with a urlencoded form holding `user`: `Set-Cookie:
/// session=<user>-<n>; Path=/` (n counts logins) and `{"cookies": {"session": ...}}`.
/// A form without `user` is 400; another method is 405.
pub(super) async fn login(req: Request<Incoming>) -> Reply {
    if req.method() != Method::POST {
        return response::post_only();
    }
    let body = match read_body(req.into_body(), MAX_LOGIN_BODY_BYTES).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let Some(user) = form_urlencoded::parse(&body)
        .find(|(name, _)| name == "user")
        .map(|(_, value)| value.into_owned())
    else {
        return response::bad_request("login form needs a user field\n");
    };
    let n = LOGINS.fetch_add(1, Ordering::Relaxed) + 1;
    let session = format!("{user}-{n}");
    // The user name is decoded text: it may hold bytes a cookie value cannot.
    let valid = session
        .bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'));
    let header = match HeaderValue::try_from(format!("{SESSION_COOKIE}={session}; Path=/")) {
        Ok(header) if valid => header,
        _ => return response::bad_request("user is not a valid cookie value\n"),
    };
    let mut reply = cookies_json([(SESSION_COOKIE, session.as_str())]);
    reply.headers_mut().append(SET_COOKIE, header);
    reply
}

/// `/cookies/set?name=value&...`: one `Set-Cookie: name=value; Path=/` per pair,
/// in query order, and the pairs as JSON.
pub(super) fn set(req: &Request<Incoming>) -> Reply {
    let query = req.uri().query().unwrap_or("");
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let mut headers = Vec::with_capacity(pairs.len());
    for (name, value) in &pairs {
        // Decoded text may hold bytes a header cannot (CR, LF, NUL).
        match HeaderValue::try_from(format!("{name}={value}; Path=/")) {
            Ok(header) => headers.push(header),
            Err(_) => return response::bad_request("cookie is not a valid header value\n"),
        }
    }
    let mut reply = cookies_json(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    for header in headers {
        reply.headers_mut().append(SET_COOKIE, header);
    }
    reply
}

/// `/cookies`: the cookies of the request's `Cookie` header(s) as JSON.
pub(super) fn cookies(req: &Request<Incoming>) -> Reply {
    let pairs = req
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(parse_cookie_header);
    cookies_json(pairs)
}

/// `{"cookies": {name: value}}`.
fn cookies_json<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Reply {
    let mut out = String::from("{\"cookies\": ");
    json::push_str_map(&mut out, pairs);
    out.push('}');
    response::json(out)
}

/// Splits a `Cookie` header (RFC 6265 §4.2: `name=value` pairs separated by "; ").
/// A piece without '=' is skipped rather than failing the whole header.
fn parse_cookie_header(header: &str) -> impl Iterator<Item = (&str, &str)> {
    header.split(';').filter_map(|piece| {
        let (name, value) = piece.split_once('=')?;
        let name = name.trim();
        (!name.is_empty()).then_some((name, value.trim()))
    })
}

#[cfg(test)]
mod tests {
    use super::parse_cookie_header;

    #[test]
    fn parses_pairs_and_skips_junk() {
        let pairs: Vec<_> = parse_cookie_header("a=1; b = 2;junk; =x; c=").collect();
        assert_eq!(pairs, [("a", "1"), ("b", "2"), ("c", "")]);
    }
}
