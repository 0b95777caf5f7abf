//! Per-host politeness, seen by the server: `max_per_host` bounds the
//! connections a client has open to one origin (the blocking and the async
//! driver), and the rate limit spaces the requests one origin receives.
//! The servers here are plain sockets that count the connections open to
//! them at once and note when each request arrived. Loopback only.

mod support;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::aio::AsyncClient;
use nodelay_core::{
    runtime, Client, ErrorKind, NeverInterrupt, PoolConfig, RateLimit, RequestParts, Timeouts,
};

/// How long the counting server holds each request before answering: long
/// enough for the client's other requests to pile up behind the limit.
const HOLD: Duration = Duration::from_millis(30);

/// A keep-alive HTTP/1.1 server that answers every request `ok` after
/// [`HOLD`], counting the connections open at once and noting each
/// request's arrival.
struct CountingServer {
    url: String,
    open: Arc<AtomicUsize>,
    most_open: Arc<AtomicUsize>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl CountingServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = CountingServer {
            url,
            open: Arc::default(),
            most_open: Arc::default(),
            arrivals: Arc::default(),
        };
        let (open, most, arrivals) = (
            Arc::clone(&server.open),
            Arc::clone(&server.most_open),
            Arc::clone(&server.arrivals),
        );
        // The accept thread ends with the test process.
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                let (open, arrivals) = (Arc::clone(&open), Arc::clone(&arrivals));
                thread::spawn(move || {
                    serve(stream, &arrivals);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        server
    }

    fn most_open(&self) -> usize {
        self.most_open.load(Ordering::SeqCst)
    }

    fn arrivals(&self) -> Vec<Instant> {
        let mut arrivals = self.arrivals.lock().unwrap().clone();
        arrivals.sort();
        arrivals
    }
}

/// Answers the requests of one connection until the client closes it.
fn serve(mut stream: TcpStream, arrivals: &Mutex<Vec<Instant>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        arrivals.lock().unwrap().push(Instant::now());
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        buf.drain(..end);
        thread::sleep(HOLD);
        if stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .is_err()
        {
            return;
        }
    }
}

fn config(per_host: Option<usize>, rate: Option<RateLimit>) -> PoolConfig {
    PoolConfig {
        max_connections: Some(100),
        max_keepalive: Some(100),
        keepalive_expiry: Some(support::TEST_KEEPALIVE),
        max_per_host: per_host,
        rate,
    }
}

fn get(url: &str) -> RequestParts<'_> {
    RequestParts {
        method: "GET",
        url,
        headers: &[],
        body: None,
    }
}

fn within(pool: Duration) -> Timeouts {
    Timeouts {
        pool: Some(pool),
        ..support::each_phase_within(Duration::from_secs(10))
    }
}

/// `threads` threads sharing `client`, each making `each` GETs to each URL.
fn hammer(client: &Arc<Client>, urls: &[&str], threads: usize, each: usize, t: Timeouts) {
    thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                for _ in 0..each {
                    for url in urls {
                        let prepared = client.prepare(&get(url)).unwrap();
                        let mut exchange =
                            client.send(&prepared, None, t, &NeverInterrupt).unwrap();
                        let mut body = Vec::new();
                        exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
                        assert_eq!(body, b"ok");
                        exchange.finish();
                    }
                }
            });
        }
    });
}

/// `requests` GETs of `url` at once on the async driver, each answered `ok`.
fn hammer_async(client: &Arc<AsyncClient>, url: &str, requests: usize, t: Timeouts) {
    runtime::handle().block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..requests {
            let (client, url) = (Arc::clone(client), url.to_owned());
            tasks.push(runtime::handle().spawn(async move {
                let prepared = nodelay_core::prepare(&get(&url)).unwrap();
                let exchange = client.send(&prepared, None, t).await.unwrap();
                exchange.read_whole(1 << 20).await.unwrap().body
            }));
        }
        for task in tasks {
            assert_eq!(task.await.unwrap(), b"ok");
        }
    });
}

#[test]
fn max_per_host_bounds_each_origins_connections_not_the_clients() {
    let (a, b) = (CountingServer::start(), CountingServer::start());
    let client = Arc::new(Client::new(config(Some(2), None)));
    hammer(
        &client,
        &[&a.url, &b.url],
        6,
        3,
        within(Duration::from_secs(10)),
    );
    assert_eq!((a.most_open(), b.most_open()), (2, 2));
    assert_eq!(a.arrivals().len(), 18);
    // Without the bound, the same load opens more to one origin.
    let c = CountingServer::start();
    let unbounded = Arc::new(Client::new(config(None, None)));
    hammer(&unbounded, &[&c.url], 6, 3, within(Duration::from_secs(10)));
    assert!(c.most_open() > 2, "{}", c.most_open());
}

#[test]
fn max_per_host_bounds_the_async_driver_too() {
    let a = CountingServer::start();
    let client = Arc::new(AsyncClient::new(config(Some(3), None)));
    let t = within(Duration::from_secs(10));
    hammer_async(&client, &a.url, 12, t);
    assert_eq!(a.most_open(), 3);
    assert_eq!(a.arrivals().len(), 12);
}

#[test]
fn a_checkout_beyond_max_per_host_times_out_naming_the_host_and_the_limit() {
    let a = CountingServer::start();
    let client = Client::new(config(Some(1), None));
    let t = within(Duration::from_millis(100));
    let prepared = client.prepare(&get(&a.url)).unwrap();
    // Holds the origin's only connection (its body unread).
    let _held = client.send(&prepared, None, t, &NeverInterrupt).unwrap();
    let started = Instant::now();
    let error = client
        .send(&prepared, None, t, &NeverInterrupt)
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::PoolTimeout);
    let host = a.url.trim_start_matches("http://").trim_end_matches('/');
    assert_eq!(
        error.message(),
        format!(
            "pool timeout of 0.1 s while waiting for a free connection to http://{host} (max_connections_per_host=1)"
        )
    );
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[test]
fn the_rate_limit_spaces_the_requests_an_origin_receives() {
    let (a, b) = (CountingServer::start(), CountingServer::start());
    let rate = RateLimit::new(20.0, Some(1), true).unwrap();
    let client = Arc::new(Client::new(config(None, Some(rate))));
    let started = Instant::now();
    // 4 threads, 3 requests each to each origin: 12 per origin at 20/s.
    hammer(
        &client,
        &[&a.url, &b.url],
        4,
        3,
        within(Duration::from_secs(10)),
    );
    let took = started.elapsed();
    for server in [&a, &b] {
        let arrivals = server.arrivals();
        assert_eq!(arrivals.len(), 12);
        // 11 gaps of 50 ms at least (less scheduling noise on the server's side).
        let span = *arrivals.last().unwrap() - arrivals[0];
        assert!(span >= Duration::from_millis(530), "{span:?}");
    }
    // Per host: the two origins were served side by side, not one after the other.
    assert!(took < Duration::from_millis(1100), "{took:?}");
}

#[test]
fn the_async_driver_takes_a_token_per_request() {
    let a = CountingServer::start();
    let rate = RateLimit::new(40.0, Some(2), false).unwrap();
    let client = Arc::new(AsyncClient::new(config(None, Some(rate))));
    let t = within(Duration::from_secs(10));
    hammer_async(&client, &a.url, 10, t);
    let arrivals = a.arrivals();
    // A burst of 2, then 8 more at 25 ms each.
    let span = *arrivals.last().unwrap() - arrivals[0];
    assert!(span >= Duration::from_millis(190), "{span:?}");
}

#[test]
fn a_token_beyond_the_pool_timeout_fails_at_once_naming_the_rate() {
    let a = CountingServer::start();
    let rate = RateLimit::new(2.0, None, true).unwrap();
    let client = Client::new(config(None, Some(rate)));
    let t = within(Duration::from_millis(200));
    let prepared = client.prepare(&get(&a.url)).unwrap();
    let mut first = client.send(&prepared, None, t, &NeverInterrupt).unwrap();
    first.read_to_end(&mut Vec::new(), &NeverInterrupt).unwrap();
    first.finish();
    let started = Instant::now();
    // The next token is 500 ms away, past the 200 ms pool timeout.
    let error = client
        .send(&prepared, None, t, &NeverInterrupt)
        .err()
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(100));
    assert_eq!(error.kind(), ErrorKind::PoolTimeout);
    let host = a.url.trim_start_matches("http://").trim_end_matches('/');
    assert_eq!(
        error.message(),
        format!("pool timeout of 0.2 s while waiting for the rate limit of 2 requests/s (burst 1) to http://{host}")
    );
    assert_eq!(a.arrivals().len(), 1);
}
