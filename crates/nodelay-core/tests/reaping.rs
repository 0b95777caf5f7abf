//! Idle connections their server closes leave the pool at once, with no
//! request made meanwhile (`reaper.rs`, docs/pool.md), on both drivers; the
//! next request then connects anew. Loopback only.

mod support;

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::aio::AsyncClient;
use nodelay_core::{prepare, runtime, Client, NeverInterrupt, RequestParts, Timeouts};

/// The server closes a connection this long after answering on it.
const SERVER_CLOSES_AFTER: Duration = Duration::from_millis(200);

/// The pool must have dropped the connection within this (generous: the
/// machine may be loaded; the reaper acts as soon as the FIN arrives).
const REAPED_WITHIN: Duration = Duration::from_millis(1500);

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok";

/// A server that answers one request per connection with keep-alive and
/// closes the connection [`SERVER_CLOSES_AFTER`] later. Returns its URL and
/// the count of connections it accepted.
fn closing_server(connections: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    thread::spawn(move || {
        for _ in 0..connections {
            let Ok((mut sock, _)) = listener.accept() else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            sock.set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match sock.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let _ = sock.write_all(ANSWER);
            thread::sleep(SERVER_CLOSES_AFTER);
            drop(sock);
        }
    });
    (url, accepted)
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
    let (url, accepted) = closing_server(2);
    let client = Client::new(support::pool(Some(4), 4));
    assert_eq!(sync_get(&client, &url), b"ok");
    assert_eq!(client.idle_connections(), 1);
    assert_eq!(idle_after_close(|| client.idle_connections()), 0);
    assert_eq!(sync_get(&client, &url), b"ok");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn async_pool_drops_an_idle_connection_its_server_closed() {
    let (url, accepted) = closing_server(2);
    let client = AsyncClient::new(support::pool(Some(4), 4));
    let rt = runtime::handle();
    assert_eq!(rt.block_on(async_get(&client, &url)), b"ok");
    assert_eq!(client.idle_connections(), 1);
    // Nothing runs on the runtime for this client meanwhile.
    assert_eq!(idle_after_close(|| client.idle_connections()), 0);
    assert_eq!(rt.block_on(async_get(&client, &url)), b"ok");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}
