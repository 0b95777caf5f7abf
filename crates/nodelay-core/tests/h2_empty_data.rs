//! HTTP/2 bodies framed with empty DATA frames (docs/hostile.md C38): a DATA
//! frame with no payload is legal anywhere in a body, and many servers end
//! every body with one carrying END_STREAM (Go and Caddy past 4 KiB, nginx as
//! a reverse proxy, Node's http2 after write()+end(), hypercorn, h2o for
//! HEAD). Each shape goes through every way a body is read: the sync
//! client's whole-body read (`read_exact_into` for a known length, as
//! `Client.get` does, else `read_to_end`), the sync stream (`BodyStream`,
//! `read_some`), and the async client's whole and streamed reads.

#[path = "support/h2_peer.rs"]
mod h2_peer;
#[path = "support/h2_readers.rs"]
mod h2_readers;

use std::thread;
use std::time::Duration;

use h2_peer::*;
use h2_readers::every_reader_gets;

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
