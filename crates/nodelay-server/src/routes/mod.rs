//! Request routing: the path's first segment picks a route module.
//!
//! Matching uses `strip_prefix` on the borrowed path, so routing allocates nothing.

mod cookies;
mod drip;
mod echo;
mod encoded;
mod inspect;
mod payloads;
mod redirect;
pub(crate) mod site;
mod status;

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Method, Request};

use crate::response::{self, Reply};
use crate::state::State;

/// Answers one request. Never fails: every problem is an HTTP status.
pub(crate) async fn handle(req: Request<Incoming>, state: Arc<State>) -> Result<Reply, Infallible> {
    state.stats.request_started();
    let is_head = req.method() == Method::HEAD;
    let answering = state.stats.answering();
    let reply = route(req, &state).await;
    drop(answering);
    Ok(if is_head { without_body(reply) } else { reply })
}

/// The answer to HEAD: the GET answer's head, no body. HTTP/1.1 framing drops
/// the body by itself, but HTTP/2 would send it as DATA frames, which a client
/// must reject (RFC 9113 §8.1.1); the length the GET would have is kept.
fn without_body(reply: Reply) -> Reply {
    use hyper::body::Body as _;
    let (mut parts, body) = reply.into_parts();
    if let Some(len) = body.size_hint().exact() {
        if !parts.headers.contains_key(hyper::header::CONTENT_LENGTH)
            && parts.status != 204
            && parts.status != 304
        {
            parts
                .headers
                .insert(hyper::header::CONTENT_LENGTH, len.into());
        }
    }
    Reply::from_parts(parts, crate::body::ResponseBody::empty())
}

async fn route(req: Request<Incoming>, state: &State) -> Reply {
    let path = req.uri().path();

    // Routes that take any method.
    if path == "/echo" {
        return echo::echo(req).await;
    }
    if path == "/count" {
        return echo::count(req).await;
    }
    if path.starts_with("/anything") {
        return inspect::anything(req).await;
    }
    if path == "/redirect-to" {
        return redirect::redirect_to(&req);
    }
    if path == "/login" {
        return cookies::login(req).await;
    }

    // Everything else is read-only.
    if !is_read(req.method()) {
        return if is_known_read_route(path) {
            response::get_only()
        } else {
            response::not_found()
        };
    }
    if let Some(n) = path.strip_prefix("/bytes/") {
        return payloads::bytes(n, state);
    }
    if let Some(n) = path.strip_prefix("/chunked/") {
        return payloads::chunked(n, state);
    }
    if let Some(n) = path.strip_prefix("/json/") {
        return payloads::json(n, state);
    }
    if let Some(code) = path.strip_prefix("/status/") {
        return status::status(code);
    }
    if let Some(ms) = path.strip_prefix("/delay/") {
        return status::delay(ms).await;
    }
    if let Some(n) = path.strip_prefix("/drip/") {
        return drip::drip(n, &req);
    }
    if let Some(n) = path.strip_prefix("/redirect/") {
        return redirect::redirect(n);
    }
    if let Some(rest) = path.strip_prefix("/site/") {
        return site::page(rest, &req, &state.site);
    }
    if let Some((coding, n)) = path[1..].split_once('/') {
        if let Some(coding) = encoded::Coding::from_route(coding) {
            return encoded::encoded(coding, n, state);
        }
    }
    match path {
        "/headers" => inspect::headers(&req),
        "/stats" => inspect::stats(&state.stats),
        "/stats/in-flight" => inspect::in_flight(&state.stats),
        "/cookies" => cookies::cookies(&req),
        "/cookies/set" => cookies::set(&req),
        _ => response::not_found(),
    }
}

/// GET and HEAD: the methods of the read-only routes.
fn is_read(method: &Method) -> bool {
    method == Method::GET || method == Method::HEAD
}

/// Whether `path` belongs to a read-only route, so a wrong method gets 405, not 404.
fn is_known_read_route(path: &str) -> bool {
    const PREFIXES: [&str; 12] = [
        "/site/",
        "/gzip/",
        "/deflate/",
        "/brotli/",
        "/zstd/",
        "/bytes/",
        "/chunked/",
        "/json/",
        "/status/",
        "/delay/",
        "/drip/",
        "/redirect/",
    ];
    const EXACT: [&str; 5] = [
        "/headers",
        "/stats",
        "/stats/in-flight",
        "/cookies",
        "/cookies/set",
    ];
    PREFIXES.iter().any(|p| path.starts_with(p)) || EXACT.contains(&path)
}

/// Parses a decimal path parameter (`/bytes/{n}`), `None` for anything else.
fn parse_u64(segment: &str) -> Option<u64> {
    // `u64::from_str` accepts a leading '+'; a path parameter should not.
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse().ok()
}
