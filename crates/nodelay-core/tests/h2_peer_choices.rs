//! HTTP/2 peers' legal framing choices (docs/hostile.md C38, L39), against a
//! scripted frame-level server: trailers after the body, a stream window of
//! one byte opened by WINDOW_UPDATEs (download and upload),
//! SETTINGS_MAX_CONCURRENT_STREAMS=1 under a batch, and a server that says
//! GOAWAY after every N streams, over 2,000 sequential and 2,000 batched
//! requests. Every request must succeed.

#[path = "support/h2_peer.rs"]
mod h2_peer;
#[path = "support/h2_readers.rs"]
mod h2_readers;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use h2_peer::*;
use h2_readers::{bounded, client, config, every_reader_gets, request, start};
use nodelay_core::batch::{fetch, HeldConnection};
use nodelay_core::{
    runtime, Client, Error, Http2Mode, NeverInterrupt, PoolConfig, RequestParts, TlsOptions,
};

/// Decoded-size cap given to the batch reads (no coding is used here).
const MAX_DECODED_BYTES: u64 = 1 << 30;

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

// ---------------------------------------------------------------- trailers

#[test]
fn trailers_after_the_body_end_it() {
    // A trailer section (HEADERS with END_STREAM after the DATA, RFC 9113
    // §8.1) ends the body; with and without a Content-Length.
    for fields in [&[("content-length", "43")][..], &[]] {
        let server = serving(4, move |peer| {
            peer.handshake(&[]);
            while let Some(stream) = peer.next_request() {
                peer.write_frame(
                    HEADERS,
                    END_HEADERS,
                    stream,
                    &header_block(STATUS_200, fields),
                );
                peer.data(stream, &pattern(43));
                let trailers = header_block(&[], &[("x-checksum", "abc"), ("x-rows", "1")]);
                peer.write_frame(HEADERS, END_HEADERS | END_STREAM, stream, &trailers);
            }
        });
        every_reader_gets(&server, "GET", 200, &pattern(43));
    }
}

// ---------------------------------------------------------------- tiny windows

/// The stream window the scripted server announces: one byte.
const TINY_WINDOW: u32 = 1;
/// What the server grants per WINDOW_UPDATE after each DATA frame.
const WINDOW_GRANT: u32 = 1024;

#[test]
fn a_download_from_a_peer_with_a_one_byte_window_in_one_byte_frames() {
    // The server's window limits only what we send; its body comes in
    // 2,000 one-byte DATA frames.
    let body = pattern(2_000);
    let sent = body.clone();
    let server = serving(4, move |peer| {
        peer.handshake(&setting(SETTINGS_INITIAL_WINDOW_SIZE, TINY_WINDOW));
        while let Some(stream) = peer.next_request() {
            peer.write_frame(HEADERS, END_HEADERS, stream, STATUS_200);
            for byte in &sent {
                peer.write_frame(DATA, 0, stream, std::slice::from_ref(byte));
            }
            peer.end_with_empty_data(stream);
        }
    });
    every_reader_gets(&server, "GET", 200, &body);
}

/// Receives one upload into a window of [`TINY_WINDOW`], granting
/// [`WINDOW_GRANT`] more (and the connection window back) after each DATA
/// frame; asserts the client never sends beyond the window. Answers with the
/// body received.
fn receive_upload_through_a_tiny_window(peer: &mut Peer) {
    peer.handshake(&setting(SETTINGS_INITIAL_WINDOW_SIZE, TINY_WINDOW));
    let mut acked = false;
    let mut granted = 0usize;
    let mut body = Vec::new();
    while let Some(frame) = peer.read_frame() {
        match frame.kind {
            SETTINGS if frame.flags & ACK == 0 => {
                peer.write_frame(SETTINGS, ACK, 0, &[]);
            }
            // From the client's ACK on, our window applies to all it sent
            // (RFC 9113 §6.9.2: before it, the default window did).
            SETTINGS => acked = true,
            DATA => {
                body.extend_from_slice(&frame.payload);
                let window = if acked {
                    TINY_WINDOW as usize + granted
                } else {
                    DEFAULT_WINDOW
                };
                assert!(
                    body.len() <= window,
                    "{} bytes sent into a window of {window}",
                    body.len()
                );
                if frame.flags & END_STREAM != 0 {
                    peer.write_frame(HEADERS, END_HEADERS, frame.stream, STATUS_200);
                    peer.data(frame.stream, &body);
                    peer.end_with_empty_data(frame.stream);
                    body.clear();
                    granted = 0;
                    continue;
                }
                granted += WINDOW_GRANT as usize;
                peer.write_frame(WINDOW_UPDATE, 0, frame.stream, &WINDOW_GRANT.to_be_bytes());
                let used = (frame.payload.len() as u32).to_be_bytes();
                if !frame.payload.is_empty() {
                    peer.write_frame(WINDOW_UPDATE, 0, 0, &used);
                }
            }
            _ => {}
        }
    }
}

fn post(client: &Client, url: &str, body: &[u8]) -> Result<(u16, Vec<u8>), Error> {
    request(client, "POST", url, Some(body), bounded())
}

#[test]
fn an_upload_into_a_one_byte_window_opened_by_window_updates() {
    let server = serving(1, receive_upload_through_a_tiny_window);
    let client = client();
    let url = format!("{}/upload", server.url);
    // Queued whole (small), then sent piece by piece as window opens (large).
    for size in [7, 100_000] {
        let body = pattern(size);
        let (status, echoed) = post(&client, &url, &body).unwrap();
        assert_eq!(status, 200);
        assert!(echoed == body, "the {size}-byte upload arrived altered");
    }
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------- batches

/// Most requests nodelay-py's batch keeps in flight (`MAX_BATCH_CONCURRENCY`).
const MAX_BATCH_CONCURRENCY: usize = 1024;

/// Sends `count` GETs of `url` as one batch on the process runtime, as
/// `Client.get_many` does: `concurrency` tasks, each fetching the next
/// request when its previous one is done (`batch::fetch`, on the client's
/// shared HTTP/2 connection). Returns each request's result.
fn batch(
    client: &Arc<Client>,
    url: &str,
    count: usize,
    concurrency: usize,
) -> Vec<Result<Vec<u8>, Error>> {
    let next = Arc::new(AtomicUsize::new(0));
    let runners: Vec<_> = (0..concurrency.min(count))
        .map(|_| {
            let (client, url) = (Arc::clone(client), url.to_owned());
            let next = Arc::clone(&next);
            runtime::handle().spawn(async move {
                let mut results = Vec::new();
                let mut held = HeldConnection::default();
                while next.fetch_add(1, Ordering::SeqCst) < count {
                    let fetched = match client.prepare(&RequestParts {
                        method: "GET",
                        url: &url,
                        headers: &[],
                        body: None,
                    }) {
                        Ok(prepared) => {
                            let timeouts = bounded();
                            fetch(
                                &client,
                                &mut held,
                                &prepared,
                                None,
                                timeouts,
                                MAX_DECODED_BYTES,
                            )
                            .await
                        }
                        Err(e) => Err(e),
                    };
                    results.push(fetched.map(|f| f.body));
                }
                held.release();
                results
            })
        })
        .collect();
    runtime::handle().block_on(async {
        let mut results = Vec::with_capacity(count);
        for runner in runners {
            results.extend(runner.await.expect("a batch task panicked"));
        }
        results
    })
}

fn assert_all_ok(results: &[Result<Vec<u8>, Error>], body: &[u8]) {
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        errors.is_empty(),
        "{} of {} failed, first: {:?}",
        errors.len(),
        results.len(),
        errors.first()
    );
    assert!(results.iter().all(|r| r.as_ref().unwrap() == body));
}

/// How long the concurrency-limited server waits, with a stream open, for
/// the client to (wrongly) open another before it answers.
const OVERLAP_WATCH: Duration = Duration::from_millis(20);

#[test]
fn max_concurrent_streams_of_one_under_a_batch_of_fifty() {
    // Streams the client opened before it saw our SETTINGS (before its ACK)
    // may exceed the limit (RFC 9113 §6.5.3): refused, as servers do, and
    // sent again. After the ACK, a second open stream breaks the limit.
    let overlaps = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&overlaps);
    let server = serving(1, move |peer| {
        peer.handshake(&setting(SETTINGS_MAX_CONCURRENT_STREAMS, 1));
        let mut acked = false;
        let mut open = None;
        loop {
            // With a stream open, look a while for frames before answering:
            // a second HEADERS meanwhile would break the limit.
            let watch = if open.is_some() {
                OVERLAP_WATCH
            } else {
                DEADLINE
            };
            peer.sock.set_read_timeout(Some(watch)).unwrap();
            let mut probe = [0u8; 1];
            let arrived = peer.sock.peek(&mut probe);
            peer.sock.set_read_timeout(Some(DEADLINE)).unwrap();
            match (arrived, open) {
                (Ok(0), _) | (Err(_), None) => return,
                (Ok(_), _) => {}
                (Err(_), Some(stream)) => {
                    peer.respond(stream, b"one at a time");
                    open = None;
                    continue;
                }
            }
            let Some(frame) = peer.read_frame() else {
                return;
            };
            match frame.kind {
                SETTINGS if frame.flags & ACK == 0 => {
                    peer.write_frame(SETTINGS, ACK, 0, &[]);
                }
                SETTINGS => acked = true,
                HEADERS if open.is_none() => open = Some(frame.stream),
                HEADERS => {
                    if acked {
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                    peer.write_frame(RST_STREAM, 0, frame.stream, &REFUSED_STREAM.to_be_bytes());
                }
                _ => {}
            }
        }
    });
    let client = Arc::new(client());
    let results = batch(&client, &format!("{}/x", server.url), 50, 50);
    assert_all_ok(&results, b"one at a time");
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "streams beyond the limit"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------- GOAWAY after N streams

/// Streams a recycling server answers per connection before its GOAWAY.
const STREAMS_PER_CONNECTION: usize = 100;
/// Requests of each GOAWAY run, sequential and batched (docs/hostile.md L39).
const RECYCLED_REQUESTS: usize = 2_000;

/// A server that answers [`STREAMS_PER_CONNECTION`] streams per connection,
/// then sends GOAWAY with the last of them as the last stream id, answers
/// nothing above it, and closes. Counts the requests it answered.
fn recycling(answered: Arc<AtomicUsize>) -> Scripted {
    // Each connection serves 100; retried requests may need some more.
    serving(
        4 * RECYCLED_REQUESTS / STREAMS_PER_CONNECTION,
        move |peer| {
            peer.handshake(&[]);
            let mut served = 0;
            while let Some(stream) = peer.next_request() {
                // Counted before the answer leaves, so the client never sees
                // an answer the count does not hold yet.
                answered.fetch_add(1, Ordering::SeqCst);
                peer.respond(stream, b"recycled");
                served += 1;
                if served == STREAMS_PER_CONNECTION {
                    peer.goaway(stream, NO_ERROR);
                    let _ = peer.sock.shutdown(std::net::Shutdown::Write);
                    peer.drain();
                    return;
                }
            }
        },
    )
}

#[test]
fn goaway_after_every_hundred_streams_over_two_thousand_sequential_requests() {
    let answered = Arc::new(AtomicUsize::new(0));
    let server = recycling(Arc::clone(&answered));
    let client = client();
    let url = format!("{}/x", server.url);
    for i in 0..RECYCLED_REQUESTS {
        let mut exchange =
            start(&client, "GET", &url).unwrap_or_else(|e| panic!("request {i}: {e}"));
        let mut body = Vec::new();
        exchange
            .read_to_end(&mut body, &NeverInterrupt)
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
        assert_eq!(body, b"recycled");
        exchange.finish();
    }
    assert_eq!(answered.load(Ordering::SeqCst), RECYCLED_REQUESTS);
    assert_eq!(
        server.connections.load(Ordering::SeqCst),
        RECYCLED_REQUESTS / STREAMS_PER_CONNECTION
    );
}

#[test]
fn goaway_after_every_hundred_streams_over_two_thousand_batched_requests() {
    let answered = Arc::new(AtomicUsize::new(0));
    let server = recycling(Arc::clone(&answered));
    let client = Arc::new(Client::with_http2(
        PoolConfig {
            max_connections: Some(100),
            ..config()
        },
        TlsOptions::default(),
        Http2Mode::PriorKnowledge,
    ));
    let url = format!("{}/x", server.url);
    let results = batch(&client, &url, RECYCLED_REQUESTS, MAX_BATCH_CONCURRENCY);
    assert_all_ok(&results, b"recycled");
    // Each request answered once: those above a last stream id were not
    // processed, and went again.
    assert_eq!(answered.load(Ordering::SeqCst), RECYCLED_REQUESTS);
}
