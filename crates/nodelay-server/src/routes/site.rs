//! `/site/` and `/site/{n}.html`: a generated web site for crawl benchmarks.
//!
//! [`SITE_PAGES`] deterministic HTML pages of a few KiB each, every one linking
//! to [`LINKS_PER_PAGE`] others (always including the next page, so a crawl from
//! the root reaches them all), with the headers a real static site sends:
//! `content-type`, `cache-control`, `etag`, `last-modified`. A matching
//! `If-None-Match` gets `304 Not Modified`. Pages are built once, on first use.

use std::fmt::Write as _;
use std::sync::OnceLock;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, ETAG, IF_NONE_MATCH, LAST_MODIFIED};
use hyper::{Request, StatusCode};

use super::parse_u64;
use crate::body::ResponseBody;
use crate::response::{self, Reply};

/// Pages in the site: enough that a crawl is hundreds of requests to one host,
/// the case HTTP/2's one multiplexed connection was designed for.
pub const SITE_PAGES: u64 = 500;

/// Links on each page: a typical navigation block plus related-content links.
pub const LINKS_PER_PAGE: u64 = 10;

/// Paragraphs of filler text per page: ~3-4 KiB of HTML, a small real page.
const PARAGRAPHS_PER_PAGE: u64 = 6;

const TEXT_HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
/// Static pages that may be cached for an hour, as CDNs serve them.
const CACHEABLE: HeaderValue = HeaderValue::from_static("public, max-age=3600");
/// Pages never change: one fixed modification date.
const LAST_MODIFIED_DATE: HeaderValue = HeaderValue::from_static("Mon, 02 Nov 2026 08:00:00 GMT");

const WORDS: [&str; 24] = [
    "latency",
    "socket",
    "stream",
    "frame",
    "header",
    "window",
    "buffer",
    "request",
    "response",
    "server",
    "client",
    "crawler",
    "cache",
    "origin",
    "payload",
    "protocol",
    "kernel",
    "thread",
    "runtime",
    "session",
    "handshake",
    "pipeline",
    "channel",
    "connection",
];

struct Page {
    body: Bytes,
    etag: HeaderValue,
}

/// The generated pages, built on first request.
#[derive(Debug, Default)]
pub(crate) struct Site {
    pages: OnceLock<Vec<(Bytes, HeaderValue)>>,
}

impl Site {
    fn pages(&self) -> &[(Bytes, HeaderValue)] {
        self.pages.get_or_init(|| {
            (0..SITE_PAGES)
                .map(|n| {
                    let page = build_page(n);
                    (page.body, page.etag)
                })
                .collect()
        })
    }
}

/// The pages page `n` links to: the next page first, then spread over the site.
pub fn links(n: u64) -> impl Iterator<Item = u64> {
    (0..LINKS_PER_PAGE).map(move |k| {
        if k == 0 {
            (n + 1) % SITE_PAGES
        } else {
            (n * 31 + k * k * 17 + k * 101) % SITE_PAGES
        }
    })
}

fn build_page(n: u64) -> Page {
    let mut html = String::with_capacity(4096);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Page {n} of the nodelay test site</title>\n\
         </head>\n<body>\n\
         <header><h1>Page {n}</h1><nav><a href=\"/site/\">Home</a></nav></header>\n<main>\n"
    );
    // A small deterministic generator, so every run serves identical bytes.
    let mut state = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for p in 0..PARAGRAPHS_PER_PAGE {
        let _ = write!(html, "<h2>Section {p}</h2>\n<p>");
        for w in 0..70 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if w > 0 {
                html.push(' ');
            }
            html.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
        }
        html.push_str(".</p>\n");
    }
    html.push_str("</main>\n<aside><ul>\n");
    for target in links(n) {
        let _ = writeln!(
            html,
            "<li><a href=\"/site/{target}.html\">Page {target}</a></li>"
        );
    }
    html.push_str("</ul></aside>\n</body>\n</html>\n");
    let etag = HeaderValue::from_str(&format!("\"site-{n}-{:x}\"", html.len()))
        .expect("an etag of ASCII digits and letters is a valid header value");
    Page {
        body: Bytes::from(html),
        etag,
    }
}

/// `/site/` (page 0) and `/site/{n}.html`.
pub(super) fn page(rest: &str, req: &Request<Incoming>, site: &Site) -> Reply {
    let n = if rest.is_empty() || rest == "index.html" {
        Some(0)
    } else {
        rest.strip_suffix(".html").and_then(parse_u64)
    };
    let Some(n) = n.filter(|&n| n < SITE_PAGES) else {
        return response::not_found();
    };
    let (body, etag) = &site.pages()[n as usize];
    let not_modified = req
        .headers()
        .get(IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let mut reply = if not_modified {
        response::with_body(StatusCode::NOT_MODIFIED, None, ResponseBody::empty())
    } else {
        response::with_body(
            StatusCode::OK,
            Some(TEXT_HTML),
            ResponseBody::full(body.clone()),
        )
    };
    let headers = reply.headers_mut();
    headers.insert(CACHE_CONTROL, CACHEABLE);
    headers.insert(ETAG, etag.clone());
    headers.insert(LAST_MODIFIED, LAST_MODIFIED_DATE);
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_is_reachable_from_the_root_and_a_few_kib() {
        let mut seen = vec![false; SITE_PAGES as usize];
        let mut queue = vec![0];
        seen[0] = true;
        while let Some(n) = queue.pop() {
            for target in links(n) {
                if !seen[target as usize] {
                    seen[target as usize] = true;
                    queue.push(target);
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        let page = build_page(7);
        assert!(
            (2048..8192).contains(&page.body.len()),
            "{}",
            page.body.len()
        );
        assert_eq!(build_page(7).body, page.body, "deterministic");
    }
}
