//! HTTP/2 bodies framed with empty DATA frames (HOSTILE.md C38): a DATA
//! frame with no payload is legal anywhere in a body, and many servers end
//! every body with one carrying END_STREAM (Go and Caddy past 4 KiB, nginx as
//! a reverse proxy, Node's http2 after write()+end(), hypercorn, h2o for
//! HEAD). Each shape goes through every way a body is read: the sync
//! client's whole-body read (`read_exact_into` for a known length, as
//! `Client.get` does, else `read_to_end`), the sync stream (`BodyStream`,
//! `read_some`), and the async client's whole and streamed reads.

#[path = "support/h2_peer.rs"]
mod h2_peer;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use h2_peer::*;
use nodelay_core::aio::{read_whole, AsyncBodyStream, AsyncClient};
use nodelay_core::{
    runtime, BodyStream, Client, Error, Exchange, Http2Mode, NeverInterrupt, PoolConfig,
    ProxySettings, RequestParts, Timeouts, TlsOptions, Version,
};

/// Piece size the streamed reads ask for (the Python stream's default).
const PIECE_BYTES: usize = 64 * 1024;

fn config() -> PoolConfig {
    PoolConfig {
        max_connections: Some(10),
        max_keepalive: Some(10),
        keepalive_expiry: None,
    }
}

fn bounded() -> Timeouts {
    Timeouts {
        total: Some(DEADLINE),
        ..Timeouts::default()
    }
}

/// A server answering every request on its connections with `status`,
/// `fields` and `body` in DATA frames, then an empty DATA frame with
/// END_STREAM (no body frames for HEAD).
fn ending_with_empty_data(
    status: &'static [u8],
    fields: &'static [(&'static str, &'static str)],
    body: Vec<u8>,
) -> Scripted {
    serving(4, move |peer| {
        peer.handshake(&[]);
        while let Some(stream) = peer.next_request() {
            peer.write_frame(HEADERS, END_HEADERS, stream, &header_block(status, fields));
            peer.data(stream, &body);
            peer.end_with_empty_data(stream);
        }
    })
}

fn send(client: &Client, method: &str, url: &str) -> Result<Exchange, Error> {
    let prepared = client.prepare(&RequestParts {
        method,
        url,
        headers: &[],
        body: None,
    })?;
    let exchange = client.send(&prepared, None, bounded(), &NeverInterrupt)?;
    assert_eq!(exchange.version(), Version::Http2);
    Ok(exchange)
}

/// The sync whole-body read, as `Client.get` does it (nodelay-py
/// `Engine::read_whole`): a known length straight into a buffer of that
/// size, else to the end.
fn sync_whole(client: &Client, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let mut exchange = send(client, method, url)?;
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
fn sync_streamed(client: &Client, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let exchange = send(client, method, url)?;
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

fn async_client() -> AsyncClient {
    AsyncClient::with_options(
        config(),
        TlsOptions::default(),
        Http2Mode::PriorKnowledge,
        &ProxySettings::default(),
    )
    .unwrap()
}

fn async_whole(client: &AsyncClient, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    runtime::handle().block_on(async {
        let prepared = client.prepare(&RequestParts {
            method,
            url,
            headers: &[],
            body: None,
        })?;
        let exchange = client.send(&prepared, None, bounded()).await?;
        let status = exchange.status();
        let (exchange, body) = read_whole(exchange, u64::MAX).await?;
        exchange.finish();
        Ok((status, body))
    })
}

fn async_streamed(client: &AsyncClient, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    runtime::handle().block_on(async {
        let prepared = client.prepare(&RequestParts {
            method,
            url,
            headers: &[],
            body: None,
        })?;
        let exchange = client.send(&prepared, None, bounded()).await?;
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

/// Runs `method` on `server` through every reader; each must give
/// `status` and `body`.
fn every_reader_gets(server: &Scripted, method: &str, status: u16, body: &[u8]) {
    let url = format!("{}/x", server.url);
    let sync = Client::with_http2(config(), TlsOptions::default(), Http2Mode::PriorKnowledge);
    let aio = async_client();
    let readers: [(&str, Box<dyn Fn() -> Result<(u16, Vec<u8>), Error>>); 4] = [
        ("sync whole", Box::new(|| sync_whole(&sync, method, &url))),
        ("sync streamed", Box::new(|| sync_streamed(&sync, method, &url))),
        ("async whole", Box::new(|| async_whole(&aio, method, &url))),
        ("async streamed", Box::new(|| async_streamed(&aio, method, &url))),
    ];
    for (name, read) in readers {
        let (got_status, got) = read().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got_status, status, "{name}");
        assert_eq!(got.len(), body.len(), "{name}: body length");
        assert!(got == body, "{name}: body bytes differ");
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[test]
fn a_body_of_exactly_its_content_length_then_an_empty_end() {
    // 16384 bytes: one full frame, then the empty DATA with END_STREAM (Go, Caddy).
    let body = pattern(16_384);
    let server = ending_with_empty_data(STATUS_200, &[("content-length", "16384")], body.clone());
    every_reader_gets(&server, "GET", 200, &body);
}

#[test]
fn a_small_body_then_an_empty_end() {
    // 43 bytes: nginx as a reverse proxy ends even small answers this way.
    let body = pattern(43);
    let server = ending_with_empty_data(STATUS_200, &[("content-length", "43")], body.clone());
    every_reader_gets(&server, "GET", 200, &body);
}

#[test]
fn a_head_answer_with_a_content_length_then_an_empty_end() {
    // h2o answers HEAD with the GET's Content-Length, then an empty DATA.
    let server = ending_with_empty_data(STATUS_200, &[("content-length", "16384")], Vec::new());
    every_reader_gets(&server, "HEAD", 200, b"");
}

#[test]
fn a_204_then_an_empty_end() {
    let with_length = ending_with_empty_data(STATUS_204, &[("content-length", "0")], Vec::new());
    every_reader_gets(&with_length, "GET", 204, b"");
    let without = ending_with_empty_data(STATUS_204, &[], Vec::new());
    every_reader_gets(&without, "GET", 204, b"");
}

#[test]
fn a_body_without_content_length_then_an_empty_end() {
    // Spans several frames and more than the prefetch takes without waiting.
    let body = pattern(100_000);
    let server = ending_with_empty_data(STATUS_200, &[], body.clone());
    every_reader_gets(&server, "GET", 200, &body);
}

#[test]
fn an_empty_end_arriving_on_its_own_after_a_long_body() {
    // Past the size read with the head, so the readers wait for the end;
    // the pause makes the empty END_STREAM frame arrive alone (not a timing
    // assertion). An empty frame without END_STREAM sits in the middle too.
    let body = pattern(100_000);
    let sent = body.clone();
    let server = serving(4, move |peer| {
        peer.handshake(&[]);
        while let Some(stream) = peer.next_request() {
            let head = header_block(STATUS_200, &[("content-length", "100000")]);
            peer.write_frame(HEADERS, END_HEADERS, stream, &head);
            peer.data(stream, &sent[..50_000]);
            peer.write_frame(DATA, 0, stream, &[]);
            peer.data(stream, &sent[50_000..]);
            thread::sleep(Duration::from_millis(100));
            peer.end_with_empty_data(stream);
        }
    });
    every_reader_gets(&server, "GET", 200, &body);
}
