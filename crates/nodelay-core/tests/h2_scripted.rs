//! The HTTP/2 driver against a scripted frame-level server (raw TCP,
//! hand-written frames): GOAWAY with a stream in flight, RST_STREAM
//! (REFUSED_STREAM), SETTINGS_MAX_FRAME_SIZE=0, SETTINGS/PING floods and a
//! CONTINUATION flood (docs/hostile.md C17-C19). Every failure must be an error
//! within the deadline, never a hang; unprocessed requests go again once.

#[path = "support/h2_peer.rs"]
mod h2_peer;
#[path = "support/h2_readers.rs"]
mod h2_readers;

use std::io::Write;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use h2_peer::*;
use h2_readers::{bounded, client, get, send};
use nodelay_core::{
    Client, Error, ErrorKind, Http2Mode, NeverInterrupt, PoolConfig, RequestParts, Timeouts,
    TlsOptions,
};

#[test]
fn goaway_with_a_stream_in_flight_is_retried_on_a_new_connection() {
    let server = scripted(vec![
        Box::new(|peer| {
            peer.handshake(&[]);
            let stream = peer.next_request().unwrap();
            assert_eq!(stream, 1);
            // Last processed stream 0: stream 1 was not processed.
            peer.goaway(0, NO_ERROR);
            peer.drain();
        }),
        answering(b"second connection"),
    ]);
    let (status, body) = send(&client(), "POST", &format!("{}/x", server.url)).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"second connection"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

/// Refuses the first `refusals` requests (RST_STREAM REFUSED_STREAM), then
/// answers the next one on the same connection.
fn refusing(refusals: usize) -> Script {
    Box::new(move |peer| {
        peer.handshake(&[]);
        for _ in 0..refusals {
            let Some(stream) = peer.next_request() else {
                return;
            };
            peer.write_frame(RST_STREAM, 0, stream, &REFUSED_STREAM.to_be_bytes());
        }
        answer_next(peer, b"ok");
        peer.drain();
    })
}

#[test]
fn refused_stream_is_retried_once_even_for_post() {
    // Not processed, and the connection stays open: the request goes again on it.
    let server = scripted(vec![refusing(1)]);
    let (status, body) = send(&client(), "POST", &format!("{}/x", server.url)).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"ok"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn refused_twice_is_an_error_not_a_loop() {
    let server = scripted(vec![refusing(2)]);
    let error = send(&client(), "GET", &format!("{}/x", server.url)).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RemoteProtocol, "{error:?}");
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn goaway_error_covering_a_post_is_not_retried() {
    let server = scripted(vec![
        Box::new(|peer| {
            peer.handshake(&[]);
            let stream = peer.next_request().unwrap();
            // The server says it may have processed stream 1, and leaves.
            peer.goaway(stream, PROTOCOL_ERROR);
            let _ = peer.sock.shutdown(std::net::Shutdown::Both);
        }),
        answering(b"must not be asked"),
    ]);
    let error = send(&client(), "POST", &format!("{}/x", server.url)).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::RemoteProtocol | ErrorKind::Read),
        "{error:?}"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn max_frame_size_zero_is_a_connection_error() {
    // SETTINGS_MAX_FRAME_SIZE (0x5) = 0: below the 16384 minimum (RFC 9113 §6.5.2).
    let bad_settings = || -> Script {
        Box::new(|peer| {
            peer.handshake(&[0x00, 0x05, 0, 0, 0, 0]);
            peer.drain();
        })
    };
    let server = scripted(vec![bad_settings(), bad_settings()]);
    let started = Instant::now();
    let error = send(&client(), "GET", &format!("{}/x", server.url)).unwrap_err();
    assert!(started.elapsed() < DEADLINE, "no hang");
    assert!(
        matches!(error.kind(), ErrorKind::RemoteProtocol | ErrorKind::Read),
        "{error:?}"
    );
}

#[test]
fn settings_and_ping_floods_are_answered_without_growing_or_hanging() {
    let server = scripted(vec![Box::new(|peer| {
        peer.handshake(&[]);
        let stream = peer.next_request().unwrap();
        // The client acknowledges each; h2 holds at most one pending answer
        // and stops reading while it cannot send, so memory stays flat.
        // A reader thread drains the answers so neither side blocks.
        let mut reader = Peer {
            sock: peer.sock.try_clone().unwrap(),
        };
        let drained = thread::spawn(move || reader.drain());
        for i in 0..2000u64 {
            if !peer.write_frame(PING, 0, 0, &i.to_be_bytes())
                || !peer.write_frame(SETTINGS, 0, 0, &[])
            {
                break;
            }
        }
        peer.respond(stream, b"after the flood");
        let _ = drained.join();
    })]);
    let (status, body) = send(&client(), "GET", &format!("{}/x", server.url)).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"after the flood"[..]));
}

#[test]
fn continuation_flood_is_an_error_with_bounded_memory() {
    let server = scripted(vec![Box::new(|peer| {
        peer.handshake(&[]);
        let stream = peer.next_request().unwrap();
        // A header block that never ends: HEADERS without END_HEADERS, then
        // CONTINUATION frames of 1000-byte literal fields, until the client
        // gives up (the count is only a bound on the test itself).
        let mut field = vec![0x00, 0x01, b'x', 0x7f, 0xE9, 0x06]; // literal, name "x", length 1000
        field.extend(std::iter::repeat_n(b'v', 1000));
        peer.write_frame(HEADERS, 0, stream, STATUS_200);
        for _ in 0..20_000 {
            if !peer.write_frame(CONTINUATION, 0, stream, &field) {
                break;
            }
        }
        peer.drain();
    })]);
    let started = Instant::now();
    let error = send(&client(), "GET", &format!("{}/x", server.url)).unwrap_err();
    assert!(started.elapsed() < DEADLINE, "no hang");
    assert!(
        matches!(error.kind(), ErrorKind::RemoteProtocol | ErrorKind::Read),
        "{error:?}"
    );
}

#[test]
fn a_silent_server_is_a_read_timeout_at_the_deadline() {
    let server = scripted(vec![Box::new(|peer| {
        peer.handshake(&[]);
        let _ = peer.next_request();
        peer.drain();
    })]);
    let client = client();
    let url = format!("{}/x", server.url);
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[],
            body: None,
        })
        .unwrap();
    let timeouts = Timeouts {
        read: Some(Duration::from_millis(200)),
        total: Some(DEADLINE),
        ..Timeouts::default()
    };
    let started = Instant::now();
    let error = match client.send(&prepared, None, timeouts, &NeverInterrupt) {
        Ok(_) => panic!("a silent server gave a response"),
        Err(e) => e,
    };
    let waited = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::ReadTimeout, "{error:?}");
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
}

/// Time between two bytes of a dripped frame.
const DRIP: Duration = Duration::from_millis(200);

#[test]
fn a_dripped_headers_frame_is_bounded_by_the_read_timeout() {
    // docs/hostile.md L36: each byte of the response's HEADERS frame comes well
    // within the read timeout, the whole frame (~16 s) never does.
    let server = scripted(vec![Box::new(|peer| {
        peer.handshake(&[]);
        let Some(stream) = peer.next_request() else {
            return;
        };
        // `:status: 200`, then `x-pad: yyy...` as a literal (RFC 7541 §6.2.2).
        let mut block = STATUS_200.to_vec();
        block.extend_from_slice(&[0x00, 5]);
        block.extend_from_slice(b"x-pad");
        block.push(60);
        block.extend_from_slice(&[b'y'; 60]);
        let len = (block.len() as u32).to_be_bytes();
        let mut frame = vec![len[1], len[2], len[3], HEADERS, END_HEADERS | END_STREAM];
        frame.extend_from_slice(&stream.to_be_bytes());
        frame.extend_from_slice(&block);
        for byte in frame {
            if peer.sock.write_all(&[byte]).is_err() {
                return;
            }
            thread::sleep(DRIP);
        }
    })]);
    let timeouts = Timeouts {
        read: Some(Duration::from_secs(1)),
        total: Some(DEADLINE),
        ..Timeouts::default()
    };
    let started = Instant::now();
    let error = get(&client(), &format!("{}/x", server.url), timeouts).unwrap_err();
    let waited = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::ReadTimeout, "{error:?}");
    assert_eq!(
        error.message(),
        "read timeout of 1.0 s while waiting for the response head"
    );
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
}

// -- Lifetime and bounds (issue 6): GOAWAY on close, idle expiry, the
// client's max_connections, the write timeout of uploads. --

fn client_with(config: PoolConfig) -> Client {
    Client::with_http2(config, TlsOptions::default(), Http2Mode::PriorKnowledge)
}

/// Answers one request, then reads until the client's GOAWAY: reports on
/// `goaway` the error code it carried and how long after the answer it came.
fn answering_then_watching(goaway: std::sync::mpsc::Sender<(u32, Duration)>) -> Script {
    Box::new(move |peer| {
        peer.handshake(&[]);
        let Some(stream) = peer.next_request() else {
            return;
        };
        peer.respond(stream, b"ok");
        let answered = Instant::now();
        while let Some(frame) = peer.read_frame() {
            match frame.kind {
                SETTINGS if frame.flags & ACK == 0 => {
                    peer.write_frame(SETTINGS, ACK, 0, &[]);
                }
                GOAWAY => {
                    let code = u32::from_be_bytes(frame.payload[4..8].try_into().unwrap());
                    let _ = goaway.send((code, answered.elapsed()));
                    return;
                }
                _ => {}
            }
        }
    })
}

#[test]
fn close_sends_goaway_on_an_idle_connection() {
    let (tx, rx) = std::sync::mpsc::channel();
    let server = scripted(vec![answering_then_watching(tx)]);
    let client = client();
    let url = format!("{}/x", server.url);
    assert_eq!(get(&client, &url, bounded()).unwrap().0, 200);
    client.close();
    let (code, _) = rx.recv_timeout(DEADLINE).expect("GOAWAY after close()");
    assert_eq!(code, NO_ERROR);
}

#[test]
fn dropping_the_client_sends_goaway() {
    let (tx, rx) = std::sync::mpsc::channel();
    let server = scripted(vec![answering_then_watching(tx)]);
    let client = client();
    assert_eq!(
        get(&client, &format!("{}/x", server.url), bounded())
            .unwrap()
            .0,
        200
    );
    drop(client);
    let (code, _) = rx.recv_timeout(DEADLINE).expect("GOAWAY after drop");
    assert_eq!(code, NO_ERROR);
}

#[test]
fn an_idle_connection_expires_after_the_keepalive_expiry() {
    let (tx, rx) = std::sync::mpsc::channel();
    let server = scripted(vec![answering_then_watching(tx), answering(b"new")]);
    let expiry = Duration::from_millis(300);
    let client = client_with(PoolConfig {
        max_connections: Some(10),
        max_keepalive: Some(10),
        keepalive_expiry: Some(expiry),
        ..PoolConfig::default()
    });
    let url = format!("{}/x", server.url);
    assert_eq!(get(&client, &url, bounded()).unwrap().0, 200);
    let (code, after) = rx.recv_timeout(DEADLINE).expect("GOAWAY when idle");
    assert_eq!(code, NO_ERROR);
    assert!(after >= expiry - Duration::from_millis(50), "{after:?}");
    assert!(after < Duration::from_secs(3), "{after:?}");
    // The next request goes on a new connection.
    let (status, body) = get(&client, &url, bounded()).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"new"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

#[test]
fn a_connection_in_use_does_not_expire() {
    // The response body arrives after twice the expiry: the open stream keeps
    // the connection alive.
    let server = scripted(vec![Box::new(|peer| {
        peer.handshake(&[]);
        let Some(stream) = peer.next_request() else {
            return;
        };
        peer.write_frame(HEADERS, END_HEADERS, stream, STATUS_200);
        thread::sleep(Duration::from_millis(400));
        peer.write_frame(DATA, END_STREAM, stream, b"late");
        peer.drain();
    })]);
    let client = client_with(PoolConfig {
        max_connections: Some(10),
        max_keepalive: Some(10),
        keepalive_expiry: Some(Duration::from_millis(150)),
        ..PoolConfig::default()
    });
    let (status, body) = get(&client, &format!("{}/x", server.url), bounded()).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"late"[..]));
}

#[test]
fn http2_connections_count_towards_max_connections() {
    let a = scripted(vec![answering(b"a")]);
    let b = scripted(vec![answering(b"b")]);
    let client = client_with(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: None,
        ..PoolConfig::default()
    });
    assert_eq!(
        get(&client, &format!("{}/x", a.url), bounded()).unwrap().0,
        200
    );
    // The one slot is a's live connection: b must wait for it, in vain.
    let started = Instant::now();
    let error = get(
        &client,
        &format!("{}/x", b.url),
        Timeouts {
            pool: Some(Duration::from_millis(200)),
            total: Some(DEADLINE),
            ..Timeouts::default()
        },
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PoolTimeout, "{error:?}");
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(b.connections.load(Ordering::SeqCst), 0);
    // Closing frees the slot once the connection has ended.
    client.close();
    let (status, body) = get(&client, &format!("{}/x", b.url), bounded()).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"b"[..]));
}

#[test]
fn an_expiring_connection_frees_its_slot_for_a_waiting_request() {
    let a = scripted(vec![answering(b"a")]);
    let b = scripted(vec![answering(b"b")]);
    let client = client_with(PoolConfig {
        max_connections: Some(1),
        max_keepalive: Some(1),
        keepalive_expiry: Some(Duration::from_millis(200)),
        ..PoolConfig::default()
    });
    assert_eq!(
        get(&client, &format!("{}/x", a.url), bounded()).unwrap().0,
        200
    );
    let (status, body) = get(&client, &format!("{}/x", b.url), bounded()).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"b"[..]));
}

/// A server that announces a stream window of 0 and never opens it: reads
/// the request's HEADERS, then only drains. With `answer`, it responds right
/// after the HEADERS (before any body byte could come).
fn closed_window(answer: bool) -> Script {
    Box::new(move |peer| {
        let mut zero_window = SETTINGS_INITIAL_WINDOW_SIZE.to_be_bytes().to_vec();
        zero_window.extend_from_slice(&0u32.to_be_bytes());
        peer.handshake(&zero_window);
        let Some(stream) = peer.next_request() else {
            return;
        };
        if answer {
            peer.respond(stream, b"early");
        }
        // A client may send up to the default window before it has read our SETTINGS
        // (RFC 9113 §6.9.2: the window then goes negative); nothing beyond it.
        let mut data = 0;
        while let Some(frame) = peer.read_frame() {
            if frame.kind == DATA {
                data += frame.payload.len();
            }
            assert!(
                data <= DEFAULT_WINDOW,
                "{data} bytes of DATA into a window of 0"
            );
        }
    })
}

fn post_large(client: &Client, url: &str, timeouts: Timeouts) -> Result<(u16, Vec<u8>), Error> {
    let body = vec![b'x'; 256 * 1024];
    let prepared = client.prepare(&RequestParts {
        method: "POST",
        url,
        headers: &[],
        body: Some(&body),
    })?;
    let mut exchange = client.send(&prepared, Some(&body), timeouts, &NeverInterrupt)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    Ok((exchange.status(), out))
}

#[test]
fn an_upload_into_a_window_that_never_opens_is_a_write_timeout() {
    let server = scripted(vec![closed_window(false)]);
    let started = Instant::now();
    let error = post_large(
        &client(),
        &format!("{}/upload", server.url),
        Timeouts {
            write: Some(Duration::from_millis(200)),
            total: Some(DEADLINE),
            ..Timeouts::default()
        },
    )
    .unwrap_err();
    let waited = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::WriteTimeout, "{error:?}");
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
}

#[test]
fn an_early_answer_ends_an_upload_the_window_holds_back() {
    let server = scripted(vec![closed_window(true)]);
    let (status, body) = post_large(
        &client(),
        &format!("{}/upload", server.url),
        Timeouts {
            write: Some(Duration::from_secs(3)),
            total: Some(DEADLINE),
            ..Timeouts::default()
        },
    )
    .unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"early"[..]));
}

#[test]
fn goaway_while_an_upload_waits_for_window_is_retried() {
    // The stream is refused by GOAWAY while its body waits for window: the
    // request was not processed, so it goes again on a new connection.
    let server = scripted(vec![
        Box::new(|peer| {
            let mut zero_window = SETTINGS_INITIAL_WINDOW_SIZE.to_be_bytes().to_vec();
            zero_window.extend_from_slice(&0u32.to_be_bytes());
            peer.handshake(&zero_window);
            if peer.next_request().is_some() {
                peer.goaway(0, NO_ERROR);
            }
            peer.drain();
        }),
        answering(b"second connection"),
    ]);
    let (status, body) =
        post_large(&client(), &format!("{}/upload", server.url), bounded()).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"second connection"[..]));
    assert_eq!(server.connections.load(Ordering::SeqCst), 2);
}

// ---------------------------------------------------------------- RST_STREAM storms (C18)

/// RST_STREAM frames one storm sends (a bound on the test, not on the client).
const STORM_FRAMES: u32 = 10_000;

/// Answers the next request on this connection, if one comes within the socket timeout.
fn answer_next(peer: &mut Peer, body: &[u8]) {
    if let Some(stream) = peer.next_request() {
        peer.respond(stream, body);
    }
}

/// Resets `streams` with CANCEL, one RST_STREAM each, until the client leaves.
fn reset_storm(peer: &mut Peer, streams: impl Iterator<Item = u32>) {
    for stream in streams.take(STORM_FRAMES as usize) {
        if !peer.write_frame(RST_STREAM, 0, stream, &CANCEL.to_be_bytes()) {
            break;
        }
    }
}

/// After a storm that failed the first request: the next request's answer
/// and how many connections the server saw by then.
fn after_a_storm(script: Script) -> (Error, Vec<u8>, usize) {
    let server = scripted(vec![script, answering(b"on a new connection")]);
    let client = client();
    let url = format!("{}/x", server.url);
    let started = Instant::now();
    let error = send(&client, "GET", &url).unwrap_err();
    assert!(started.elapsed() < DEADLINE, "no hang");
    let (status, body) = send(&client, "GET", &url).unwrap();
    assert_eq!(status, 200);
    (error, body, server.connections.load(Ordering::SeqCst))
}

#[test]
fn c18_a_reset_storm_on_a_closed_stream_fails_that_request_only() {
    let (error, body, connections) = after_a_storm(Box::new(|peer| {
        peer.handshake(&[]);
        let stream = peer.next_request().unwrap();
        peer.write_frame(RST_STREAM, 0, stream, &INTERNAL_ERROR.to_be_bytes());
        // The stream is closed now; the storm repeats the reset on it.
        reset_storm(peer, std::iter::repeat(stream));
        answer_next(peer, b"after the storm");
        peer.drain();
    }));
    assert_eq!(error.kind(), ErrorKind::RemoteProtocol, "{error:?}");
    // The storm was ignored (frames on a closed stream): the connection serves on.
    assert_eq!((body.as_slice(), connections), (&b"after the storm"[..], 1));
}

#[test]
fn c18_a_reset_storm_on_idle_streams_is_a_connection_error() {
    let (error, body, connections) = after_a_storm(Box::new(|peer| {
        peer.handshake(&[]);
        let stream = peer.next_request().unwrap();
        // Streams the client never opened: RST_STREAM on an idle stream is a
        // connection error (RFC 9113 §6.4).
        reset_storm(peer, (stream + 2..).step_by(2));
        peer.drain();
    }));
    assert_eq!(error.kind(), ErrorKind::RemoteProtocol, "{error:?}");
    // The broken connection is gone: the next request opened a new one.
    assert_eq!(
        (body.as_slice(), connections),
        (&b"on a new connection"[..], 2)
    );
}
