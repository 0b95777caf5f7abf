//! The engine's entry point: prepare a request (pure, cheap), then run it:
//! HTTP/1.1 on the calling thread (checkout → send → receive head, with one
//! transparent retry when a reused connection turns out stale), or HTTP/2 on
//! the process runtime when the client asks for it and the server agrees.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use nodelay_proto::{
    encode_request_head, encode_request_head_with, request_closes, EncodedHeaders, HeadReader,
    RequestHead,
};

use crate::aconnect::AsyncTransport;
use crate::aio::AsyncClient;
use crate::any_exchange::Exchange;
use crate::connect::Dial;
use crate::deadline::{Deadlines, Timeouts};
use crate::error::{Error, ErrorKind};
use crate::exchange::{receive_head_with, send_request, H1Exchange};
use crate::h2::{block_on, H2Exchange, H2Pool, H2Request, Sent, StreamedBody};
use crate::interrupt::Interrupt;
use crate::limits::{INLINE_BODY_MAX_BYTES, STALE_CONNECTION_RETRIES, UPLOAD_CHUNK_BYTES};
pub use crate::pool::PoolConfig;
use crate::pool::{Pool, PooledConn};
use crate::proxy::{ConnKey, Proxies, ProxySettings, Route};
use crate::target::{Target, TargetCache};
use crate::tls::{TlsOptions, TlsSetup};
use crate::upload::{
    answer_after_failed_send, receive_early_answer, send_streamed, BodySource, StreamFraming,
};

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
    /// The head phase of this request's response: one that asked to close
    /// the connection never gives it back to the pool.
    pub(crate) fn head_reader(&self) -> HeadReader {
        if self.closes {
            HeadReader::after_closing_request(self.is_head)
        } else {
            HeadReader::new(self.is_head)
        }
    }

    /// The exact bytes of the head (and inlined body) that will be written.
    pub fn wire(&self) -> &[u8] {
        &self.wire
    }

    /// Whether the body went into `wire` (else it must be passed to `send`).
    pub fn body_inlined(&self) -> bool {
        self.body_inlined
    }

    /// The request in HTTP/2 form, when it may go over HTTP/2 (the batch
    /// driver sends it on the runtime itself, see `crate::batch`).
    pub(crate) fn h2_request(&self) -> Option<&H2Request> {
        self.h2.as_ref()
    }
}

/// RFC 9110 §9.2.2: safe to send twice.
pub(crate) fn is_idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

pub(crate) fn has_header(headers: &[(&str, &str)], lower_name: &str) -> bool {
    headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(lower_name))
}

/// The framing of a streamed body once the caller's own framing headers are
/// taken into account (see `Client::prepare_streamed`).
pub(crate) fn framing_with_headers(
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

/// The head of `parts` with the given request target and header list,
/// followed by the body when it is small enough to leave in the same write;
/// returns the bytes and whether the body is in them.
pub(crate) fn encode_inline(
    parts: &RequestParts<'_>,
    request_target: &str,
    host: &str,
    headers: &[(&str, &str)],
) -> Result<(Vec<u8>, bool), Error> {
    encode_inline_with(parts, request_target, host, headers, None)
}

/// `encode_inline`, with the header fields already encoded when `encoded` is
/// given (`headers` is then ignored).
fn encode_inline_with(
    parts: &RequestParts<'_>,
    request_target: &str,
    host: &str,
    headers: &[(&str, &str)],
    encoded: Option<&EncodedHeaders>,
) -> Result<(Vec<u8>, bool), Error> {
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
    match encoded {
        None => encode_request_head(&mut wire, &head),
        Some(encoded) => encode_request_head_with(&mut wire, &head, encoded),
    }
    .map_err(|e| Error::protocol(e, ErrorKind::LocalProtocol))?;
    if body_inlined {
        wire.extend_from_slice(parts.body.unwrap_or_default());
    }
    Ok((wire, body_inlined))
}

/// Parses the URL and encodes the request for a direct HTTP/1.1 connection
/// (no proxy route, no HTTP/2: the async driver's form); fails before any I/O
/// on bad input. `Client::prepare` adds routing and HTTP/2.
pub fn prepare(parts: &RequestParts<'_>) -> Result<Prepared, Error> {
    let target = Target::parse(parts.url)?;
    let (wire, body_inlined) = encode_inline(
        parts,
        &target.path_and_query,
        &target.authority,
        parts.headers,
    )?;
    Ok(Prepared {
        key: Route::Direct.key(&target.origin),
        target,
        h2: None,
        wire,
        body_inlined,
        streamed: None,
        is_head: parts.method == "HEAD",
        closes: request_closes(parts.headers),
        idempotent: is_idempotent(parts.method),
    })
}

/// The engine: a connection pool and the HTTP/1.1 driver, and the shared
/// HTTP/2 connections. Thread-safe.
pub struct Client {
    pool: Arc<Pool>,
    /// `None` without proxies: requests then skip routing entirely.
    proxies: Option<Proxies>,
    http2: Http2Mode,
    h2: H2Pool,
    /// The async HTTP/1.1 driver over `pool`, for batches (made at the
    /// first batch: most clients never run one).
    batch_driver: OnceLock<AsyncClient>,
    /// Origins already parsed (see `TargetCache`: the URL parse was the
    /// largest CPU item of a small request).
    targets: TargetCache,
}

impl Client {
    /// A client with this pool and the default TLS settings, HTTP/1.1 only.
    pub fn new(config: PoolConfig) -> Self {
        Self::with_tls(config, TlsOptions::default())
    }

    /// A client with this pool and these TLS settings, HTTP/1.1 only.
    pub fn with_tls(config: PoolConfig, tls: TlsOptions) -> Self {
        Self::with_http2(config, tls, Http2Mode::Off)
    }

    /// A client with this pool, these TLS settings and this use of HTTP/2,
    /// connecting over plain TCP.
    pub fn with_http2(config: PoolConfig, tls: TlsOptions, http2: Http2Mode) -> Self {
        Self::with_dial(config, tls, http2, Dial::default())
    }

    /// `with_http2`, opening connections as `dial` says (a Unix socket, a
    /// local address).
    pub fn with_dial(config: PoolConfig, tls: TlsOptions, http2: Http2Mode, dial: Dial) -> Self {
        let pool = Arc::new(Pool::new(config, TlsSetup::dialing(tls, dial)));
        Client {
            // HTTP/2 connections count towards `max_connections` and expire
            // like HTTP/1.1 ones.
            h2: H2Pool::bounded(Arc::clone(&pool), config.keepalive_expiry),
            pool,
            proxies: None,
            http2,
            batch_driver: OnceLock::new(),
            targets: TargetCache::default(),
        }
    }

    fn may_use_h2(&self, target: &Target) -> bool {
        self.http2.applies_to(target)
    }

    /// A client whose requests go through the proxies in `proxies` (parsed
    /// now: a bad proxy URL fails here, not on the first request).
    pub fn with_proxies(
        config: PoolConfig,
        tls: TlsOptions,
        proxies: &ProxySettings,
    ) -> Result<Self, Error> {
        Self::with_tls(config, tls).proxied(proxies)
    }

    /// This client, routing its requests through `proxies`.
    pub fn proxied(self, proxies: &ProxySettings) -> Result<Self, Error> {
        Ok(Client {
            proxies: Proxies::new(proxies)?,
            ..self
        })
    }

    /// Parses the URL and encodes the request; fails before any I/O on bad input.
    pub fn prepare(&self, parts: &RequestParts<'_>) -> Result<Prepared, Error> {
        let target = self.targets.parse(parts.url)?;
        let route = match &self.proxies {
            None => Route::Direct,
            Some(proxies) => proxies.route(&target.origin),
        };
        let h2 = if route.allows_h2() && self.may_use_h2(&target) {
            Some(H2Request::new(
                parts.method,
                &target,
                parts.headers,
                parts.body,
                is_idempotent(parts.method),
            )?)
        } else {
            None
        };
        // An h2c request (prior knowledge) never falls back to HTTP/1.1 (only
        // ALPN over TLS can choose it): its HTTP/1.1 form would go unused.
        let (wire, body_inlined) = if h2.is_some() && target.origin.scheme == "http" {
            (Vec::new(), false)
        } else {
            let (request_target, headers) = route.request_form(&target, parts.headers);
            encode_inline(parts, &request_target, &target.authority, &headers)?
        };
        let key = route.key(&target.origin);
        Ok(Prepared {
            key,
            target,
            h2,
            wire,
            body_inlined,
            streamed: None,
            is_head: parts.method == "HEAD",
            closes: request_closes(parts.headers),
            idempotent: is_idempotent(parts.method),
        })
    }

    /// Whether every request goes out as HTTP/1.1 on a direct connection
    /// (no proxy, no HTTP/2): [`Client::prepare_encoded`] may then be used.
    pub fn is_direct_http1(&self) -> bool {
        self.proxies.is_none() && self.http2 == Http2Mode::Off
    }

    /// `prepare` with the header fields already validated and encoded (a
    /// caller reusing one header list for many requests; `parts.headers` is
    /// ignored): the same request, byte for byte. Only for a client where
    /// [`Client::is_direct_http1`] (a proxy or HTTP/2 rewrite the fields).
    pub fn prepare_encoded(
        &self,
        parts: &RequestParts<'_>,
        headers: &EncodedHeaders,
    ) -> Result<Prepared, Error> {
        debug_assert!(self.is_direct_http1(), "prepare_encoded on a routed client");
        let target = self.targets.parse(parts.url)?;
        let (wire, body_inlined) = encode_inline_with(
            parts,
            &target.path_and_query,
            &target.authority,
            &[],
            Some(headers),
        )?;
        Ok(Prepared {
            key: Route::Direct.key(&target.origin),
            target,
            h2: None,
            wire,
            body_inlined,
            streamed: None,
            is_head: parts.method == "HEAD",
            closes: request_closes(parts.headers),
            idempotent: is_idempotent(parts.method),
        })
    }

    /// Encodes a request whose body will be streamed from a [`BodySource`]
    /// (`parts.body` is ignored): `Content-Length` for a known size,
    /// `Transfer-Encoding: chunked` otherwise. A `Content-Length` header from
    /// the caller makes a stream of unknown size a stream of that size; one
    /// that contradicts a known size, or a transfer coding other than
    /// chunked, is refused.
    pub fn prepare_streamed(
        &self,
        parts: &RequestParts<'_>,
        framing: StreamFraming,
    ) -> Result<Prepared, Error> {
        prepare_streamed_routed(self.proxies.as_ref(), self.http2, parts, framing)
    }

    /// Sends a request prepared by `prepare_streamed`, pulling its body from
    /// `source`, and reads the response head. A stale reused connection is
    /// replaced (as in `send`) only when `source` can rewind.
    pub fn send_streamed(
        &self,
        prepared: &Prepared,
        source: &mut dyn BodySource,
        timeouts: Timeouts,
        interrupt: &dyn Interrupt,
    ) -> Result<Exchange, Error> {
        let framing = prepared
            .streamed
            .expect("send_streamed needs a request from prepare_streamed");
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        self.pool
            .admit(&prepared.target.origin, &deadlines, interrupt)?;
        let mut buf = Vec::with_capacity(UPLOAD_CHUNK_BYTES);
        // ALPN may hand back the HTTP/1.1 connection it just made (nothing
        // of the body was pulled then).
        let mut adopted = None;
        if let Some(request) = &prepared.h2 {
            let mut body = StreamedBody::pulled_here(source, &mut buf, framing.length());
            match self.send_h2(
                prepared,
                request,
                Some(&mut body),
                &deadlines,
                started,
                interrupt,
            )? {
                Ok(exchange) => return Ok(Exchange::H2(exchange)),
                Err(transport) => adopted = transport,
            }
        }
        let mut retries_left = STALE_CONNECTION_RETRIES;
        loop {
            let fresh = retries_left < STALE_CONNECTION_RETRIES;
            let mut pooled = match adopted.take() {
                Some(pooled) => pooled,
                None => self
                    .pool
                    .checkout(&prepared.key, &deadlines, fresh, interrupt)?,
            };
            let attempt = match send_streamed(
                &mut pooled,
                &prepared.wire,
                framing,
                source,
                &mut buf,
                &deadlines,
                interrupt,
            ) {
                Ok(true) => {
                    receive_head_with(&mut pooled, prepared.head_reader(), &deadlines, interrupt)
                }
                Ok(false) => {
                    receive_early_answer(&mut pooled, prepared.is_head, &deadlines, interrupt)
                }
                Err(e) => answer_after_failed_send(
                    &mut pooled,
                    prepared.is_head,
                    &deadlines,
                    interrupt,
                    e,
                ),
            };
            match attempt {
                Ok((head, head_bytes)) => {
                    return Ok(Exchange::H1(H1Exchange::new(
                        pooled, head, head_bytes, deadlines, started,
                    )))
                }
                Err(e)
                    if e.allows_fresh_connection_retry(
                        pooled.reused,
                        prepared.idempotent,
                        retries_left,
                    ) && source.rewind()? =>
                {
                    retries_left -= 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends a prepared request and reads the response head. `body` must be
    /// the same body given to `prepare` (it is only read when too large to be
    /// inlined).
    pub fn send(
        &self,
        prepared: &Prepared,
        body: Option<&[u8]>,
        timeouts: Timeouts,
        interrupt: &dyn Interrupt,
    ) -> Result<Exchange, Error> {
        debug_assert!(
            prepared.streamed.is_none(),
            "a streamed body goes through send_streamed"
        );
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        self.pool
            .admit(&prepared.target.origin, &deadlines, interrupt)?;
        // ALPN may hand back the HTTP/1.1 connection it just made.
        let mut adopted = None;
        if let Some(request) = &prepared.h2 {
            match self.send_h2(prepared, request, None, &deadlines, started, interrupt)? {
                Ok(exchange) => return Ok(Exchange::H2(exchange)),
                Err(transport) => adopted = transport,
            }
        }
        let large_body = if prepared.body_inlined { None } else { body };
        let mut retries_left = STALE_CONNECTION_RETRIES;
        loop {
            let fresh = retries_left < STALE_CONNECTION_RETRIES;
            let mut pooled = match adopted.take() {
                Some(pooled) => pooled,
                None => self
                    .pool
                    .checkout(&prepared.key, &deadlines, fresh, interrupt)?,
            };
            let attempt = match send_request(
                &mut pooled,
                &prepared.wire,
                large_body,
                &deadlines,
                interrupt,
            ) {
                Ok(()) => {
                    receive_head_with(&mut pooled, prepared.head_reader(), &deadlines, interrupt)
                }
                // The server may have answered and closed before the body
                // was all out (a 413): that answer is the response. A failed
                // write with no answer (EPIPE, ECONNRESET on a stale reused
                // connection) received nothing: idempotent requests may go
                // again.
                Err(e) => answer_after_failed_send(
                    &mut pooled,
                    prepared.is_head,
                    &deadlines,
                    interrupt,
                    e.before_response(),
                ),
            };
            match attempt {
                Ok((head, head_bytes)) => {
                    return Ok(Exchange::H1(H1Exchange::new(
                        pooled, head, head_bytes, deadlines, started,
                    )))
                }
                // A stale keep-alive connection: once more on a fresh one.
                Err(e)
                    if e.allows_fresh_connection_retry(
                        pooled.reused,
                        prepared.idempotent,
                        retries_left,
                    ) =>
                {
                    retries_left -= 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends `request` over HTTP/2 (its body, when streamed, pulled from
    /// `streamed` on this thread) and waits for the response head. `Err`:
    /// the server chose HTTP/1.1 by ALPN; the connection it made for that
    /// is returned, in the pool's keeping, for the request to go on.
    fn send_h2(
        &self,
        prepared: &Prepared,
        request: &H2Request,
        streamed: Option<&mut StreamedBody<'_>>,
        deadlines: &Deadlines,
        started: Instant,
        interrupt: &dyn Interrupt,
    ) -> Result<Result<H2Exchange, Option<PooledConn>>, Error> {
        let sent = block_on(
            async {
                match self
                    .h2
                    .send_streamed(&prepared.key, self.pool.tls(), request, streamed, deadlines)
                    .await?
                {
                    Sent::H2(response) => {
                        let mut exchange = H2Exchange::new(response, started);
                        exchange.prefetch_small_body().await?;
                        Ok(Ok(exchange))
                    }
                    Sent::Http1(transport) => Ok(Err(transport
                        .map(AsyncTransport::into_blocking)
                        .transpose()?)),
                }
            },
            interrupt,
        )?;
        Ok(sent.map_err(|transport| transport.map(|t| self.pool.adopt(prepared.key.clone(), t))))
    }

    /// Closes all idle connections, and lets go of the HTTP/2 connections
    /// (each closes once its open streams end).
    pub fn close(&self) {
        self.pool.close_idle();
        self.h2.clear();
    }

    /// How many idle connections the pool keeps now (for tests and stats).
    pub fn idle_connections(&self) -> usize {
        self.pool.idle_count()
    }

    /// Whether requests may go through a proxy (the batch API then keeps its
    /// threaded path: the async driver connects directly only).
    pub fn has_proxies(&self) -> bool {
        self.proxies.is_some()
    }

    /// The shared HTTP/2 connections and the TLS settings to make them with
    /// (the batch driver awaits `H2Pool::send` on the runtime).
    pub(crate) fn h2_parts(&self) -> (&H2Pool, &TlsSetup) {
        (&self.h2, self.pool.tls())
    }

    /// The async HTTP/1.1 driver over this client's pool, for batches
    /// (`batch.rs`): a batch and `send` take and leave each other's idle
    /// connections and share one `max_connections`.
    pub(crate) fn batch_driver(&self) -> &AsyncClient {
        self.batch_driver
            .get_or_init(|| AsyncClient::on_pool(Arc::clone(&self.pool)))
    }
}

/// A request whose body will be streamed (`parts.body` is ignored): the head
/// with the framing `framing_with_headers` settles (`Transfer-Encoding:
/// chunked` added unless the caller set it), routed through `proxies`; and,
/// when `http2` applies to it on a direct route (as for any other body), its
/// HTTP/2 form with `Content-Length` when the size is known. Shared by the
/// sync and async clients.
pub(crate) fn prepare_streamed_routed(
    proxies: Option<&Proxies>,
    http2: Http2Mode,
    parts: &RequestParts<'_>,
    framing: StreamFraming,
) -> Result<Prepared, Error> {
    let target = Target::parse(parts.url)?;
    let framing = framing_with_headers(parts.headers, framing)?;
    let route = match proxies {
        None => Route::Direct,
        Some(proxies) => proxies.route(&target.origin),
    };
    let h2 = if route.allows_h2() && http2.applies_to(&target) {
        Some(H2Request::streamed(
            parts.method,
            &target,
            parts.headers,
            framing.length(),
            is_idempotent(parts.method),
        )?)
    } else {
        None
    };
    let (request_target, routed) = route.request_form(&target, parts.headers);
    let mut headers: Vec<(&str, &str)> = Vec::with_capacity(routed.len() + 1);
    headers.extend_from_slice(&routed);
    let has_te = has_header(parts.headers, "transfer-encoding");
    if framing == StreamFraming::Chunked && !has_te {
        headers.push(("Transfer-Encoding", "chunked"));
    }
    let mut wire = Vec::with_capacity(256);
    encode_request_head(
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
    drop((request_target, routed, headers));
    let key = route.key(&target.origin);
    Ok(Prepared {
        key,
        target,
        h2,
        wire,
        body_inlined: false,
        streamed: Some(framing),
        is_head: parts.method == "HEAD",
        closes: request_closes(parts.headers),
        idempotent: is_idempotent(parts.method),
    })
}
