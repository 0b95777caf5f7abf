//! The engine against the embedded hyper server: keep-alive reuse, every body
//! framing and read path, and many threads sharing one client (docs/hostile.md K35
//! in miniature: no errors, no cross-talk).

mod support;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::{Client, Error, ErrorKind, NeverInterrupt, RequestParts, Timeouts};
use nodelay_server::{pattern, ServerHandle};

fn server() -> ServerHandle {
    support::embedded_server()
}

fn client() -> Client {
    Client::new(support::pool(Some(100), 20))
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(5))
}

/// Status and whole body (read with `read_to_end`); the connection goes back.
fn get(client: &Client, url: &str) -> Result<(u16, Vec<u8>), Error> {
    request(client, "GET", url, None, timeouts())
}

fn request(
    client: &Client,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    t: Timeouts,
) -> Result<(u16, Vec<u8>), Error> {
    let prepared = client.prepare(&RequestParts {
        method,
        url,
        headers: &[],
        body,
    })?;
    let mut exchange = client.send(&prepared, body, t, &NeverInterrupt)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    let status = exchange.status();
    exchange.finish();
    Ok((status, out))
}

/// The value of a response header, from the exchange's raw head and spans.
fn header(head: &[u8], spans: &[nodelay_core::HeaderSpan], name: &str) -> Option<String> {
    spans.iter().find_map(|s| {
        let n = &head[s.name.0 as usize..s.name.1 as usize];
        n.eq_ignore_ascii_case(name.as_bytes()).then(|| {
            String::from_utf8_lossy(&head[s.value.0 as usize..s.value.1 as usize]).into_owned()
        })
    })
}

#[test]
fn hundred_sequential_gets_reuse_one_connection() {
    let server = server();
    let client = client();
    let url = format!("{}/bytes/202", server.url());
    let expected = pattern(202);
    for i in 0..100 {
        let (status, body) = get(&client, &url).unwrap_or_else(|e| panic!("request {i}: {e:?}"));
        assert_eq!(status, 200);
        assert!(
            body == expected,
            "request {i}: body differs from the pattern"
        );
        assert_eq!(client.idle_connections(), 1);
    }
    assert_eq!(server.connections_accepted(), 1);
    assert_eq!(server.requests_served(), 100);
}

#[test]
fn head_bytes_and_spans_describe_the_response() {
    let server = server();
    let client = client();
    let url = format!("{}/bytes/10", server.url());
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[],
            body: None,
        })
        .unwrap();
    let mut exchange = client
        .send(&prepared, None, timeouts(), &NeverInterrupt)
        .unwrap();
    assert_eq!(exchange.status(), 200);
    assert!(exchange.head_bytes().starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert!(exchange.head_bytes().ends_with(b"\r\n\r\n"));
    assert_eq!(
        header(
            exchange.head_bytes(),
            exchange.header_spans(),
            "content-length"
        )
        .as_deref(),
        Some("10")
    );
    assert_eq!(exchange.content_length(), Some(10));
    let mut body = Vec::new();
    exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
    assert_eq!(body, pattern(10));
    exchange.finish();
}

#[test]
fn chunked_body_via_read_to_end() {
    let server = server();
    let client = client();
    let url = format!("{}/chunked/100000", server.url());
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[],
            body: None,
        })
        .unwrap();
    let mut exchange = client
        .send(&prepared, None, timeouts(), &NeverInterrupt)
        .unwrap();
    assert_eq!(
        header(
            exchange.head_bytes(),
            exchange.header_spans(),
            "transfer-encoding"
        )
        .as_deref(),
        Some("chunked")
    );
    assert_eq!(exchange.content_length(), None);
    let mut body = Vec::new();
    exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
    exchange.finish();
    assert_eq!(body.len(), 100_000);
    assert!(
        body == pattern(100_000),
        "chunked body differs from the pattern"
    );
    // The connection is back and in sync.
    assert_eq!(client.idle_connections(), 1);
    assert_eq!(
        get(&client, &format!("{}/chunked/7", server.url())).unwrap(),
        (200, pattern(7))
    );
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn one_mebibyte_via_read_exact_into() {
    let server = server();
    let client = client();
    let n = 1024 * 1024;
    let url = format!("{}/bytes/{n}", server.url());
    for _ in 0..3 {
        let prepared = client
            .prepare(&RequestParts {
                method: "GET",
                url: &url,
                headers: &[],
                body: None,
            })
            .unwrap();
        let mut exchange = client
            .send(&prepared, None, timeouts(), &NeverInterrupt)
            .unwrap();
        assert_eq!(exchange.content_length(), Some(n as u64));
        let mut body = vec![0u8; n];
        exchange
            .read_exact_into(&mut body, &NeverInterrupt)
            .unwrap();
        assert_eq!(exchange.content_length(), Some(0));
        exchange.finish();
        assert!(body == pattern(n), "1 MiB body differs from the pattern");
    }
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn echo_round_trips_small_and_large_bodies() {
    let server = server();
    let client = client();
    let url = format!("{}/echo", server.url());
    for size in [0, 1, 1000, 64 * 1024, 64 * 1024 + 1, 1_000_000] {
        let body: Vec<u8> = (0..size).map(|i| (i * 7 % 256) as u8).collect();
        let (status, echoed) = request(&client, "POST", &url, Some(&body), timeouts()).unwrap();
        assert_eq!(status, 200, "size {size}");
        assert!(echoed == body, "echo of {size} bytes differs");
    }
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn head_and_no_body_statuses_keep_the_connection() {
    let server = server();
    let client = client();
    let base = server.url();
    assert_eq!(
        request(
            &client,
            "HEAD",
            &format!("{base}/bytes/5000"),
            None,
            timeouts()
        )
        .unwrap(),
        (200, vec![])
    );
    assert_eq!(get(&client, &format!("{base}/status/204")).unwrap().0, 204);
    assert_eq!(get(&client, &format!("{base}/status/304")).unwrap().0, 304);
    assert_eq!(get(&client, &format!("{base}/status/404")).unwrap().0, 404);
    assert_eq!(
        get(&client, &format!("{base}/bytes/3")).unwrap(),
        (200, pattern(3))
    );
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn slow_route_read_timeout_then_fresh_connection() {
    let server = server();
    let client = client();
    let read = Duration::from_millis(200);
    let started = Instant::now();
    let err = request(
        &client,
        "GET",
        &format!("{}/delay/2000", server.url()),
        None,
        Timeouts {
            read: Some(read),
            ..timeouts()
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReadTimeout, "{err:?}");
    assert!(started.elapsed() < read + Duration::from_millis(500));
    assert_eq!(
        client.idle_connections(),
        0,
        "a timed-out connection is not pooled"
    );
    assert_eq!(
        get(&client, &format!("{}/bytes/1", server.url())).unwrap(),
        (200, pattern(1))
    );
    assert_eq!(server.connections_accepted(), 2);
}

#[test]
fn eight_threads_share_one_client() {
    let server = server();
    let client = Arc::new(client());
    let base = server.url();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let client = Arc::clone(&client);
            let base = base.clone();
            thread::spawn(move || {
                for i in 0..100 {
                    // Every request has its own size, so a body delivered to
                    // the wrong caller cannot go unnoticed.
                    let n = 1 + t * 1000 + i * 7;
                    let route = if i % 5 == 0 { "chunked" } else { "bytes" };
                    let (status, body) = get(&client, &format!("{base}/{route}/{n}"))
                        .unwrap_or_else(|e| panic!("thread {t} request {i}: {e:?}"));
                    assert_eq!(status, 200);
                    assert!(body == pattern(n), "thread {t} request {i}: wrong body");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker thread");
    }
    assert_eq!(server.requests_served(), 800);
    assert!(
        server.connections_accepted() <= 8,
        "at most one connection per thread, got {}",
        server.connections_accepted()
    );
    assert!(client.idle_connections() <= 8);
}
