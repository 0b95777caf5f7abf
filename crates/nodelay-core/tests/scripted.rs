//! The engine against a scripted raw-socket server: every test states the
//! exact bytes the server receives and the exact bytes it answers (in the
//! manner of hyper's `tests/client.rs` and urllib3's socket-level tests),
//! covering docs/hostile.md A9–A13, H28–H30 and I31–I32.
//!
//! The server is a std `TcpListener` on 127.0.0.1:0 with one thread per
//! connection; connection `i` plays script `i` (extra connections are
//! recorded and closed). Only loopback is ever used.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::{
    Client, EncodedHeaders, Error, ErrorKind, Exchange, NeverInterrupt, PoolConfig, Prepared,
    RequestParts, Timeouts,
};
use scripted::Step::*;
use scripted::{ok, write, Server};

// ---------------------------------------------------------------- allocation probe

/// Records the largest single allocation each thread asks for, so A11 can
/// prove a lying Content-Length is never preallocated.
struct Probe;

thread_local! {
    static LARGEST_ALLOCATION: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation(size: usize) {
    let _ = LARGEST_ALLOCATION.try_with(|largest| largest.set(largest.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the probe
// only reads the requested size into a const-initialised thread-local `Cell`,
// which never allocates.
unsafe impl GlobalAlloc for Probe {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static PROBE: Probe = Probe;

fn reset_largest_allocation() {
    LARGEST_ALLOCATION.with(|largest| largest.set(0));
}

fn largest_allocation() -> usize {
    LARGEST_ALLOCATION.with(Cell::get)
}

// ---------------------------------------------------------------- client helpers

fn client() -> Client {
    Client::new(support::pool(Some(10), 10))
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(3))
}

fn prepare(client: &Client, method: &str, url: &str, body: Option<&[u8]>) -> Prepared {
    client
        .prepare(&RequestParts {
            method,
            url,
            headers: &[],
            body,
        })
        .expect("valid request")
}

fn send(client: &Client, prepared: &Prepared, t: Timeouts) -> Result<Exchange, Error> {
    client.send(prepared, None, t, &NeverInterrupt)
}

/// Runs a whole request: status and body, connection handed back on success.
fn fetch_with(
    client: &Client,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    t: Timeouts,
) -> Result<(u16, Vec<u8>), Error> {
    let prepared = prepare(client, method, url, body);
    let mut exchange = client.send(&prepared, body, t, &NeverInterrupt)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    let status = exchange.status();
    exchange.finish();
    Ok((status, out))
}

fn fetch(client: &Client, method: &str, url: &str) -> Result<(u16, Vec<u8>), Error> {
    fetch_with(client, method, url, None, timeouts())
}

#[track_caller]
fn expect_error<T>(result: Result<T, Error>) -> Error {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- exact bytes

#[test]
fn get_sends_exactly_the_prepared_bytes() {
    let server = Server::start(vec![vec![ReadRequest, write(ok("hi"))]]);
    let client = client();
    let url = server.url("/path/x?q=1&r=%20");
    let headers = [("Accept", "*/*"), ("X-Trace", "abc")];
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &headers,
            body: None,
        })
        .unwrap();
    let expected = format!(
        "GET /path/x?q=1&r=%20 HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: */*\r\nX-Trace: abc\r\n\r\n",
        server.port()
    );
    assert_eq!(String::from_utf8_lossy(prepared.wire()), expected);
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    let mut body = Vec::new();
    exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
    assert_eq!((exchange.status(), &body[..]), (200, &b"hi"[..]));
    exchange.finish();
    assert_eq!(server.requests(), vec![(0, expected.into_bytes())]);
}

#[test]
fn small_post_is_one_buffer_of_head_and_body() {
    let server = Server::start(vec![vec![ReadRequest, write(ok("ok"))]]);
    let client = client();
    let url = server.url("/submit");
    let body = b"name=value&x=1";
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    let prepared = client
        .prepare(&RequestParts {
            method: "POST",
            url: &url,
            headers: &headers,
            body: Some(body),
        })
        .unwrap();
    let expected = format!(
        "POST /submit HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 14\r\n\r\nname=value&x=1",
        server.port()
    );
    assert_eq!(
        String::from_utf8_lossy(prepared.wire()),
        expected,
        "the body is inlined behind the head"
    );
    let mut exchange = client
        .send(&prepared, Some(body), timeouts(), &NeverInterrupt)
        .unwrap();
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt).unwrap();
    exchange.finish();
    assert_eq!(out, b"ok");
    assert_eq!(server.requests(), vec![(0, prepared.wire().to_vec())]);
}

#[test]
fn large_post_sends_head_then_body_exactly() {
    let server = Server::start(vec![vec![ReadRequest, write(ok("ok"))]]);
    let client = client();
    let url = server.url("/upload");
    let body: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let prepared = prepare(&client, "PUT", &url, Some(&body));
    let head = format!(
        "PUT /upload HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 300000\r\n\r\n",
        server.port()
    );
    assert_eq!(
        prepared.wire(),
        head.as_bytes(),
        "a large body is not copied into the head buffer"
    );
    let (status, out) = fetch_with(&client, "PUT", &url, Some(&body), timeouts()).unwrap();
    assert_eq!((status, &out[..]), (200, &b"ok"[..]));
    let mut expected = head.into_bytes();
    expected.extend_from_slice(&body);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].1 == expected, "server received different bytes");
}

// ---------------------------------------------------------------- A9: short bodies

#[test]
fn a9_body_shorter_than_content_length_then_close() {
    let response = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    let server = Server::start(vec![vec![ReadRequest, write(response), Close]; 2]);
    let client = client();

    let e = expect_error(fetch(&client, "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert!(e.message().contains("received 3 of 10 bytes"), "{e}");

    // The same through read_exact_into (the known-length fast path).
    let prepared = prepare(&client, "GET", &server.url("/"), None);
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    assert_eq!(exchange.content_length(), Some(10));
    let mut dst = [0u8; 10];
    let e = expect_error(exchange.read_exact_into(&mut dst, &NeverInterrupt));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert!(e.message().contains("received 3 of 10 bytes"), "{e}");
    drop(exchange);
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn a9_chunked_body_cut_mid_chunk() {
    let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\na\r\nhel";
    let server = Server::start(vec![vec![ReadRequest, write(response), Close]]);
    let client = client();
    let e = expect_error(fetch(&client, "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert!(
        e.message().contains("8 bytes"),
        "the message says how much arrived: {e}"
    );
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn a9_chunked_body_without_last_chunk() {
    let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
    let server = Server::start(vec![vec![ReadRequest, write(response), Close]]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
}

#[test]
fn head_cut_before_the_blank_line() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nContent-Len"),
        Close,
    ]]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
}

// ---------------------------------------------------------------- A10: extra bytes

#[test]
fn a10_bytes_past_content_length_are_never_the_next_response() {
    let smuggled = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfake";
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write(smuggled),
            ReadRequest,
            write(ok("reused")),
            Hang,
        ],
        vec![ReadRequest, write(ok("real")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/1")).unwrap(),
        (200, b"hello".to_vec())
    );
    assert_eq!(
        client.idle_connections(),
        0,
        "a connection with leftover bytes is not pooled"
    );
    assert_eq!(
        fetch(&client, "GET", &server.url("/2")).unwrap(),
        (200, b"real".to_vec())
    );
    assert_eq!(
        server.accepted(),
        2,
        "the second request went out on a new connection"
    );
    let on_first: Vec<usize> = server.requests().iter().map(|(c, _)| *c).collect();
    assert_eq!(on_first, vec![0, 1]);
}

#[test]
fn a10_late_extra_bytes_poison_the_idle_connection() {
    // The extra response arrives after the body was read and the connection
    // pooled: the readability check before reuse must catch it.
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write(ok("hello")),
            Sleep(Duration::from_millis(50)),
            write(ok("fake")),
            ReadRequest,
            write(ok("reused")),
            Hang,
        ],
        vec![ReadRequest, write(ok("real")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/1")).unwrap(),
        (200, b"hello".to_vec())
    );
    assert_eq!(client.idle_connections(), 1);
    server.wait_for_steps(0, 4);
    thread::sleep(Duration::from_millis(50));
    assert_eq!(
        fetch(&client, "GET", &server.url("/2")).unwrap(),
        (200, b"real".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

#[test]
fn a10_bytes_after_a_chunked_body_are_not_reused() {
    let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n\
                    HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfake";
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write(response),
            ReadRequest,
            write(ok("reused")),
            Hang,
        ],
        vec![ReadRequest, write(ok("real")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/1")).unwrap(),
        (200, b"ok".to_vec())
    );
    assert_eq!(
        fetch(&client, "GET", &server.url("/2")).unwrap(),
        (200, b"real".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

// ---------------------------------------------------------------- A11: lying length

#[test]
fn a11_huge_content_length_with_tiny_body_fails_fast_without_preallocating() {
    let response = "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\ntiny";
    let server = Server::start(vec![vec![ReadRequest, write(response), Close]]);
    let client = client();
    let started = Instant::now();
    reset_largest_allocation();
    let prepared = prepare(&client, "GET", &server.url("/"), None);
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    assert_eq!(exchange.content_length(), Some(1_000_000_000_000));
    let mut out = Vec::new();
    let e = expect_error(exchange.read_to_end(&mut out, &NeverInterrupt));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert!(
        e.message().contains("received 4 of 1000000000000 bytes"),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    let largest = largest_allocation();
    assert!(
        largest <= 1024 * 1024,
        "largest single allocation was {largest} bytes"
    );
}

// ---------------------------------------------------------------- A12: no-body responses

#[test]
fn a12_head_204_304_with_body_headers_keep_the_connection_in_sync() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"),
        ReadRequest,
        write("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"),
        ReadRequest,
        write("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ReadRequest,
        write(ok("in sync")),
        Hang,
    ]]);
    let client = client();
    let url = server.url("/");
    let prepared = prepare(&client, "HEAD", &url, None);
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    assert_eq!(
        exchange.content_length(),
        Some(0),
        "HEAD has no body whatever Content-Length says"
    );
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt).unwrap();
    exchange.finish();
    assert!(out.is_empty());
    assert_eq!(fetch(&client, "GET", &url).unwrap(), (204, vec![]));
    assert_eq!(fetch(&client, "GET", &url).unwrap(), (304, vec![]));
    assert_eq!(
        fetch_with(&client, "HEAD", &url, None, timeouts()).unwrap(),
        (200, vec![])
    );
    assert_eq!(
        fetch(&client, "GET", &url).unwrap(),
        (200, b"in sync".to_vec())
    );
    assert_eq!(server.accepted(), 1, "all five on one connection");
    assert_eq!(server.requests().len(), 5);
}

// ---------------------------------------------------------------- the request's own Connection: close

#[test]
fn a_request_that_sends_connection_close_does_not_pool_its_connection() {
    // The server offers keep-alive and keeps the connection open; the
    // request said it closes after the response (RFC 9112 §9.6), so the
    // next request opens a new connection.
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("first")), Hang],
        vec![ReadRequest, write(ok("second")), Hang],
    ]);
    let client = client();
    let url = server.url("/");
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[("Connection", "close")],
            body: None,
        })
        .unwrap();
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt).unwrap();
    exchange.finish();
    assert_eq!(out, b"first");
    assert_eq!(client.idle_connections(), 0);
    assert_eq!(
        fetch(&client, "GET", &url).unwrap(),
        (200, b"second".to_vec())
    );
    assert_eq!(server.accepted(), 2);
    assert_eq!(client.idle_connections(), 1);
}

#[test]
fn a_request_whose_encoded_fields_send_connection_close_does_not_pool_its_connection() {
    // The same rule when the fields come encoded beforehand (a client's
    // default headers, `Client::prepare_encoded`): the caller's list is then
    // not passed along, so the encoding must carry what it said.
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("first")), Hang],
        vec![ReadRequest, write(ok("second")), Hang],
    ]);
    let client = client();
    let url = server.url("/");
    let encoded = EncodedHeaders::new(&[("User-Agent", "t"), ("Connection", "close")]).unwrap();
    let parts = RequestParts {
        method: "GET",
        url: &url,
        headers: &[],
        body: None,
    };
    let prepared = client.prepare_encoded(&parts, &encoded).unwrap();
    assert!(
        prepared.wire().ends_with(b"Connection: close\r\n\r\n"),
        "the field is sent"
    );
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt).unwrap();
    exchange.finish();
    assert_eq!(out, b"first");
    assert_eq!(client.idle_connections(), 0);
    assert_eq!(
        fetch(&client, "GET", &url).unwrap(),
        (200, b"second".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

// ---------------------------------------------------------------- A13: interim responses

#[test]
fn a13_fifty_100_continue_is_an_error() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 100 Continue\r\n\r\n".repeat(50)),
        write(ok("never")),
        Hang,
    ]]);
    let client = client();
    let started = Instant::now();
    let e = expect_error(fetch(&client, "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert!(e.message().contains("interim"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn a13_interim_responses_up_to_the_limit_are_skipped() {
    let interim = "HTTP/1.1 100 Continue\r\n\r\n".repeat(9)
        + "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n";
    let server = Server::start(vec![vec![
        ReadRequest,
        write(interim),
        write(ok("final")),
        ReadRequest,
        write(ok("again")),
        Hang,
    ]]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"final".to_vec())
    );
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"again".to_vec())
    );
    assert_eq!(server.accepted(), 1);
}

#[test]
fn unexpected_101_is_an_error() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: upgrade\r\n\r\n"),
        Hang,
    ]]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
}

// ---------------------------------------------------------------- malformed heads on the wire

#[test]
fn http09_response_is_refused_at_once() {
    // No status line: refused from the first bytes, not after a read timeout.
    let server = Server::start(vec![vec![ReadRequest, write("<html><body>hello"), Hang]]);
    let started = Instant::now();
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_refused_status_line_is_quoted_in_the_message() {
    let cases = [
        (
            "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n",
            "invalid HTTP version (status line \"HTTP/1.2 200 OK\\r\\n\")",
        ),
        (
            "HTTP/0 200 OK\r\n\r\n",
            "not an HTTP/1.x status line (status line \"HTTP/0 200 OK\\r\\n\")",
        ),
        (
            "HTTP/1.1 20\x01 OK\r\n\r\n",
            "(status line \"HTTP/1.1 20\\x01 OK\\r\\n\")",
        ),
    ];
    for (response, quoted) in cases {
        let server = Server::start(vec![vec![ReadRequest, write(response), Hang]]);
        let e = expect_error(fetch(&client(), "GET", &server.url("/")));
        assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
        assert!(e.message().ends_with(quoted), "{response:?}: {e}");
    }
    // A header line refused is not the status line's fault: no quote.
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n"),
        Hang,
    ]]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert!(!e.message().contains("status line"), "{e}");
}

#[test]
fn hostile_heads_on_the_wire_are_remote_protocol_errors() {
    let heads = [
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello",
        "HTTP/1.1 20\r\n\r\n",
        "HTTP/2.0 200 OK\r\n\r\n",
        "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ];
    let server = Server::start(
        heads
            .iter()
            .map(|h| vec![ReadRequest, write(h), Hang])
            .collect(),
    );
    let client = client();
    for head in heads {
        let e = expect_error(fetch(&client, "GET", &server.url("/")));
        assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{head:?}: {e:?}");
    }
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn a8_oversized_head_on_the_wire_is_refused() {
    let mut huge = b"HTTP/1.1 200 OK\r\n".to_vec();
    huge.extend_from_slice(&b"X-Flood: 1\r\n".repeat(40_000));
    let server = Server::start(vec![vec![ReadRequest, Write(huge), Hang]]);
    let started = Instant::now();
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::HeaderTooLarge, "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a1_chunked_with_content_length_is_decoded_then_closed() {
    let response = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write(response),
            ReadRequest,
            write(ok("reused")),
            Hang,
        ],
        vec![ReadRequest, write(ok("fresh")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"hello".to_vec())
    );
    assert_eq!(client.idle_connections(), 0);
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"fresh".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

// ---------------------------------------------------------------- I32: slow peers

#[test]
fn i32_server_that_never_answers_is_a_read_timeout() {
    let server = Server::start(vec![vec![ReadRequest, Hang]]);
    let read = Duration::from_millis(300);
    let started = Instant::now();
    let e = expect_error(fetch_with(
        &client(),
        "GET",
        &server.url("/"),
        None,
        Timeouts {
            read: Some(read),
            ..timeouts()
        },
    ));
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::ReadTimeout, "{e:?}");
    assert!(
        took >= read && took < read + Duration::from_millis(500),
        "took {took:?}"
    );
}

#[test]
fn i32_dripped_head_is_stopped_by_the_total_deadline() {
    // One byte every 20 ms never trips the read (inactivity) timeout.
    let server = Server::start(vec![vec![
        ReadRequest,
        Drip(
            b"HTTP/1.1 200 OK\r\nX-Slow: "
                .iter()
                .chain(b"a".repeat(1000).iter())
                .copied()
                .collect(),
            Duration::from_millis(20),
        ),
    ]]);
    let total = Duration::from_millis(400);
    let started = Instant::now();
    let e = expect_error(fetch_with(
        &client(),
        "GET",
        &server.url("/"),
        None,
        Timeouts {
            total: Some(total),
            ..timeouts()
        },
    ));
    let took = started.elapsed();
    assert!(e.is_timeout(), "{e:?}");
    assert!(took < total + Duration::from_millis(500), "took {took:?}");
}

#[test]
fn i32_dripped_body_is_stopped_by_the_total_deadline() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"),
        Drip(b"x".to_vec(), Duration::from_millis(20)),
    ]]);
    let total = Duration::from_millis(400);
    let started = Instant::now();
    let e = expect_error(fetch_with(
        &client(),
        "GET",
        &server.url("/"),
        None,
        Timeouts {
            total: Some(total),
            ..timeouts()
        },
    ));
    let took = started.elapsed();
    assert!(e.is_timeout(), "{e:?}");
    assert!(took < total + Duration::from_millis(500), "took {took:?}");
}

#[test]
fn read_timeout_mid_body_closes_the_connection() {
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
            Hang,
        ],
        vec![ReadRequest, write(ok("fresh")), Hang],
    ]);
    let client = client();
    let e = expect_error(fetch_with(
        &client,
        "GET",
        &server.url("/"),
        None,
        Timeouts {
            read: Some(Duration::from_millis(200)),
            ..timeouts()
        },
    ));
    assert_eq!(e.kind(), ErrorKind::ReadTimeout, "{e:?}");
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"fresh".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

// ---------------------------------------------------------------- H28: stale connections

#[test]
fn h28_idle_connection_closed_by_server_is_replaced() {
    // The close comes a moment after the answer, so the connection is seen
    // idle in the pool first (the reaper drops it once the FIN arrives).
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write(ok("first")),
            Sleep(Duration::from_millis(200)),
            Close,
        ],
        vec![ReadRequest, write(ok("second")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"first".to_vec())
    );
    assert_eq!(client.idle_connections(), 1);
    server.wait_for_steps(0, 4);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"second".to_vec())
    );
    assert_eq!(server.accepted(), 2);
    assert_eq!(
        server.requests().len(),
        2,
        "the dead connection carried nothing"
    );
}

#[test]
fn h28_stale_post_is_not_replayed() {
    // The server takes the POST off a reused connection and closes without an
    // answer: it may have acted on it, so it must not be sent again.
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("first")), ReadRequest, Close],
        vec![ReadRequest, write(ok("replayed!")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"first".to_vec())
    );
    assert_eq!(client.idle_connections(), 1);
    let e = expect_error(fetch_with(
        &client,
        "POST",
        &server.url("/order"),
        Some(b"buy=1"),
        timeouts(),
    ));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    thread::sleep(Duration::from_millis(50));
    let posts = server
        .requests()
        .iter()
        .filter(|(_, r)| r.starts_with(b"POST "))
        .count();
    assert_eq!(posts, 1, "the POST reached the server exactly once");
    assert_eq!(
        server.accepted(),
        1,
        "no new connection was opened to replay it"
    );
}

#[test]
fn h28_stale_get_is_retried_once_on_a_fresh_connection() {
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("first")), ReadRequest, Close],
        vec![ReadRequest, write(ok("retried")), Hang],
    ]);
    let client = client();
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"first".to_vec())
    );
    assert_eq!(
        fetch(&client, "GET", &server.url("/again")).unwrap(),
        (200, b"retried".to_vec())
    );
    assert_eq!(server.accepted(), 2);
    let again: Vec<usize> = server
        .requests()
        .iter()
        .filter(|(_, r)| r.starts_with(b"GET /again "))
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(again, vec![0, 1]);
}

#[test]
fn h28_fresh_connection_failure_is_not_retried() {
    // Only a *reused* connection may be stale; a new one failing is an answer.
    let server = Server::start(vec![
        vec![ReadRequest, Close],
        vec![ReadRequest, write(ok("retried")), Hang],
    ]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    thread::sleep(Duration::from_millis(50));
    assert_eq!(server.accepted(), 1);
}

// ---------------------------------------------------------------- H29/H30: the pool

#[test]
fn h29_abandoned_response_is_not_pooled() {
    let big = "x".repeat(100_000);
    let server = Server::start(vec![
        vec![ReadRequest, write(ok(&big)), Hang],
        vec![ReadRequest, write(ok("fresh")), Hang],
    ]);
    let client = client();
    let prepared = prepare(&client, "GET", &server.url("/big"), None);
    let exchange = send(&client, &prepared, timeouts()).unwrap();
    exchange.finish();
    assert_eq!(
        client.idle_connections(),
        0,
        "an unread body poisons the connection"
    );
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"fresh".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

#[test]
fn h29_dropped_exchange_frees_its_slot() {
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("unread")), Hang],
        vec![ReadRequest, write(ok("next")), Hang],
    ]);
    let client = Client::new(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: None,
        ..PoolConfig::default()
    });
    let prepared = prepare(&client, "GET", &server.url("/"), None);
    drop(send(&client, &prepared, timeouts()).unwrap());
    let t = Timeouts {
        pool: Some(Duration::from_millis(200)),
        ..timeouts()
    };
    assert_eq!(
        fetch_with(&client, "GET", &server.url("/"), None, t).unwrap(),
        (200, b"next".to_vec())
    );
}

#[test]
fn h30_pool_timeout_when_the_only_connection_is_busy() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write(ok("held")),
        ReadRequest,
        write(ok("after")),
        Hang,
    ]]);
    let client = Client::new(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: None,
        ..PoolConfig::default()
    });
    let url = server.url("/");
    let prepared = prepare(&client, "GET", &url, None);
    let mut held = send(&client, &prepared, timeouts()).unwrap();

    let pool = Duration::from_millis(200);
    let started = Instant::now();
    let e = expect_error(fetch_with(
        &client,
        "GET",
        &url,
        None,
        Timeouts {
            pool: Some(pool),
            ..timeouts()
        },
    ));
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::PoolTimeout, "{e:?}");
    assert!(
        took >= pool && took < pool + Duration::from_millis(500),
        "took {took:?}"
    );

    let mut body = Vec::new();
    held.read_to_end(&mut body, &NeverInterrupt).unwrap();
    held.finish();
    assert_eq!(body, b"held");
    assert_eq!(
        fetch(&client, "GET", &url).unwrap(),
        (200, b"after".to_vec())
    );
    assert_eq!(server.accepted(), 1);
}

#[test]
fn h30_waiter_gets_the_connection_when_it_is_finished() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write(ok("held")),
        ReadRequest,
        write(ok("waited")),
        Hang,
    ]]);
    let client = Client::new(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: None,
        ..PoolConfig::default()
    });
    let url = server.url("/");
    let prepared = prepare(&client, "GET", &url, None);
    let mut held = send(&client, &prepared, timeouts()).unwrap();
    thread::scope(|s| {
        let waiter = s.spawn(|| fetch(&client, "GET", &url));
        thread::sleep(Duration::from_millis(100));
        let mut body = Vec::new();
        held.read_to_end(&mut body, &NeverInterrupt).unwrap();
        held.finish();
        assert_eq!(waiter.join().unwrap().unwrap(), (200, b"waited".to_vec()));
    });
    assert_eq!(server.accepted(), 1);
}

#[test]
fn keepalive_expiry_closes_old_idle_connections() {
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("one")), Hang],
        vec![ReadRequest, write(ok("two")), Hang],
    ]);
    let client = Client::new(PoolConfig {
        max_connections: None,
        max_keepalive: None,
        keepalive_expiry: Some(Duration::from_millis(50)),
        ..PoolConfig::default()
    });
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"one".to_vec())
    );
    thread::sleep(Duration::from_millis(120));
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"two".to_vec())
    );
    assert_eq!(server.accepted(), 2);
}

#[test]
fn connection_close_and_http10_responses_are_not_pooled() {
    let server = Server::start(vec![
        vec![
            ReadRequest,
            write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na"),
            Hang,
        ],
        vec![
            ReadRequest,
            write("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nb"),
            Hang,
        ],
        vec![
            ReadRequest,
            write("HTTP/1.0 200 OK\r\n\r\nclose-delimited"),
            Close,
        ],
        vec![
            ReadRequest,
            write("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nd"),
            ReadRequest,
            write(ok("e")),
            Hang,
        ],
    ]);
    let client = client();
    let url = server.url("/");
    assert_eq!(fetch(&client, "GET", &url).unwrap(), (200, b"a".to_vec()));
    assert_eq!(client.idle_connections(), 0);
    assert_eq!(fetch(&client, "GET", &url).unwrap(), (200, b"b".to_vec()));
    assert_eq!(client.idle_connections(), 0);
    assert_eq!(
        fetch(&client, "GET", &url).unwrap(),
        (200, b"close-delimited".to_vec())
    );
    assert_eq!(client.idle_connections(), 0);
    assert_eq!(fetch(&client, "GET", &url).unwrap(), (200, b"d".to_vec()));
    assert_eq!(
        client.idle_connections(),
        1,
        "HTTP/1.0 with keep-alive may be reused"
    );
    assert_eq!(fetch(&client, "GET", &url).unwrap(), (200, b"e".to_vec()));
    assert_eq!(server.accepted(), 4);
}

// ---------------------------------------------------------------- I31: network faults

#[test]
fn i31_connection_refused_is_a_connect_error() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let e = expect_error(fetch(
        &client(),
        "GET",
        &format!("http://127.0.0.1:{port}/"),
    ));
    assert_eq!(e.kind(), ErrorKind::Connect, "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn i31_reset_mid_body_is_an_error() {
    let mut response = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".to_vec();
    response.extend_from_slice(&[b'x'; 1000]);
    let server = Server::start(vec![vec![
        ReadRequest,
        Write(response),
        Sleep(Duration::from_millis(50)),
        Reset,
    ]]);
    let client = client();
    let e = expect_error(fetch(&client, "GET", &server.url("/")));
    assert!(
        matches!(e.kind(), ErrorKind::Read | ErrorKind::RemoteProtocol),
        "{e:?}"
    );
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn i31_reset_mid_headers_is_an_error() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nContent-"),
        Sleep(Duration::from_millis(50)),
        Reset,
    ]]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert!(
        matches!(e.kind(), ErrorKind::Read | ErrorKind::RemoteProtocol),
        "{e:?}"
    );
}

#[test]
fn i31_reset_instead_of_an_answer_is_an_error() {
    let server = Server::start(vec![vec![ReadRequest, Reset]]);
    let e = expect_error(fetch(&client(), "GET", &server.url("/")));
    assert!(
        matches!(e.kind(), ErrorKind::Read | ErrorKind::RemoteProtocol),
        "{e:?}"
    );
}

// ---------------------------------------------------------------- F25: nothing sent

#[test]
fn f25_injection_attempts_fail_before_any_io() {
    let server = Server::start(vec![]);
    let client = client();
    let url = server.url("/");
    for headers in [
        [("X-A", "1\r\nX-Injected: 1")],
        [("X A", "1")],
        [("X-A", "\0")],
    ] {
        let Err(e) = client.prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &headers,
            body: None,
        }) else {
            panic!("{headers:?} must be refused")
        };
        assert_eq!(e.kind(), ErrorKind::LocalProtocol, "{e:?}");
    }
    for bad_url in [
        format!("{url}a\r\nb"),
        format!("{url}\n"),
        format!("{url}\0"),
    ] {
        let Err(e) = client.prepare(&RequestParts {
            method: "GET",
            url: &bad_url,
            headers: &[],
            body: None,
        }) else {
            panic!("{bad_url:?} must be refused")
        };
        assert_eq!(e.kind(), ErrorKind::LocalProtocol, "{e:?}");
    }
    let Err(e) = client.prepare(&RequestParts {
        method: "GET /x",
        url: &url,
        headers: &[],
        body: None,
    }) else {
        panic!("method with a space must be refused")
    };
    assert_eq!(e.kind(), ErrorKind::LocalProtocol, "{e:?}");
    thread::sleep(Duration::from_millis(20));
    assert_eq!(server.accepted(), 0);
}

// ---------------------------------------------------------------- more shapes

#[test]
fn url_without_path_sends_slash_and_never_the_fragment() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write(ok("a")),
        ReadRequest,
        write(ok("b")),
        Hang,
    ]]);
    let client = client();
    let base = format!("http://127.0.0.1:{}", server.port());
    assert_eq!(fetch(&client, "GET", &base).unwrap(), (200, b"a".to_vec()));
    assert_eq!(
        fetch(&client, "GET", &format!("{base}/p?x=1#frag")).unwrap(),
        (200, b"b".to_vec())
    );
    let host = format!("Host: 127.0.0.1:{}\r\n", server.port());
    assert_eq!(
        server.requests(),
        vec![
            (0, format!("GET / HTTP/1.1\r\n{host}\r\n").into_bytes()),
            (0, format!("GET /p?x=1 HTTP/1.1\r\n{host}\r\n").into_bytes()),
        ]
    );
}

#[test]
fn large_legitimate_head_grows_the_buffer_and_stays_in_sync() {
    // 100 fields of 1.5 KiB: 150 KiB of head, within every limit.
    let mut response = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..100 {
        response.extend_from_slice(format!("X-Big-{i:03}: {}\r\n", "v".repeat(1500)).as_bytes());
    }
    response.extend_from_slice(b"Content-Length: 4\r\n\r\nbody");
    let server = Server::start(vec![vec![
        ReadRequest,
        write(&response),
        ReadRequest,
        write(ok("next")),
        Hang,
    ]]);
    let client = client();
    let prepared = prepare(&client, "GET", &server.url("/"), None);
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    assert_eq!(exchange.header_spans().len(), 101);
    assert_eq!(exchange.head_bytes(), &response[..response.len() - 4]);
    let mut body = Vec::new();
    exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
    exchange.finish();
    assert_eq!(body, b"body");
    assert_eq!(
        fetch(&client, "GET", &server.url("/")).unwrap(),
        (200, b"next".to_vec())
    );
    assert_eq!(server.accepted(), 1);
}

#[test]
fn interim_response_with_framing_headers_has_no_body() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write("HTTP/1.1 100 Continue\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        Hang,
    ]]);
    assert_eq!(
        fetch(&client(), "GET", &server.url("/")).unwrap(),
        (200, b"ok".to_vec())
    );
}

#[test]
fn write_timeout_when_the_server_stops_reading() {
    let server = Server::start(vec![vec![ReadHead, Hang]]);
    let body = vec![b'u'; 64 * 1024 * 1024];
    let write = Duration::from_millis(300);
    let started = Instant::now();
    let e = expect_error(fetch_with(
        &client(),
        "POST",
        &server.url("/upload"),
        Some(&body),
        Timeouts {
            write: Some(write),
            ..timeouts()
        },
    ));
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::WriteTimeout, "{e:?}");
    assert!(took < write + Duration::from_millis(700), "took {took:?}");
}

#[test]
fn no_failure_leaks_a_pool_slot() {
    // One slot only: if any failure below kept it, the last request would
    // wait for the pool and fail with PoolTimeout.
    let refused_port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let server = Server::start(vec![
        vec![ReadRequest, write("HTTP/1.1 20\r\n\r\n"), Hang],
        vec![
            ReadRequest,
            write("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab"),
            Close,
        ],
        vec![ReadRequest, Hang],
        vec![
            ReadRequest,
            write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            Hang,
        ],
        vec![ReadRequest, Reset],
        vec![ReadRequest, write(ok("still works")), Hang],
    ]);
    let client = Client::new(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: None,
        ..PoolConfig::default()
    });
    let t = Timeouts {
        read: Some(Duration::from_millis(100)),
        pool: Some(Duration::from_millis(100)),
        ..timeouts()
    };
    let refused = format!("http://127.0.0.1:{refused_port}/");
    assert_eq!(
        expect_error(fetch_with(&client, "GET", &refused, None, t)).kind(),
        ErrorKind::Connect
    );
    for expected in [
        ErrorKind::RemoteProtocol,
        ErrorKind::RemoteProtocol,
        ErrorKind::ReadTimeout,
        ErrorKind::RemoteProtocol,
    ] {
        let e = expect_error(fetch_with(&client, "GET", &server.url("/"), None, t));
        assert_eq!(e.kind(), expected, "{e:?}");
    }
    let e = expect_error(fetch_with(&client, "GET", &server.url("/"), None, t));
    assert!(
        matches!(e.kind(), ErrorKind::Read | ErrorKind::RemoteProtocol),
        "{e:?}"
    );
    assert_eq!(
        fetch_with(&client, "GET", &server.url("/"), None, t).unwrap(),
        (200, b"still works".to_vec())
    );
}

#[test]
fn stale_retry_works_with_a_single_slot() {
    // The retry must give back the stale connection's slot before checking
    // out a new one, or a one-connection pool waits on itself.
    let server = Server::start(vec![
        vec![ReadRequest, write(ok("first")), ReadRequest, Close],
        vec![ReadRequest, write(ok("retried")), Hang],
    ]);
    let client = Client::new(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: None,
        ..PoolConfig::default()
    });
    let t = Timeouts {
        pool: Some(Duration::from_millis(200)),
        ..timeouts()
    };
    assert_eq!(
        fetch_with(&client, "GET", &server.url("/"), None, t).unwrap(),
        (200, b"first".to_vec())
    );
    assert_eq!(
        fetch_with(&client, "GET", &server.url("/"), None, t).unwrap(),
        (200, b"retried".to_vec())
    );
}

#[test]
fn cut_chunked_body_counts_only_this_body_when_appending() {
    // `read_to_end` appends to `out`: bytes already in it are not body bytes.
    let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\na\r\nhel";
    let server = Server::start(vec![vec![ReadRequest, write(response), Close]]);
    let client = client();
    let prepared = prepare(&client, "GET", &server.url("/"), None);
    let mut exchange = send(&client, &prepared, timeouts()).unwrap();
    let mut out = b"earlier data".to_vec();
    let e = expect_error(exchange.read_to_end(&mut out, &NeverInterrupt));
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    assert_eq!(&out[..12], b"earlier data");
    assert!(e.message().contains("after 8 bytes"), "{e}");
}
