//! Idle connections their server closes leave the pool at once, with no
//! request made meanwhile (`reaper.rs`, docs/pool.md), on both drivers; the
//! next request then connects anew. Loopback only.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::aio::AsyncClient;
use nodelay_core::{prepare, runtime, Client, NeverInterrupt, RequestParts, Timeouts};
use scripted::Step::*;
use scripted::{write, Server};

/// The server closes a connection this long after answering on it.
const SERVER_CLOSES_AFTER: Duration = Duration::from_millis(200);

/// The pool must have dropped the connection within this (generous: the
/// machine may be loaded; the reaper acts as soon as the FIN arrives).
const REAPED_WITHIN: Duration = Duration::from_millis(1500);

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok";

/// A server that answers one request on each of `connections` connections
/// with keep-alive and closes the connection [`SERVER_CLOSES_AFTER`] later.
fn closing_server(connections: usize) -> Server {
    let script = vec![ReadRequest, write(ANSWER), Sleep(SERVER_CLOSES_AFTER)];
    Server::start(vec![script; connections])
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(5))
}

/// Waits until `idle()` is 0 or [`REAPED_WITHIN`] passed after the server's
/// close; returns the last count.
fn idle_after_close(idle: impl Fn() -> usize) -> usize {
    let deadline = Instant::now() + SERVER_CLOSES_AFTER + REAPED_WITHIN;
    loop {
        let n = idle();
        if n == 0 || Instant::now() > deadline {
            return n;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn sync_get(client: &Client, url: &str) -> Vec<u8> {
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url,
            headers: &[],
            body: None,
        })
        .unwrap();
    let mut exchange = client
        .send(&prepared, None, timeouts(), &NeverInterrupt)
        .unwrap();
    let mut body = Vec::new();
    exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
    exchange.finish();
    body
}

async fn async_get(client: &AsyncClient, url: &str) -> Vec<u8> {
    let prepared = prepare(&RequestParts {
        method: "GET",
        url,
        headers: &[],
        body: None,
    })
    .unwrap();
    let exchange = client.send(&prepared, None, timeouts()).await.unwrap();
    exchange.read_whole(1 << 20).await.unwrap().body
}

#[test]
fn sync_pool_drops_an_idle_connection_its_server_closed() {
    let server = closing_server(2);
    let url = server.url("/");
    let client = Client::new(support::pool(Some(4), 4));
    assert_eq!(sync_get(&client, &url), b"ok");
    assert_eq!(client.idle_connections(), 1);
    assert_eq!(idle_after_close(|| client.idle_connections()), 0);
    assert_eq!(sync_get(&client, &url), b"ok");
    assert_eq!(server.accepted(), 2);
}

#[test]
fn async_pool_drops_an_idle_connection_its_server_closed() {
    let server = closing_server(2);
    let url = server.url("/");
    let client = AsyncClient::new(support::pool(Some(4), 4));
    let rt = runtime::handle();
    assert_eq!(rt.block_on(async_get(&client, &url)), b"ok");
    assert_eq!(client.idle_connections(), 1);
    // Nothing runs on the runtime for this client meanwhile.
    assert_eq!(idle_after_close(|| client.idle_connections()), 0);
    assert_eq!(rt.block_on(async_get(&client, &url)), b"ok");
    assert_eq!(server.accepted(), 2);
}
