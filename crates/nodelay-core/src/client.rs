//! The engine's entry point: prepare a request (pure, cheap), then run it on
//! the calling thread: checkout → send → receive head, with one transparent
//! retry when a reused connection turns out stale.

use std::sync::Arc;
use std::time::Instant;

use nodelay_proto::{encode_request_head, RequestHead};

use crate::deadline::{Deadlines, Timeouts};
use crate::error::{Error, ErrorKind};
use crate::exchange::{receive_head, send_request, Exchange};
use crate::interrupt::Interrupt;
use crate::limits::{INLINE_BODY_MAX_BYTES, STALE_CONNECTION_RETRIES};
use crate::pool::Pool;
pub use crate::pool::PoolConfig;
use crate::target::{Target, TargetCache};
use crate::tls::{TlsOptions, TlsSetup};

/// A request as the caller describes it.
pub struct RequestParts<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: Option<&'a [u8]>,
}

/// A request encoded and ready to send (possibly more than once).
pub struct Prepared {
    pub target: Target,
    /// Head, followed by the body when it is small (one write).
    wire: Vec<u8>,
    body_inlined: bool,
    is_head: bool,
    idempotent: bool,
}

impl Prepared {
    /// The exact bytes of the head (and inlined body) that will be written.
    pub fn wire(&self) -> &[u8] {
        &self.wire
    }
}

/// RFC 9110 §9.2.2: safe to send twice.
fn is_idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

/// The HTTP/1.1 engine: a connection pool and the driver. Thread-safe.
pub struct Client {
    pool: Arc<Pool>,
    /// Origins already parsed (see `TargetCache`: the URL parse was the
    /// largest CPU item of a small request).
    targets: TargetCache,
}

impl Client {
    pub fn new(config: PoolConfig) -> Self {
        Self::with_tls(config, TlsOptions::default())
    }

    pub fn with_tls(config: PoolConfig, tls: TlsOptions) -> Self {
        Client {
            pool: Arc::new(Pool::new(config, TlsSetup::new(tls))),
            targets: TargetCache::default(),
        }
    }

    /// Parses the URL and encodes the request; fails before any I/O on bad input.
    pub fn prepare(&self, parts: &RequestParts<'_>) -> Result<Prepared, Error> {
        let target = self.targets.parse(parts.url)?;
        let body_len = parts.body.map(|b| b.len());
        let body_inlined = body_len.is_some_and(|n| n <= INLINE_BODY_MAX_BYTES);
        let mut wire = Vec::with_capacity(
            256 + if body_inlined {
                body_len.unwrap_or(0)
            } else {
                0
            },
        );
        encode_request_head(
            &mut wire,
            &RequestHead {
                method: parts.method,
                target: &target.path_and_query,
                host: &target.authority,
                headers: parts.headers,
                content_length: body_len.map(|n| n as u64),
            },
        )
        .map_err(|e| Error::protocol(e, ErrorKind::LocalProtocol))?;
        if body_inlined {
            wire.extend_from_slice(parts.body.unwrap_or_default());
        }
        Ok(Prepared {
            target,
            wire,
            body_inlined,
            is_head: parts.method == "HEAD",
            idempotent: is_idempotent(parts.method),
        })
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
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        let large_body = if prepared.body_inlined { None } else { body };
        let mut retries_left = STALE_CONNECTION_RETRIES;
        loop {
            let fresh = retries_left < STALE_CONNECTION_RETRIES;
            let mut pooled = self
                .pool
                .checkout(&prepared.target.origin, &deadlines, fresh)?;
            let attempt = send_request(
                &mut pooled,
                &prepared.wire,
                large_body,
                &deadlines,
                interrupt,
            )
            // A failed write on a reused connection (EPIPE, ECONNRESET)
            // received nothing either: idempotent requests may go again.
            .map_err(Error::before_response)
            .and_then(|()| receive_head(&mut pooled, prepared.is_head, &deadlines, interrupt));
            match attempt {
                Ok((head, head_bytes)) => {
                    return Ok(Exchange::new(pooled, head, head_bytes, deadlines, started))
                }
                // A reused connection that failed before any response byte
                // was most likely closed by the server while idle: send an
                // idempotent request once more on a fresh connection.
                Err(e)
                    if pooled.reused
                        && retries_left > 0
                        && prepared.idempotent
                        && e.nothing_received()
                        && !e.is_interrupted() =>
                {
                    retries_left -= 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Closes all idle connections.
    pub fn close(&self) {
        self.pool.close_idle();
    }

    pub fn idle_connections(&self) -> usize {
        self.pool.idle_count()
    }
}
