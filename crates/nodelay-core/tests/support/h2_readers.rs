//! The ways a body is read, each as one function from request to (status,
//! body), for the h2 tests that check a peer's framing through all of them:
//! the sync client's whole-body read (`read_exact_into` for a known length,
//! as `Client.get` does, else `read_to_end`), the sync stream (`BodyStream`,
//! `read_some`), and the async client's whole and streamed reads. Included
//! with `#[path = "support/h2_readers.rs"] mod h2_readers;` next to `h2_peer`.
//! It also holds the prior-knowledge client and the request helpers every
//! scripted h2 test drives the peer with.

// Each test binary compiles this module and uses its own subset of it.
#![allow(dead_code)]

use std::sync::Arc;

use crate::h2_peer::{Scripted, DEADLINE};
use nodelay_core::aio::{AsyncBodyStream, AsyncClient, AsyncExchange};
use nodelay_core::{
    runtime, BodyStream, Client, Error, Exchange, Http2Mode, NeverInterrupt, PoolConfig,
    ProxySettings, RequestParts, Timeouts, TlsOptions, Version,
};

/// Piece size the streamed reads ask for (the Python stream's default).
pub const PIECE_BYTES: usize = 64 * 1024;

pub fn config() -> PoolConfig {
    PoolConfig {
        max_connections: Some(10),
        max_keepalive: Some(10),
        keepalive_expiry: None,
        ..PoolConfig::default()
    }
}

pub fn bounded() -> Timeouts {
    Timeouts {
        total: Some(DEADLINE),
        ..Timeouts::default()
    }
}

/// The sync client the scripted h2 tests drive: HTTP/2 by prior knowledge.
pub fn client() -> Client {
    Client::with_http2(config(), TlsOptions::default(), Http2Mode::PriorKnowledge)
}

/// Sends one request carrying `body` under `timeouts`; the exchange is HTTP/2.
pub fn send_with(
    client: &Client,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    timeouts: Timeouts,
) -> Result<Exchange, Error> {
    let prepared = client.prepare(&RequestParts {
        method,
        url,
        headers: &[],
        body,
    })?;
    let exchange = client.send(&prepared, body, timeouts, &NeverInterrupt)?;
    assert_eq!(exchange.version(), Version::Http2);
    Ok(exchange)
}

/// Sends one request with no body under [`bounded`].
pub fn start(client: &Client, method: &str, url: &str) -> Result<Exchange, Error> {
    send_with(client, method, url, None, bounded())
}

/// Sends one request carrying `body` under `timeouts` and reads the whole
/// body with `read_to_end`: status and body.
pub fn request(
    client: &Client,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    timeouts: Timeouts,
) -> Result<(u16, Vec<u8>), Error> {
    let mut exchange = send_with(client, method, url, body, timeouts)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    Ok((exchange.status(), out))
}

/// A GET under `timeouts`, its whole body read with `read_to_end`.
pub fn get(client: &Client, url: &str, timeouts: Timeouts) -> Result<(u16, Vec<u8>), Error> {
    request(client, "GET", url, None, timeouts)
}

/// Sends one request under [`bounded`] (a POST carries a small body) and
/// reads the whole body: status and body.
pub fn send(client: &Client, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let body: Option<&[u8]> = (method == "POST").then_some(b"payload");
    request(client, method, url, body, bounded())
}

/// The sync whole-body read, as `Client.get` does it (nodelay-py
/// `Engine::read_whole`): a known length straight into a buffer of that
/// size, else to the end.
pub fn sync_whole(client: &Client, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let mut exchange = start(client, method, url)?;
    let body = match exchange.content_length() {
        Some(n) => {
            let mut body = vec![0; n as usize];
            exchange.read_exact_into(&mut body, &NeverInterrupt)?;
            body
        }
        None => {
            let mut body = Vec::new();
            exchange.read_to_end(&mut body, &NeverInterrupt)?;
            body
        }
    };
    assert!(exchange.is_complete());
    let status = exchange.status();
    exchange.finish();
    Ok((status, body))
}

/// The sync streamed read (`client.stream(...)`, `iter_bytes()`).
pub fn sync_streamed(client: &Client, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let exchange = start(client, method, url)?;
    let status = exchange.status();
    let mut stream = BodyStream::new(exchange, Arc::new(NeverInterrupt), &[], u64::MAX)?;
    let mut body = Vec::new();
    let mut piece = vec![0; PIECE_BYTES];
    loop {
        let n = stream.read(&mut piece, 1)?;
        if n == 0 {
            return Ok((status, body));
        }
        body.extend_from_slice(&piece[..n]);
    }
}

pub fn async_client() -> AsyncClient {
    AsyncClient::with_options(
        config(),
        TlsOptions::default(),
        Http2Mode::PriorKnowledge,
        &ProxySettings::default(),
    )
    .unwrap()
}

/// Sends one request with no body under [`bounded`] on the async client.
pub async fn async_start(
    client: &AsyncClient,
    method: &str,
    url: &str,
) -> Result<AsyncExchange, Error> {
    let prepared = client.prepare(&RequestParts {
        method,
        url,
        headers: &[],
        body: None,
    })?;
    client.send(&prepared, None, bounded()).await
}

pub fn async_whole(client: &AsyncClient, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    runtime::handle().block_on(async {
        let exchange = async_start(client, method, url).await?;
        let status = exchange.status();
        Ok((status, exchange.read_whole(u64::MAX).await?.body))
    })
}

pub fn async_streamed(
    client: &AsyncClient,
    method: &str,
    url: &str,
) -> Result<(u16, Vec<u8>), Error> {
    runtime::handle().block_on(async {
        let exchange = async_start(client, method, url).await?;
        let status = exchange.status();
        let mut stream = AsyncBodyStream::new(exchange, &[], u64::MAX)?;
        let mut body = Vec::new();
        loop {
            let piece = stream.read(PIECE_BYTES, 1).await?;
            if piece.is_empty() {
                return Ok((status, body));
            }
            body.extend_from_slice(&piece);
        }
    })
}

/// One way of reading a response: its status and whole body.
type Reader<'a> = dyn Fn() -> Result<(u16, Vec<u8>), Error> + 'a;

/// Runs `method` on `server` through every reader; each must give
/// `status` and `body`.
pub fn every_reader_gets(server: &Scripted, method: &str, status: u16, body: &[u8]) {
    let url = format!("{}/x", server.url);
    let sync = client();
    let aio = async_client();
    let readers: [(&str, Box<Reader>); 4] = [
        ("sync whole", Box::new(|| sync_whole(&sync, method, &url))),
        (
            "sync streamed",
            Box::new(|| sync_streamed(&sync, method, &url)),
        ),
        ("async whole", Box::new(|| async_whole(&aio, method, &url))),
        (
            "async streamed",
            Box::new(|| async_streamed(&aio, method, &url)),
        ),
    ];
    for (name, read) in readers {
        let (got_status, got) = read().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got_status, status, "{name}");
        assert_eq!(got.len(), body.len(), "{name}: body length");
        assert!(got == body, "{name}: body bytes differ");
    }
}
