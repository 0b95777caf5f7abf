//! `/cookies/set` and `/cookies`: set cookies, then read back what the client's
//! jar sends, for cookie handling tests.

use hyper::body::Incoming;
use hyper::header::{HeaderValue, COOKIE, SET_COOKIE};
use hyper::Request;

use crate::json;
use crate::response::{self, Reply};

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
