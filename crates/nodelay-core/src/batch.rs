//! One whole request as a future on the process runtime, for the sync batch
//! API (`Client.get_many` / `Client.map` in nodelay-py): many of them run at
//! once on the runtime's workers, so a batch needs no OS thread per request
//! in flight.
//!
//! - HTTP/2 (the client asked for it and the request may use it): through the
//!   client's own [`H2Pool`](crate::h2::H2Pool), the one connection per
//!   origin that `Client::send` shares, multiplexed, with no hand-over
//!   between threads per request.
//! - HTTP/1.1: the async driver (`aio`) over a keep-alive pool of its own
//!   ([`AsyncClient`]), which the caller keeps across batches (nodelay-py
//!   keeps one per `Engine`, bounded by the client's `PoolConfig`).
//!
//! The caller picks the client's sync path instead for proxied clients (the
//! async driver connects directly only).

use std::time::{Duration, Instant};

use nodelay_proto::{HeaderSpan, Version};

use crate::aio::{read_whole, AsyncClient};
use crate::any_exchange::Exchange;
use crate::client::{Client, Prepared};
use crate::deadline::{Deadlines, Timeouts};
use crate::decode::decode;
use crate::error::Error;
use crate::h2::{H2Exchange, H2Response, Sent};
use crate::limits::EXACT_PREALLOC_MAX_BYTES;

/// A response read whole (body decoded), its connection given back.
pub struct Fetched {
    pub status: u16,
    pub version: Version,
    /// The reason phrase's span in `head_bytes`.
    pub reason: (u32, u32),
    /// The raw head; `headers` index into it (as `Exchange::take_head`).
    pub head_bytes: Box<[u8]>,
    pub headers: Vec<HeaderSpan>,
    pub body: Vec<u8>,
    /// From the start of the request to the last body byte.
    pub elapsed: Duration,
}

/// Sends `prepared` (made by `client.prepare`, not proxied) and reads the
/// whole response: over HTTP/2 on the client's shared connection when the
/// request may use it and the server agrees, else over HTTP/1.1 on `h1`.
/// `body` is the body given to `prepare`. Timeouts are those of
/// `Client::send`; dropping the future cancels the request (its HTTP/1.1
/// connection is closed, its HTTP/2 stream reset).
pub async fn fetch(
    client: &Client,
    h1: &AsyncClient,
    prepared: &Prepared,
    body: Option<&[u8]>,
    timeouts: Timeouts,
    max_decoded_bytes: u64,
) -> Result<Fetched, Error> {
    if let Some(request) = prepared.h2_request() {
        let started = Instant::now();
        let deadlines = Deadlines::start(timeouts, started);
        let (pool, tls) = client.h2_parts();
        match pool
            .send(&prepared.target.origin, tls, request, &deadlines)
            .await?
        {
            Sent::H2(response) => return h2_whole(response, started, max_decoded_bytes).await,
            // The server chose HTTP/1.1 by ALPN: its fresh connection goes to
            // the client's sync pool (nothing was sent on it), the request to
            // the HTTP/1.1 driver below.
            Sent::Http1(transport) => {
                if let Some(transport) = transport {
                    client.keep_http1(prepared, transport.into_blocking()?);
                }
            }
        }
    }
    let exchange = h1.send(prepared, body, timeouts).await?;
    let (mut exchange, body) = read_whole(exchange, max_decoded_bytes).await?;
    let (head_bytes, headers) = exchange.take_head();
    let fetched = Fetched {
        status: exchange.status(),
        version: exchange.version(),
        reason: exchange.reason_span(),
        head_bytes,
        headers,
        body,
        elapsed: exchange.started().elapsed(),
    };
    exchange.finish();
    Ok(fetched)
}

/// Reads an HTTP/2 response's body to its end and undoes its content codings.
async fn h2_whole(
    mut response: H2Response,
    started: Instant,
    max_decoded_bytes: u64,
) -> Result<Fetched, Error> {
    let announced = response
        .content_length()
        .filter(|&n| n <= EXACT_PREALLOC_MAX_BYTES);
    let mut body = Vec::with_capacity(announced.unwrap_or(0) as usize);
    while let Some(data) = response.chunk().await? {
        body.extend_from_slice(&data);
    }
    // The stream ended: the exchange only lends its head form (the same raw
    // bytes plus spans as HTTP/1.1).
    let mut exchange = Exchange::H2(H2Exchange::new(response, started));
    let codings = exchange.content_codings()?.filter(|c| !c.is_empty());
    if let Some(codings) = codings.filter(|_| !body.is_empty()) {
        body = decode(&codings, body, max_decoded_bytes)?;
    }
    let (head_bytes, headers) = exchange.take_head();
    Ok(Fetched {
        status: exchange.status(),
        version: exchange.version(),
        reason: exchange.reason_span(),
        head_bytes,
        headers,
        body,
        elapsed: started.elapsed(),
    })
}
