//! The async engine's entry point: checkout → send → receive head, with the
//! sync driver's one transparent retry when a reused connection was stale.

use std::sync::Arc;
use std::time::Instant;

use crate::aio::exchange::{receive_head, AsyncExchange};
use crate::aio::pool::AsyncPool;
use crate::client::Prepared;
use crate::deadline::{Deadlines, Timeouts};
use crate::decode::decode;
use crate::error::Error;
use crate::limits::STALE_CONNECTION_RETRIES;
use crate::pool::PoolConfig;
use crate::tls::{TlsOptions, TlsSetup};

/// The async HTTP/1.1 engine: a connection pool shared by every task that
/// holds a clone (a refcount bump), driven on the tokio runtime.
#[derive(Clone)]
pub struct AsyncClient {
    pool: Arc<AsyncPool>,
}

impl AsyncClient {
    pub fn new(config: PoolConfig) -> Self {
        Self::with_tls(config, TlsOptions::default())
    }

    pub fn with_tls(config: PoolConfig, tls: TlsOptions) -> Self {
        AsyncClient {
            pool: Arc::new(AsyncPool::new(config, TlsSetup::new(tls))),
        }
    }

    /// Sends a request made by [`crate::prepare`] and reads the response
    /// head. `body` is the request body (only read when too large to have
    /// been inlined behind the head).
    pub async fn send(
        &self,
        prepared: &Prepared,
        body: Option<&[u8]>,
        timeouts: Timeouts,
    ) -> Result<AsyncExchange, Error> {
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        let large_body = if prepared.body_inlined { None } else { body };
        let mut retries_left = STALE_CONNECTION_RETRIES;
        loop {
            let fresh = retries_left < STALE_CONNECTION_RETRIES;
            let mut pooled = self
                .pool
                .checkout(&prepared.target.origin, &deadlines, fresh)
                .await?;
            // A failed write on a reused connection received nothing either:
            // idempotent requests may go again.
            let attempt = match pooled
                .conn()
                .write_all(&prepared.wire, large_body, &deadlines)
                .await
            {
                Ok(()) => receive_head(&mut pooled, prepared.is_head, &deadlines).await,
                Err(e) => Err(e.before_response()),
            };
            match attempt {
                Ok((head, head_bytes)) => {
                    return Ok(AsyncExchange::new(
                        pooled, head, head_bytes, deadlines, started,
                    ))
                }
                // A reused connection that failed before any response byte
                // was most likely closed by the server while idle. A timeout
                // is no sign of that (a slow server): retrying would send the
                // request twice and wait a whole phase timeout again.
                Err(e)
                    if pooled.reused
                        && retries_left > 0
                        && prepared.idempotent
                        && e.nothing_received()
                        && !e.is_timeout() =>
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

/// Reads the whole body of `exchange` and undoes its content codings
/// (bounded by `max_decoded_bytes` and the ratio guard, as the sync path),
/// then gives the connection back to the pool.
pub async fn read_whole(
    mut exchange: AsyncExchange,
    max_decoded_bytes: u64,
) -> Result<(AsyncExchange, Vec<u8>), Error> {
    let codings = exchange.content_codings()?.filter(|c| !c.is_empty());
    let mut out = Vec::new();
    exchange.read_to_end(&mut out).await?;
    let content = match codings.filter(|_| !out.is_empty()) {
        Some(codings) => decode(&codings, out, max_decoded_bytes)?,
        None => out,
    };
    Ok((exchange, content))
}
