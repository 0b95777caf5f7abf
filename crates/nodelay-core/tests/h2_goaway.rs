//! GOAWAY against a scripted frame-level server (RFC 9113 §6.8, docs/hostile.md
//! C19, C38, L39): streams above the last stream id were not processed and
//! go again on a new connection, a POST included; a server that promises to
//! answer a stream (last stream id at or above it) and closes the connection
//! instead fails the request with an error that says so, and only an
//! idempotent request goes again: a POST is never sent twice.

#[path = "support/h2_peer.rs"]
mod h2_peer;
#[path = "support/h2_readers.rs"]
mod h2_readers;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;

use h2_peer::*;
use h2_readers::{client, send};
use nodelay_core::{Error, ErrorKind};

/// Reads one request, promises to answer it (GOAWAY with its stream id as
/// the last one) and closes the connection instead. It closes its sending
/// side and reads on: closing outright with the request's body still unread
/// would make the kernel answer with a reset, which can discard the GOAWAY
/// before the client reads it (the test would then race the kernel).
fn breaking_the_promise(code: u32) -> Script {
    Box::new(move |peer| {
        peer.handshake(&[]);
        if let Some(stream) = peer.next_request() {
            peer.goaway(stream, code);
        }
        let _ = peer.sock.shutdown(std::net::Shutdown::Write);
        peer.drain();
    })
}

fn assert_says_the_promise_was_broken(error: &Error) {
    assert_eq!(error.kind(), ErrorKind::RemoteProtocol, "{error:?}");
    let message = error.message();
    assert!(message.contains("GOAWAY"), "{message}");
    assert!(message.contains("stream 1"), "{message}");
    assert!(message.contains("closed the connection"), "{message}");
    assert!(!message.contains("broken pipe"), "{message}");
}

#[test]
fn a_broken_promise_fails_a_post_saying_so_and_never_sends_it_twice() {
    let server = scripted(vec![
        breaking_the_promise(NO_ERROR),
        answering(b"must not be asked"),
    ]);
    let error = send(&client(), "POST", &format!("{}/x", server.url)).unwrap_err();
    assert_says_the_promise_was_broken(&error);
    assert!(
        error.message().contains("promising to answer stream 1"),
        "{error:?}"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn a_broken_promise_names_the_goaway_error_code() {
    let server = scripted(vec![breaking_the_promise(PROTOCOL_ERROR)]);
    let error = send(&client(), "POST", &format!("{}/x", server.url)).unwrap_err();
    assert_says_the_promise_was_broken(&error);
    assert!(error.message().contains("PROTOCOL_ERROR"), "{error:?}");
}

#[test]
fn a_get_whose_promise_was_broken_goes_again_on_a_new_connection() {
    let server = scripted(vec![
        breaking_the_promise(NO_ERROR),
        answering(b"second connection"),
    ]);
    let (status, body) = send(&client(), "GET", &format!("{}/x", server.url)).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"second connection"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

#[test]
fn a_get_whose_promise_is_broken_twice_fails_saying_so() {
    let server = scripted(vec![
        breaking_the_promise(NO_ERROR),
        breaking_the_promise(NO_ERROR),
        answering(b"never"),
    ]);
    let error = send(&client(), "GET", &format!("{}/x", server.url)).unwrap_err();
    assert_says_the_promise_was_broken(&error);
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

#[test]
fn a_post_above_the_last_stream_id_goes_again_whatever_the_error_code() {
    // Last stream id 0: stream 1 was not processed (RFC 9113 §6.8), so even
    // a POST goes again, also when the GOAWAY reports an error.
    let server = scripted(vec![
        Box::new(|peer| {
            peer.handshake(&[]);
            if peer.next_request().is_some() {
                peer.goaway(0, PROTOCOL_ERROR);
            }
            peer.drain();
        }),
        answering(b"second connection"),
    ]);
    let (status, body) = send(&client(), "POST", &format!("{}/x", server.url)).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"second connection"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

#[test]
fn of_two_posts_in_flight_the_one_above_the_last_stream_id_goes_again() {
    // Two POSTs on one connection; the GOAWAY covers the first only, which
    // is answered before the server leaves. The second goes on a new
    // connection. Each POST is answered once: the bodies tell which.
    let server = scripted(vec![
        Box::new(|peer| {
            peer.handshake(&[]);
            // Both requests' heads, and the first one's body to its end: were
            // the first upload still going when the connection closes, its
            // answer would race the client's failing write (another case).
            let (mut streams, mut ended) = (Vec::new(), Vec::new());
            while streams.len() < 2 || !ended.contains(streams.iter().min().unwrap()) {
                let Some(frame) = peer.read_frame() else {
                    return;
                };
                match frame.kind {
                    SETTINGS if frame.flags & ACK == 0 => {
                        peer.write_frame(SETTINGS, ACK, 0, &[]);
                    }
                    HEADERS => streams.push(frame.stream),
                    _ => {}
                }
                if matches!(frame.kind, HEADERS | DATA) && frame.flags & END_STREAM != 0 {
                    ended.push(frame.stream);
                }
            }
            let first = streams[0].min(streams[1]);
            peer.goaway(first, NO_ERROR);
            peer.respond(first, b"first connection");
            let _ = peer.sock.shutdown(std::net::Shutdown::Write);
            peer.drain();
        }),
        answering(b"second connection"),
    ]);
    let client = Arc::new(client());
    let url = format!("{}/x", server.url);
    let posts: Vec<_> = (0..2)
        .map(|_| {
            let (client, url) = (Arc::clone(&client), url.clone());
            thread::spawn(move || send(&client, "POST", &url))
        })
        .collect();
    let mut bodies: Vec<Vec<u8>> = posts
        .into_iter()
        .map(|post| post.join().unwrap().unwrap().1)
        .collect();
    bodies.sort();
    assert_eq!(
        bodies,
        [b"first connection".to_vec(), b"second connection".to_vec()]
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

#[test]
fn a_promise_broken_in_the_middle_of_a_body_says_so() {
    // The head and part of the body arrive, then the GOAWAY covering the
    // stream, then the connection closes.
    let server = scripted(vec![Box::new(|peer| {
        peer.handshake(&[]);
        if let Some(stream) = peer.next_request() {
            let head = header_block(STATUS_200, &[("content-length", "100")]);
            peer.write_frame(HEADERS, END_HEADERS, stream, &head);
            peer.data(stream, &[b'x'; 40]);
            peer.goaway(stream, NO_ERROR);
        }
        let _ = peer.sock.shutdown(std::net::Shutdown::Both);
    })]);
    let error = send(&client(), "GET", &format!("{}/x", server.url)).unwrap_err();
    assert_says_the_promise_was_broken(&error);
    assert!(
        error
            .message()
            .contains("before the end of the response body"),
        "{error:?}"
    );
}

/// Answers one request, then reads the next and closes the connection
/// without a GOAWAY (as when the GOAWAY was lost to a reset).
fn answering_once_then_closing() -> Script {
    Box::new(|peer| {
        peer.handshake(&[]);
        let Some(stream) = peer.next_request() else {
            return;
        };
        peer.respond(stream, b"first");
        let _ = peer.next_request();
        let _ = peer.sock.shutdown(std::net::Shutdown::Both);
    })
}

#[test]
fn a_get_on_a_connection_that_closes_after_answering_others_goes_again() {
    let server = scripted(vec![
        answering_once_then_closing(),
        answering(b"second connection"),
    ]);
    let client = client();
    let url = format!("{}/x", server.url);
    assert_eq!(send(&client, "GET", &url).unwrap().1, b"first");
    let (status, body) = send(&client, "GET", &url).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"second connection"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

#[test]
fn a_post_on_a_connection_that_closes_after_answering_others_is_not_sent_again() {
    let server = scripted(vec![
        answering_once_then_closing(),
        answering(b"must not be asked"),
    ]);
    let client = client();
    let url = format!("{}/x", server.url);
    assert_eq!(send(&client, "GET", &url).unwrap().1, b"first");
    let error = send(&client, "POST", &url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Read, "{error:?}");
    assert_eq!(
        error.message(),
        "the server closed the HTTP/2 connection before answering"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}
