//! `/anything`, `/headers` and `/stats`: routes that describe what the server saw,
//! so a test can check the exact request its client sent.

use std::fmt::Write as _;

use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::Request;

use super::echo::read_body;
use crate::json;
use crate::limits::MAX_ANYTHING_BODY_BYTES;
use crate::response::{self, Reply};
use crate::stats::Stats;

/// `/anything*` (any method): the method, path, raw query, headers and body as JSON.
pub(super) async fn anything(req: Request<Incoming>) -> Reply {
    let (parts, body) = req.into_parts();
    let body = match read_body(body, MAX_ANYTHING_BODY_BYTES).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let mut out = String::with_capacity(256 + body.len());
    out.push_str("{\"method\": ");
    json::push_str(&mut out, parts.method.as_str());
    out.push_str(", \"path\": ");
    json::push_str(&mut out, parts.uri.path());
    out.push_str(", \"query\": ");
    json::push_str(&mut out, parts.uri.query().unwrap_or(""));
    out.push_str(", \"headers\": [");
    // hyper keeps headers grouped by name, in order of each name's first appearance.
    for (i, (name, value)) in parts.headers.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('[');
        json::push_str(&mut out, name.as_str());
        out.push_str(", ");
        json::push_str(&mut out, &String::from_utf8_lossy(value.as_bytes()));
        out.push(']');
    }
    out.push_str("], \"body\": ");
    json::push_str(&mut out, &String::from_utf8_lossy(&body));
    // Writing into a String cannot fail.
    let _ = write!(out, ", \"body_len\": {}}}", body.len());
    response::json(out)
}

/// `/headers`: the request headers as an object, repeated names joined by ", ".
pub(super) fn headers(req: &Request<Incoming>) -> Reply {
    let joined = join_repeated(req.headers());
    let mut out = String::from("{\"headers\": ");
    json::push_str_map(&mut out, joined.iter().map(|(k, v)| (*k, v.as_str())));
    out.push('}');
    response::json(out)
}

/// `/stats`: the server's counters, the same the handle reports.
pub(super) fn stats(stats: &Stats) -> Reply {
    response::json(format!(
        "{{\"connections\": {}, \"requests\": {}, \"bytes_received\": {}, \"bytes_sent\": {}}}",
        stats.connections(),
        stats.requests(),
        stats.received(),
        stats.sent()
    ))
}

/// `/stats/in-flight`: the requests being answered now (this one included)
/// and the most answered at once since start: how many requests of a client's
/// batch the server really saw together.
pub(super) fn in_flight(stats: &Stats) -> Reply {
    response::json(format!(
        "{{\"in_flight\": {}, \"peak_in_flight\": {}}}",
        stats.in_flight(),
        stats.peak_in_flight()
    ))
}

/// One `(name, values joined by ", ")` entry per distinct header name.
fn join_repeated(headers: &HeaderMap) -> Vec<(&str, String)> {
    headers
        .keys()
        .map(|name| {
            let values: Vec<_> = headers
                .get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()))
                .collect();
            (name.as_str(), values.join(", "))
        })
        .collect()
}
