//! The async engine's entry point: prepare a request (routing through
//! proxies, HTTP/2 form when the client asks for it), then checkout → send
//! → receive head, with the sync driver's one transparent retry when a
//! reused connection was stale; or HTTP/2 on the connection shared by every
//! task for the origin, falling back to HTTP/1.1 when ALPN says so.

use std::sync::Arc;
use std::time::Instant;

use nodelay_proto::request_closes;

use crate::aconnect::AsyncTransport;
use crate::aio::any_exchange::AsyncExchange;
use crate::aio::exchange::{receive_head_with, AsyncH1Exchange};
use crate::aio::h2::AsyncH2Exchange;
use crate::aio::pool::AsyncPooled;
use crate::aio::upload::{answer_after_failed_send, receive_early_answer, send_streamed, BodyPump};
use crate::client::{
    encode_inline, is_idempotent, prepare_streamed_routed, Http2Mode, Prepared, RequestParts,
};
use crate::connect::Dial;
use crate::deadline::{Deadlines, Timeouts};
use crate::error::Error;
use crate::h2::{H2Pool, H2Request, Sent, StreamedBody};
use crate::limits::STALE_CONNECTION_RETRIES;
use crate::pool::{Pool, PoolConfig};
use crate::proxy::{ConnKey, Proxies, ProxySettings, Route};
use crate::target::{Origin, Target, TargetCache};
use crate::tls::{TlsOptions, TlsSetup};
use crate::upload::StreamFraming;

/// The async engine: a connection pool and the HTTP/2 connections, shared
/// by every task that holds a clone (a refcount bump), driven on the tokio
/// runtime.
#[derive(Clone)]
pub struct AsyncClient {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Arc<Pool>,
    /// `None` without proxies: requests then skip routing entirely.
    proxies: Option<Proxies>,
    http2: Http2Mode,
    h2: H2Pool,
    targets: TargetCache,
}

impl AsyncClient {
    /// A client with the pool settings `config`, default TLS, no HTTP/2 and no proxy.
    pub fn new(config: PoolConfig) -> Self {
        Self::with_tls(config, TlsOptions::default())
    }

    /// A client with the pool settings `config` and the TLS settings `tls`, no HTTP/2
    /// and no proxy.
    pub fn with_tls(config: PoolConfig, tls: TlsOptions) -> Self {
        Self::with_options(config, tls, Http2Mode::Off, &ProxySettings::default())
            .expect("no proxy to parse")
    }

    /// A client with `Client`'s options: HTTP/2 mode and proxies (parsed
    /// now: a bad proxy URL fails here, not on the first request).
    pub fn with_options(
        config: PoolConfig,
        tls: TlsOptions,
        http2: Http2Mode,
        proxies: &ProxySettings,
    ) -> Result<Self, Error> {
        Self::with_dial(config, tls, http2, proxies, Dial::default())
    }

    /// `with_options`, opening connections as `dial` says (a Unix socket, a
    /// local address).
    pub fn with_dial(
        config: PoolConfig,
        tls: TlsOptions,
        http2: Http2Mode,
        proxies: &ProxySettings,
        dial: Dial,
    ) -> Result<Self, Error> {
        // HTTP/2 connections count towards `max_connections` and expire
        // like HTTP/1.1 ones.
        let pool = Arc::new(Pool::new(config, TlsSetup::dialing(tls, dial)));
        let h2 = H2Pool::bounded(Arc::clone(&pool), config.keepalive_expiry);
        Ok(AsyncClient {
            inner: Arc::new(Inner {
                pool,
                proxies: Proxies::new(proxies)?,
                http2,
                h2,
                targets: TargetCache::default(),
            }),
        })
    }

    /// The async HTTP/1.1 driver over another client's pool (a sync
    /// `Client`'s, for its batches, `batch.rs`): no proxies and no HTTP/2 of
    /// its own (the batch sends HTTP/2 through the `Client`).
    pub(crate) fn on_pool(pool: Arc<Pool>) -> Self {
        AsyncClient {
            inner: Arc::new(Inner {
                pool,
                proxies: None,
                http2: Http2Mode::Off,
                h2: H2Pool::new(),
                targets: TargetCache::default(),
            }),
        }
    }

    /// Takes a connection ALPN made for HTTP/1.1 (an HTTP/2 attempt the
    /// server declined) into this client's pool, checked out for `key`.
    pub(crate) fn adopt(&self, key: &ConnKey, transport: AsyncTransport) -> AsyncPooled {
        self.inner.pool.adopt_async(key, transport)
    }

    fn route(&self, target: &Target) -> Route {
        match &self.inner.proxies {
            None => Route::Direct,
            Some(proxies) => proxies.route(&target.origin),
        }
    }

    fn may_use_h2(&self, target: &Target) -> bool {
        self.inner.http2.applies_to(target)
    }

    /// Parses the URL and encodes the request for this client's route
    /// (direct, forwarded or tunnelled) and, when it may go over HTTP/2 (a
    /// direct route, as on the sync path), in HTTP/2 form too; fails before
    /// any I/O on bad input.
    pub fn prepare(&self, parts: &RequestParts<'_>) -> Result<Prepared, Error> {
        let target = self.inner.targets.parse(parts.url)?;
        let route = self.route(&target);
        let (request_target, headers) = route.request_form(&target, parts.headers);
        let (wire, body_inlined) =
            encode_inline(parts, &request_target, &target.authority, &headers)?;
        drop((request_target, headers));
        let idempotent = is_idempotent(parts.method);
        let h2 = if route.allows_h2() && self.may_use_h2(&target) {
            Some(H2Request::new(
                parts.method,
                &target,
                parts.headers,
                parts.body,
                idempotent,
            )?)
        } else {
            None
        };
        Ok(Prepared {
            key: route.key(&target.origin),
            target,
            h2,
            wire,
            body_inlined,
            streamed: None,
            is_head: parts.method == "HEAD",
            closes: request_closes(parts.headers),
            idempotent,
        })
    }

    /// Encodes a request whose body will be streamed from a [`BodyPump`]
    /// (`parts.body` is ignored), with `Client::prepare_streamed`'s framing
    /// rules, in HTTP/2 form too when the request may go over HTTP/2 (as on
    /// the sync path).
    pub fn prepare_streamed(
        &self,
        parts: &RequestParts<'_>,
        framing: StreamFraming,
    ) -> Result<Prepared, Error> {
        prepare_streamed_routed(
            self.inner.proxies.as_ref(),
            self.inner.http2,
            parts,
            framing,
        )
    }

    /// Sends a request made by [`AsyncClient::prepare`] (or
    /// [`crate::prepare`]) and reads the response head. `body` is the
    /// request body (only read when too large to have been inlined behind
    /// the head).
    pub async fn send(
        &self,
        prepared: &Prepared,
        body: Option<&[u8]>,
        timeouts: Timeouts,
    ) -> Result<AsyncExchange, Error> {
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        self.admit(&prepared.target.origin, &deadlines).await?;
        // ALPN may hand back the HTTP/1.1 connection it just made.
        let adopted = match self.send_h2(prepared, None, &deadlines, started).await? {
            Ok(exchange) => return Ok(exchange),
            Err(adopted) => adopted,
        };
        let exchange = self
            .send_h1(prepared, body, deadlines, started, adopted)
            .await?;
        Ok(AsyncExchange::h1(exchange))
    }

    /// Waits for the rate limit's token for one request to `origin` (at
    /// once without a rate limit): every request, HTTP/1.1 or HTTP/2 and
    /// whatever its connection, takes one.
    pub(crate) async fn admit(&self, origin: &Origin, deadlines: &Deadlines) -> Result<(), Error> {
        self.inner.pool.admit_async(origin, deadlines).await
    }

    /// The connection an HTTP/1.1 attempt goes on: `first` (the one ALPN
    /// handed back) while there is one, else one from the pool, a new one
    /// once a retry was spent (`retries_left` below its start).
    async fn h1_connection(
        &self,
        prepared: &Prepared,
        deadlines: &Deadlines,
        first: &mut Option<AsyncPooled>,
        retries_left: usize,
    ) -> Result<AsyncPooled, Error> {
        match first.take() {
            Some(pooled) => Ok(pooled),
            None => {
                let fresh = retries_left < STALE_CONNECTION_RETRIES;
                self.inner
                    .pool
                    .checkout_async(&prepared.key, deadlines, fresh)
                    .await
            }
        }
    }

    /// Sends `prepared` over HTTP/2 when it would go so, its `body` (if
    /// any) streamed: `Ok` with the exchange, or `Err` with the connection
    /// the HTTP/1.1 path starts from (one ALPN handed back, else `None`).
    async fn send_h2(
        &self,
        prepared: &Prepared,
        body: Option<&mut StreamedBody<'_>>,
        deadlines: &Deadlines,
        started: Instant,
    ) -> Result<Result<AsyncExchange, Option<AsyncPooled>>, Error> {
        let Some(request) = &prepared.h2 else {
            return Ok(Err(None));
        };
        let inner = &self.inner;
        let sent = inner
            .h2
            .send_streamed(&prepared.key, inner.pool.tls(), request, body, deadlines)
            .await?;
        Ok(match sent {
            Sent::H2(response) => Ok(AsyncExchange::h2(AsyncH2Exchange::new(response, started))),
            Sent::Http1(transport) => {
                Err(transport.map(|t| inner.pool.adopt_async(&prepared.key, t)))
            }
        })
    }

    /// The HTTP/1.1 part of [`AsyncClient::send`]: writes the request on
    /// `first` when given (a connection ALPN handed over, or one the caller
    /// kept from its previous request to the same origin), else on a
    /// connection from the pool, and reads the response head. A reused
    /// connection that fails before any response byte is replaced once
    /// (idempotent requests only), as on the sync path.
    pub(crate) async fn send_h1(
        &self,
        prepared: &Prepared,
        body: Option<&[u8]>,
        deadlines: Deadlines,
        started: Instant,
        mut first: Option<AsyncPooled>,
    ) -> Result<AsyncH1Exchange, Error> {
        let large_body = if prepared.body_inlined { None } else { body };
        let mut retries_left = STALE_CONNECTION_RETRIES;
        loop {
            let mut pooled = self
                .h1_connection(prepared, &deadlines, &mut first, retries_left)
                .await?;
            // A failed write on a reused connection received nothing either:
            // idempotent requests may go again.
            let attempt = match pooled
                .conn()
                .write_all(&prepared.wire, large_body, &deadlines)
                .await
            {
                Ok(()) => receive_head_with(&mut pooled, prepared.head_reader(), &deadlines).await,
                // The server may have answered and closed before the body was
                // all out (a 413): that answer is the response.
                Err(e) => {
                    answer_after_failed_send(
                        &mut pooled,
                        prepared.is_head,
                        &deadlines,
                        e.before_response(),
                    )
                    .await
                }
            };
            match attempt {
                Ok((head, head_bytes)) => {
                    return Ok(AsyncH1Exchange::new(
                        pooled, head, head_bytes, deadlines, started,
                    ))
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

    /// Sends a request prepared by [`AsyncClient::prepare_streamed`], its
    /// body pulled from `pump`, and reads the response head. A stale reused
    /// connection is replaced (as in `send`) only when the pump rewinds.
    pub async fn send_streamed(
        &self,
        prepared: &Prepared,
        pump: &mut BodyPump,
        timeouts: Timeouts,
    ) -> Result<AsyncExchange, Error> {
        let framing = prepared
            .streamed
            .expect("send_streamed needs a request from prepare_streamed");
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        self.admit(&prepared.target.origin, &deadlines).await?;
        // Over HTTP/2 when the request would go so with any other body. ALPN
        // may hand back the HTTP/1.1 connection it just made (nothing of the
        // body was pulled then).
        let mut adopted = {
            let mut body = StreamedBody::pumped(pump, framing.length());
            match self
                .send_h2(prepared, Some(&mut body), &deadlines, started)
                .await?
            {
                Ok(exchange) => return Ok(exchange),
                Err(adopted) => adopted,
            }
        };
        let mut retries_left = STALE_CONNECTION_RETRIES;
        loop {
            let mut pooled = self
                .h1_connection(prepared, &deadlines, &mut adopted, retries_left)
                .await?;
            // A server may answer before the body is all out (a 413): that
            // answer is the response (see aio/upload.rs).
            let attempt =
                match send_streamed(&mut pooled, &prepared.wire, framing, pump, &deadlines).await {
                    Ok(true) => {
                        receive_head_with(&mut pooled, prepared.head_reader(), &deadlines).await
                    }
                    Ok(false) => {
                        receive_early_answer(&mut pooled, prepared.is_head, &deadlines).await
                    }
                    Err(e) => {
                        answer_after_failed_send(&mut pooled, prepared.is_head, &deadlines, e).await
                    }
                };
            match attempt {
                Ok((head, head_bytes)) => {
                    return Ok(AsyncExchange::h1(AsyncH1Exchange::new(
                        pooled, head, head_bytes, deadlines, started,
                    )))
                }
                Err(e)
                    if e.allows_fresh_connection_retry(
                        pooled.reused,
                        prepared.idempotent,
                        retries_left,
                    ) && pump.rewind().await? =>
                {
                    retries_left -= 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Closes all idle connections, and lets go of the HTTP/2 connections
    /// (each closes once its open streams end).
    pub fn close(&self) {
        self.inner.pool.close_idle();
        self.inner.h2.clear();
    }

    /// How many idle connections the pool keeps now (for tests and stats).
    pub fn idle_connections(&self) -> usize {
        self.inner.pool.idle_count()
    }
}
