//! The engine's entry point: prepare a request (`request.rs`), then drive
//! its exchange sequence (`sequence.rs`) on the calling thread: HTTP/2 first
//! when the client asks for it (on the process runtime, through the
//! blocking executor), else, or when ALPN picks HTTP/1.1, checkout → send →
//! head, with one transparent retry when a reused connection turns out
//! stale.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use nodelay_proto::EncodedHeaders;

use crate::aconnect::AsyncTransport;
use crate::aio::client::AsyncClient;
use crate::any_exchange::Exchange;
use crate::deadline::{Deadlines, Timeouts};
use crate::dial::Dial;
use crate::error::Error;
use crate::exchange::{receive_head_with, H1Exchange};
use crate::executor::block_on;
use crate::h2::{H2Exchange, H2Pool, Sent, StreamedBody};
use crate::interrupt::Interrupt;
use crate::limits::UPLOAD_CHUNK_BYTES;
use crate::pool::blocking::PooledConn;
use crate::pool::Pool;
pub use crate::pool::PoolConfig;
use crate::proxy::{Proxies, ProxySettings};
use crate::request::{prepare_request, BodyForm, Http2Mode, Prepared, Preparer, RequestParts};
use crate::sequence::Step;
use crate::target::TargetCache;
use crate::tls::{TlsOptions, TlsSetup};
use crate::upload::{BodySource, Outgoing, StreamFraming};

/// The engine: a connection pool and the HTTP/1.1 driver, and the shared
/// HTTP/2 connections. Thread-safe.
pub struct Client {
    pool: Arc<Pool>,
    /// `None` without proxies: requests then skip routing entirely.
    proxies: Option<Proxies>,
    http2: Http2Mode,
    /// Shared with `batch_driver`.
    h2: Arc<H2Pool>,
    /// The async driver over `pool` and `h2`, for batches (made at the
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
            h2: Arc::new(H2Pool::bounded(Arc::clone(&pool), config.keepalive_expiry)),
            pool,
            proxies: None,
            http2,
            batch_driver: OnceLock::new(),
            targets: TargetCache::default(),
        }
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

    fn preparer(&self) -> Preparer<'_> {
        Preparer {
            targets: Some(&self.targets),
            proxies: self.proxies.as_ref(),
            http2: self.http2,
        }
    }

    /// Parses the URL and encodes the request; fails before any I/O on bad input.
    pub fn prepare(&self, parts: &RequestParts<'_>) -> Result<Prepared, Error> {
        prepare_request(self.preparer(), parts, BodyForm::Whole)
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
        prepare_request(self.preparer(), parts, BodyForm::Encoded(headers))
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
        prepare_request(self.preparer(), parts, BodyForm::Streamed(framing))
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
        let mut buf = Vec::with_capacity(UPLOAD_CHUNK_BYTES);
        let body = Outgoing::Streamed {
            source,
            framing,
            buf: &mut buf,
        };
        self.run(prepared, body, timeouts, interrupt)
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
        let body = Outgoing::Bytes(prepared.large_body(body));
        self.run(prepared, body, timeouts, interrupt)
    }

    /// Runs one request: its rate-limit token, then the exchange sequence.
    fn run(
        &self,
        prepared: &Prepared,
        body: Outgoing<'_>,
        timeouts: Timeouts,
        interrupt: &dyn Interrupt,
    ) -> Result<Exchange, Error> {
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        self.pool
            .admit(&prepared.target.origin, &deadlines, interrupt)?;
        self.drive(prepared, body, deadlines, started, interrupt)
    }

    /// The blocking driver of the exchange sequence: runs each step
    /// `Sequence` asks for on this thread (HTTP/2 on the process runtime,
    /// through the blocking executor).
    fn drive(
        &self,
        prepared: &Prepared,
        mut body: Outgoing<'_>,
        deadlines: Deadlines,
        started: Instant,
        interrupt: &dyn Interrupt,
    ) -> Result<Exchange, Error> {
        let mut sequence = prepared.sequence(body.is_streamed());
        // The connection ALPN made when it chose HTTP/1.1.
        let mut adopted: Option<PooledConn> = None;
        let mut current: Option<PooledConn> = None;
        loop {
            match sequence.next() {
                Step::Http2 => {
                    match self.send_h2(prepared, &mut body, &deadlines, started, interrupt)? {
                        Ok(exchange) => return Ok(Exchange::H2(exchange)),
                        Err(transport) => {
                            adopted = transport;
                            sequence.http2_declined();
                        }
                    }
                }
                Step::Checkout { fresh } => {
                    // A stale connection gives its pool slot back first: a
                    // one-connection pool would otherwise wait on itself.
                    drop(current.take());
                    let pooled = match adopted.take() {
                        Some(pooled) => pooled,
                        None => self
                            .pool
                            .checkout(&prepared.key, &deadlines, fresh, interrupt)?,
                    };
                    sequence.checked_out(pooled.reused);
                    current = Some(pooled);
                }
                Step::Send => {
                    let pooled = current.as_mut().expect("a connection is checked out");
                    let sent = body.send(pooled, &prepared.wire, &deadlines, interrupt);
                    sequence.sent(sent, || !pooled.conn().is_reusable());
                }
                Step::Receive(reader) => {
                    let pooled = current.as_mut().expect("a connection is checked out");
                    match receive_head_with(pooled, reader, &deadlines, interrupt) {
                        Ok((head, head_bytes)) => {
                            let pooled = current.take().expect("a connection is checked out");
                            return Ok(Exchange::H1(H1Exchange::new(
                                pooled, head, head_bytes, deadlines, started,
                            )));
                        }
                        Err(e) => sequence.not_received(e),
                    }
                }
                Step::Rewind => sequence.rewound(body.rewind()),
                Step::Fail(e) => return Err(e),
            }
        }
    }

    /// Sends the request over HTTP/2 (a streamed `body` pulled on this
    /// thread) and waits for the response head, with a small body
    /// prefetched in the same wait. `Err`: the server chose HTTP/1.1 by
    /// ALPN; the connection it made for that is returned, in the pool's
    /// keeping, for the request to go on.
    fn send_h2(
        &self,
        prepared: &Prepared,
        body: &mut Outgoing<'_>,
        deadlines: &Deadlines,
        started: Instant,
        interrupt: &dyn Interrupt,
    ) -> Result<Result<H2Exchange, Option<PooledConn>>, Error> {
        let request = prepared.h2.as_ref().expect("an HTTP/2 form");
        let mut streamed = match body {
            Outgoing::Streamed {
                source,
                framing,
                buf,
            } => Some(StreamedBody::pulled_here(
                &mut **source,
                buf,
                framing.length(),
            )),
            Outgoing::Bytes(_) => None,
        };
        let sent = block_on(
            async {
                match self
                    .h2
                    .send_streamed(
                        &prepared.key,
                        self.pool.tls(),
                        request,
                        streamed.as_mut(),
                        deadlines,
                    )
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

    /// The peer address of the HTTP/1.1 connection the latest request used,
    /// when it is kept for the next one (idle in the pool, alive); `None`
    /// when it was closed (`Connection: close`, an error, a body left
    /// unread), when the request went over HTTP/2, or before any request.
    /// Through a proxy, the proxy's address. With several threads sending
    /// at once, "latest" is whichever checkout came last.
    pub fn kept_peer(&self) -> Option<std::net::SocketAddr> {
        self.pool.kept_peer()
    }

    /// Whether requests may go through a proxy (the batch API then keeps its
    /// threaded path: the async driver connects directly only).
    pub fn has_proxies(&self) -> bool {
        self.proxies.is_some()
    }

    /// The async driver over this client's pool and HTTP/2 connections, for
    /// batches (`batch.rs`): a batch and `send` take and leave each other's
    /// idle connections, share the HTTP/2 connection of an origin and one
    /// `max_connections`.
    pub(crate) fn batch_driver(&self) -> &AsyncClient {
        self.batch_driver
            .get_or_init(|| AsyncClient::on_pool(Arc::clone(&self.pool), Arc::clone(&self.h2)))
    }
}
