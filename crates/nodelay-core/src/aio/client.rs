//! The async engine's entry point: prepare a request (`request.rs`), then
//! drive its exchange sequence (`sequence.rs`) on the tokio runtime: HTTP/2
//! first when the client asks for it, on the connection shared by every
//! task for the origin; else, or when ALPN picks HTTP/1.1, checkout → send
//! → head with the stale-connection retry. A sync `Client`'s batches run
//! this driver too (`batch.rs`).

use std::sync::Arc;
use std::time::Instant;

use crate::aio::any_exchange::AsyncExchange;
use crate::aio::exchange::{receive_head_with, AsyncH1Exchange};
use crate::aio::h2::AsyncH2Exchange;
use crate::aio::pool::AsyncPooled;
use crate::aio::upload::{AsyncOutgoing, BodyPump};
use crate::deadline::{Deadlines, Timeouts};
use crate::dial::Dial;
use crate::error::Error;
use crate::h2::{H2Pool, Sent, StreamedBody};
use crate::pool::{Pool, PoolConfig};
use crate::proxy::{Proxies, ProxySettings};
use crate::request::{prepare_request, BodyForm, Http2Mode, Prepared, Preparer, RequestParts};
use crate::sequence::Step;
use crate::target::{Origin, TargetCache};
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
    /// Shared with the sync `Client` whose batches this client drives.
    h2: Arc<H2Pool>,
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
        let h2 = Arc::new(H2Pool::bounded(Arc::clone(&pool), config.keepalive_expiry));
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

    /// The async driver over another client's pool and HTTP/2 connections
    /// (a sync `Client`'s, for its batches, `batch.rs`): no proxies and no
    /// HTTP/2 mode of its own (the `Client` prepares the requests it runs).
    pub(crate) fn on_pool(pool: Arc<Pool>, h2: Arc<H2Pool>) -> Self {
        AsyncClient {
            inner: Arc::new(Inner {
                pool,
                proxies: None,
                http2: Http2Mode::Off,
                h2,
                targets: TargetCache::default(),
            }),
        }
    }

    fn preparer(&self) -> Preparer<'_> {
        Preparer {
            targets: Some(&self.inner.targets),
            proxies: self.inner.proxies.as_ref(),
            http2: self.inner.http2,
        }
    }

    /// Parses the URL and encodes the request for this client's route
    /// (direct, forwarded or tunnelled) and, when it may go over HTTP/2 (a
    /// direct route, as on the sync path), in HTTP/2 form too; fails before
    /// any I/O on bad input.
    pub fn prepare(&self, parts: &RequestParts<'_>) -> Result<Prepared, Error> {
        prepare_request(self.preparer(), parts, BodyForm::Whole)
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
        prepare_request(self.preparer(), parts, BodyForm::Streamed(framing))
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
        let body = AsyncOutgoing::Bytes(prepared.large_body(body));
        self.run(prepared, body, timeouts).await
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
        let body = AsyncOutgoing::Pumped { pump, framing };
        self.run(prepared, body, timeouts).await
    }

    /// Runs one request: its rate-limit token, then the exchange sequence.
    async fn run(
        &self,
        prepared: &Prepared,
        body: AsyncOutgoing<'_>,
        timeouts: Timeouts,
    ) -> Result<AsyncExchange, Error> {
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        self.admit(&prepared.target.origin, &deadlines).await?;
        self.drive(prepared, body, deadlines, started, None).await
    }

    /// Waits for the rate limit's token for one request to `origin` (at
    /// once without a rate limit): every request, HTTP/1.1 or HTTP/2 and
    /// whatever its connection, takes one.
    pub(crate) async fn admit(&self, origin: &Origin, deadlines: &Deadlines) -> Result<(), Error> {
        self.inner.pool.admit_async(origin, deadlines).await
    }

    /// The tokio driver of the exchange sequence: runs each step `Sequence`
    /// asks for. `kept`: a connection the caller kept from its previous
    /// request to the same origin (a batch task's), the first checkout's;
    /// one ALPN makes when it chooses HTTP/1.1 goes first instead, and one
    /// left unused goes back to the pool.
    pub(crate) async fn drive(
        &self,
        prepared: &Prepared,
        mut body: AsyncOutgoing<'_>,
        deadlines: Deadlines,
        started: Instant,
        mut kept: Option<AsyncPooled>,
    ) -> Result<AsyncExchange, Error> {
        let mut sequence = prepared.sequence(body.is_streamed());
        let mut current: Option<AsyncPooled> = None;
        loop {
            match sequence.next() {
                Step::Http2 => match self.send_h2(prepared, &mut body, &deadlines, started).await {
                    Ok(Ok(exchange)) => {
                        give_back(kept);
                        return Ok(exchange);
                    }
                    Ok(Err(adopted)) => {
                        if let Some(adopted) = adopted {
                            give_back(kept.replace(adopted));
                        }
                        sequence.http2_declined();
                    }
                    Err(e) => {
                        give_back(kept);
                        return Err(e);
                    }
                },
                Step::Checkout { fresh } => {
                    // A stale connection gives its pool slot back first: a
                    // one-connection pool would otherwise wait on itself.
                    drop(current.take());
                    let pooled = match kept.take() {
                        Some(pooled) => pooled,
                        None => {
                            self.inner
                                .pool
                                .checkout_async(&prepared.key, &deadlines, fresh)
                                .await?
                        }
                    };
                    sequence.checked_out(pooled.reused);
                    current = Some(pooled);
                }
                Step::Send => {
                    let pooled = current.as_mut().expect("a connection is checked out");
                    let sent = body.send(pooled, &prepared.wire, &deadlines).await;
                    sequence.sent(sent, || !pooled.conn().is_reusable());
                }
                Step::Receive(reader) => {
                    let pooled = current.as_mut().expect("a connection is checked out");
                    match receive_head_with(pooled, reader, &deadlines).await {
                        Ok((head, head_bytes)) => {
                            let pooled = current.take().expect("a connection is checked out");
                            return Ok(AsyncExchange::h1(AsyncH1Exchange::new(
                                pooled, head, head_bytes, deadlines, started,
                            )));
                        }
                        Err(e) => sequence.not_received(e),
                    }
                }
                Step::Rewind => sequence.rewound(body.rewind().await),
                Step::Fail(e) => return Err(e),
            }
        }
    }

    /// Sends the request over HTTP/2 (a pumped `body` streamed) and waits
    /// for the response head: `Ok` with the exchange, or `Err` when ALPN
    /// chose HTTP/1.1, with the connection it made for that (in the pool's
    /// keeping) when there is one.
    async fn send_h2(
        &self,
        prepared: &Prepared,
        body: &mut AsyncOutgoing<'_>,
        deadlines: &Deadlines,
        started: Instant,
    ) -> Result<Result<AsyncExchange, Option<AsyncPooled>>, Error> {
        let request = prepared.h2.as_ref().expect("an HTTP/2 form");
        let mut streamed = match body {
            AsyncOutgoing::Pumped { pump, framing } => {
                Some(StreamedBody::pumped(pump, framing.length()))
            }
            AsyncOutgoing::Bytes(_) => None,
        };
        let inner = &self.inner;
        let sent = inner
            .h2
            .send_streamed(
                &prepared.key,
                inner.pool.tls(),
                request,
                streamed.as_mut(),
                deadlines,
            )
            .await?;
        Ok(match sent {
            Sent::H2(response) => Ok(AsyncExchange::h2(AsyncH2Exchange::new(response, started))),
            Sent::Http1(transport) => {
                Err(transport.map(|t| inner.pool.adopt_async(&prepared.key, t)))
            }
        })
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

/// Gives a kept connection the request did not use back to its pool.
fn give_back(kept: Option<AsyncPooled>) {
    if let Some(pooled) = kept {
        pooled.return_to_pool();
    }
}
