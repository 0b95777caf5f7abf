//! Request preparation, pure and cheap: the URL parsed, the route through
//! the proxies chosen, the HTTP/1.1 head encoded (with a small body behind
//! it, one write), the HTTP/2 form made when the request may go over HTTP/2.
//! One function, [`prepare_request`], serves the sync and async clients and
//! every body form; it fails before any I/O on bad input.

use nodelay_proto::{
    encode_request_head, encode_request_head_with, EncodedHead, EncodedHeaders, RequestHead,
};

use crate::error::{Error, ErrorKind};
use crate::h2::H2Request;
use crate::limits::INLINE_BODY_MAX_BYTES;
use crate::proxy::{ConnKey, Proxies, Route};
use crate::sequence::{Http2Attempt, Sequence};
use crate::target::{Target, TargetCache};
use crate::upload::StreamFraming;

/// A request as the caller describes it.
pub struct RequestParts<'a> {
    /// The request method, sent as given (`GET`, `POST`, an extension method).
    pub method: &'a str,
    /// The absolute `http`/`https` URL, query included.
    pub url: &'a str,
    /// Header fields in sending order; `Host` and framing are added when missing.
    pub headers: &'a [(&'a str, &'a str)],
    /// The whole body, or `None` for a request without one.
    pub body: Option<&'a [u8]>,
}

/// Whether and how a client uses HTTP/2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Http2Mode {
    /// HTTP/1.1 only (the default).
    #[default]
    Off,
    /// `https`: offer `h2` and `http/1.1` by ALPN, use what the server picks.
    /// `http`: HTTP/1.1 (no cleartext upgrade).
    Negotiate,
    /// `http`: HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3). `https`: as
    /// `Negotiate`.
    PriorKnowledge,
}

impl Http2Mode {
    /// Whether a request to `target` goes over HTTP/2 in this mode (over TLS
    /// when the server also picks `h2` by ALPN). The body plays no part:
    /// bytes and streamed bodies go the same way.
    pub(crate) fn applies_to(self, target: &Target) -> bool {
        match self {
            Http2Mode::Off => false,
            Http2Mode::Negotiate => target.origin.scheme == "https",
            Http2Mode::PriorKnowledge => true,
        }
    }
}

/// A request encoded and ready to send (possibly more than once).
pub struct Prepared {
    /// The parsed URL: where the request goes and its request target.
    pub target: Target,
    /// Which pooled connections may carry it (origin and proxy route).
    pub(crate) key: ConnKey,
    /// The request in HTTP/2 form, when it may go over HTTP/2.
    pub(crate) h2: Option<H2Request>,
    /// Whether it tries HTTP/2 first, and whether HTTP/1.1 may follow.
    pub(crate) http2: Http2Attempt,
    /// Head, followed by the body when it is small (one write).
    pub(crate) wire: Vec<u8>,
    pub(crate) body_inlined: bool,
    /// Set when the body is streamed from a [`BodySource`] (`send_streamed`).
    pub(crate) streamed: Option<StreamFraming>,
    pub(crate) is_head: bool,
    /// The request's own fields ask to close the connection after it.
    pub(crate) closes: bool,
    pub(crate) idempotent: bool,
}

impl Prepared {
    /// The exchange sequence of this request (HTTP/2 first when it may go
    /// so); `streamed`: its body comes from a source that must be rewound
    /// before it goes again.
    pub(crate) fn sequence(&self, streamed: bool) -> Sequence {
        Sequence::new(
            self.http2,
            self.is_head,
            self.closes,
            self.idempotent,
            streamed,
        )
    }

    /// The exact bytes of the head (and inlined body) that will be written.
    pub fn wire(&self) -> &[u8] {
        &self.wire
    }

    /// Whether the body went into `wire` (else it must be passed to `send`).
    pub fn body_inlined(&self) -> bool {
        self.body_inlined
    }

    /// What of `body` (the body given to `prepare`) is written after `wire`:
    /// nothing when it was inlined.
    pub(crate) fn large_body<'b>(&self, body: Option<&'b [u8]>) -> Option<&'b [u8]> {
        body.filter(|_| !self.body_inlined)
    }
}

/// How the body of a request to prepare is given.
#[derive(Clone, Copy)]
pub(crate) enum BodyForm<'a> {
    /// `parts.body`, whole (or none).
    Whole,
    /// `parts.body`, whole, with the header fields already validated and
    /// encoded (`parts.headers` is ignored); for a direct HTTP/1.1 route only.
    Encoded(&'a EncodedHeaders),
    /// Streamed from a body source with this framing (`parts.body` is
    /// ignored), settled against the caller's framing headers.
    Streamed(StreamFraming),
}

/// Where a request is prepared for: the client's parsed-origin cache (none:
/// parse every URL), its proxies (none: direct) and its use of HTTP/2.
#[derive(Clone, Copy)]
pub(crate) struct Preparer<'a> {
    pub(crate) targets: Option<&'a TargetCache>,
    pub(crate) proxies: Option<&'a Proxies>,
    pub(crate) http2: Http2Mode,
}

/// Parses the URL and encodes the request for `how`'s route and, when it may
/// go over HTTP/2, in HTTP/2 form too; fails before any I/O on bad input.
pub(crate) fn prepare_request(
    how: Preparer<'_>,
    parts: &RequestParts<'_>,
    body: BodyForm<'_>,
) -> Result<Prepared, Error> {
    let target = match how.targets {
        Some(cache) => cache.parse(parts.url)?,
        None => Target::parse(parts.url)?,
    };
    let streamed = match body {
        BodyForm::Streamed(framing) => Some(framing_with_headers(parts.headers, framing)?),
        _ => None,
    };
    let route = match how.proxies {
        None => Route::Direct,
        Some(proxies) => proxies.route(&target.origin),
    };
    let idempotent = is_idempotent(parts.method);
    let h2 = if route.allows_h2() && how.http2.applies_to(&target) {
        Some(match streamed {
            Some(framing) => H2Request::streamed(
                parts.method,
                &target,
                parts.headers,
                framing.length(),
                idempotent,
            )?,
            None => H2Request::new(parts.method, &target, parts.headers, parts.body, idempotent)?,
        })
    } else {
        None
    };
    // Only ALPN over TLS can choose HTTP/1.1 for a request that goes over
    // HTTP/2: an h2c request (prior knowledge) never falls back, so its
    // HTTP/1.1 form would go unused.
    let http2 = match &h2 {
        None => Http2Attempt::None,
        Some(_) if target.origin.scheme == "https" => Http2Attempt::ThenHttp1,
        Some(_) => Http2Attempt::Only,
    };
    let wire = if http2 == Http2Attempt::Only {
        Wire::default()
    } else {
        match (body, streamed) {
            (BodyForm::Encoded(encoded), _) => {
                debug_assert!(
                    matches!(route, Route::Direct),
                    "encoded headers on a routed request"
                );
                encode_inline(
                    parts,
                    &target.path_and_query,
                    &target.authority,
                    &[],
                    Some(encoded),
                )?
            }
            (_, Some(framing)) => encode_streamed_head(parts, &route, &target, framing)?,
            _ => {
                let (request_target, headers) = route.request_form(&target, parts.headers);
                encode_inline(parts, &request_target, &target.authority, &headers, None)?
            }
        }
    };
    Ok(Prepared {
        key: route.key(&target.origin),
        target,
        h2,
        http2,
        wire: wire.bytes,
        body_inlined: wire.body_inlined,
        streamed,
        is_head: parts.method == "HEAD",
        closes: wire.head.closes,
        idempotent,
    })
}

/// Parses the URL and encodes the request for a direct HTTP/1.1 connection
/// (no proxy route, no HTTP/2); fails before any I/O on bad input.
/// `Client::prepare` adds routing and HTTP/2.
pub fn prepare(parts: &RequestParts<'_>) -> Result<Prepared, Error> {
    let how = Preparer {
        targets: None,
        proxies: None,
        http2: Http2Mode::Off,
    };
    prepare_request(how, parts, BodyForm::Whole)
}

/// RFC 9110 §9.2.2: safe to send twice.
pub(crate) fn is_idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

fn has_header(headers: &[(&str, &str)], lower_name: &str) -> bool {
    headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(lower_name))
}

/// The framing of a streamed body once the caller's own framing headers are
/// taken into account (see `Client::prepare_streamed`).
fn framing_with_headers(
    headers: &[(&str, &str)],
    framing: StreamFraming,
) -> Result<StreamFraming, Error> {
    let refuse = |message: String| Err(Error::new(ErrorKind::LocalProtocol, message));
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("transfer-encoding")
            && (framing != StreamFraming::Chunked || !value.trim().eq_ignore_ascii_case("chunked"))
        {
            return refuse(format!(
                "Transfer-Encoding: {value} is not allowed on a streamed body of known size (only chunked for one of unknown size)"
            ));
        }
    }
    let Some((_, given)) = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    else {
        return Ok(framing);
    };
    let Ok(given) = given.trim().parse::<u64>() else {
        return refuse(format!("invalid Content-Length header: {given:?}"));
    };
    match framing {
        StreamFraming::Length(n) if n != given => refuse(format!(
            "the Content-Length header ({given}) contradicts the body's size ({n} bytes)"
        )),
        _ if has_header(headers, "transfer-encoding") => {
            refuse("both Content-Length and Transfer-Encoding given".to_owned())
        }
        _ => Ok(StreamFraming::Length(given)),
    }
}

/// A request's HTTP/1.1 form: what goes on the wire, and what encoding it
/// learnt of the header fields.
struct Wire {
    /// The head, followed by the body when it is small (one write).
    bytes: Vec<u8>,
    body_inlined: bool,
    head: EncodedHead,
}

impl Default for Wire {
    /// No HTTP/1.1 form (a request by prior knowledge over HTTP/2).
    fn default() -> Wire {
        Wire {
            bytes: Vec::new(),
            body_inlined: false,
            head: EncodedHead { closes: false },
        }
    }
}

/// The head of `parts` with the given request target and header list (or
/// the header fields already encoded, when `encoded` is given: `headers` is
/// then ignored), followed by the body when it is small enough to leave in
/// the same write.
#[inline]
fn encode_inline(
    parts: &RequestParts<'_>,
    request_target: &str,
    host: &str,
    headers: &[(&str, &str)],
    encoded: Option<&EncodedHeaders>,
) -> Result<Wire, Error> {
    let body_len = parts.body.map(|b| b.len());
    let body_inlined = body_len.is_some_and(|n| n <= INLINE_BODY_MAX_BYTES);
    let mut wire = Vec::with_capacity(
        256 + if body_inlined {
            body_len.unwrap_or(0)
        } else {
            0
        },
    );
    let head = RequestHead {
        method: parts.method,
        target: request_target,
        host,
        headers,
        content_length: body_len.map(|n| n as u64),
    };
    let encoded = match encoded {
        None => encode_request_head(&mut wire, &head),
        Some(encoded) => encode_request_head_with(&mut wire, &head, encoded),
    }
    .map_err(|e| Error::protocol(e, ErrorKind::LocalProtocol))?;
    if body_inlined {
        wire.extend_from_slice(parts.body.unwrap_or_default());
    }
    Ok(Wire {
        bytes: wire,
        body_inlined,
        head: encoded,
    })
}

/// The head of a request whose body will be streamed with `framing`
/// (`Transfer-Encoding: chunked` added unless the caller set it), in the
/// form `route` sends it.
fn encode_streamed_head(
    parts: &RequestParts<'_>,
    route: &Route,
    target: &Target,
    framing: StreamFraming,
) -> Result<Wire, Error> {
    let (request_target, routed) = route.request_form(target, parts.headers);
    let mut headers: Vec<(&str, &str)> = Vec::with_capacity(routed.len() + 1);
    headers.extend_from_slice(&routed);
    if framing == StreamFraming::Chunked && !has_header(parts.headers, "transfer-encoding") {
        headers.push(("Transfer-Encoding", "chunked"));
    }
    let mut wire = Vec::with_capacity(256);
    let head = encode_request_head(
        &mut wire,
        &RequestHead {
            method: parts.method,
            target: &request_target,
            host: &target.authority,
            headers: &headers,
            content_length: framing.length(),
        },
    )
    .map_err(|e| Error::protocol(e, ErrorKind::LocalProtocol))?;
    Ok(Wire {
        bytes: wire,
        body_inlined: false,
        head,
    })
}
