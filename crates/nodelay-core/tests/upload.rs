//! Streamed request bodies against a raw-socket server that records the exact
//! bytes it receives: chunked coding for bodies of unknown size, an exact
//! Content-Length for known ones, and replay rules on stale connections.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::thread;
use std::time::Duration;

use nodelay_core::{
    BodySource, Client, Error, ErrorKind, NeverInterrupt, RequestParts, StreamFraming, Timeouts,
};
use scripted::Step::*;
use scripted::{write, Server};

// ---------------------------------------------------------------- server

/// What a connection does with each request it reads.
#[derive(Clone, Copy)]
enum Answer {
    /// `200 OK` with body `ok`, keep the connection.
    Ok,
    /// Read the request, then close without answering (a stale keep-alive
    /// connection closed by the server as the request arrived).
    CloseSilently,
}

/// The answer that keeps the connection.
const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// The scripted server; connection `i` answers its requests with
/// `answers[i]` in turn, then holds the connection until the test ends.
fn start(answers: Vec<Vec<Answer>>) -> Server {
    let script = |answers: Vec<Answer>| {
        let mut steps = Vec::new();
        for answer in answers {
            steps.push(ReadRequest);
            match answer {
                Answer::Ok => steps.push(write(OK)),
                Answer::CloseSilently => {
                    steps.push(Close);
                    return steps;
                }
            }
        }
        steps.push(Hang);
        steps
    };
    Server::start(answers.into_iter().map(script).collect())
}

// ---------------------------------------------------------------- sources

/// Pieces held in memory, handed out in order; rewindable or not.
struct Pieces {
    pieces: Vec<Vec<u8>>,
    next: usize,
    rewindable: bool,
    pulls: usize,
}

impl Pieces {
    fn new(pieces: &[&[u8]], rewindable: bool) -> Self {
        Pieces {
            pieces: pieces.iter().map(|p| p.to_vec()).collect(),
            next: 0,
            rewindable,
            pulls: 0,
        }
    }
}

impl BodySource for Pieces {
    fn next_chunk<'a>(&'a mut self, _buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        self.pulls += 1;
        let piece = self.pieces.get(self.next);
        self.next += 1;
        Ok(piece.map(Vec::as_slice))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        if self.rewindable {
            self.next = 0;
        }
        Ok(self.rewindable)
    }
}

/// A "file" of `len` patterned bytes, read into the engine's buffer the way a
/// file object's `readinto` fills it.
struct PatternFile {
    len: usize,
    offset: usize,
    largest_piece: usize,
}

fn pattern(i: usize) -> u8 {
    (i % 251) as u8
}

impl BodySource for PatternFile {
    fn next_chunk<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        let n = (self.len - self.offset).min(buf.capacity());
        if n == 0 {
            return Ok(None);
        }
        buf.clear();
        buf.extend((self.offset..self.offset + n).map(pattern));
        self.offset += n;
        self.largest_piece = self.largest_piece.max(n);
        Ok(Some(&buf[..]))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        self.offset = 0;
        Ok(true)
    }
}

/// Fails on its second piece, as a Python generator raising would.
struct Failing {
    pulled: bool,
}

impl BodySource for Failing {
    fn next_chunk<'a>(&'a mut self, _buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        if self.pulled {
            return Err(Error::body_source("the generator raised"));
        }
        self.pulled = true;
        Ok(Some(b"first"))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        Ok(false)
    }
}

// ---------------------------------------------------------------- helpers

fn client() -> Client {
    Client::new(support::pool(Some(10), 10))
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(3))
}

fn upload(
    client: &Client,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    framing: StreamFraming,
    source: &mut dyn BodySource,
) -> Result<Vec<u8>, Error> {
    let prepared = client.prepare_streamed(
        &RequestParts {
            method,
            url,
            headers,
            body: None,
        },
        framing,
    )?;
    let mut exchange = client.send_streamed(&prepared, source, timeouts(), &NeverInterrupt)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    exchange.finish();
    Ok(out)
}

fn get(client: &Client, url: &str) {
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
    exchange
        .read_to_end(&mut Vec::new(), &NeverInterrupt)
        .unwrap();
    exchange.finish();
}

// ---------------------------------------------------------------- tests

#[test]
fn chunked_upload_is_exact_on_the_wire() {
    let server = start(vec![vec![Answer::Ok]]);
    let client = client();
    let mut source = Pieces::new(&[b"hello", b"", b" streamed world!"], false);
    let out = upload(
        &client,
        "POST",
        &server.url("/up"),
        &[("Content-Type", "text/plain")],
        StreamFraming::Chunked,
        &mut source,
    )
    .unwrap();
    assert_eq!(out, b"ok");
    let expected = format!(
        "POST /up HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: text/plain\r\n\
         Transfer-Encoding: chunked\r\n\r\n\
         5\r\nhello\r\n10\r\n streamed world!\r\n0\r\n\r\n",
        server.port()
    );
    assert_eq!(
        server.requests(),
        vec![(0, expected.into_bytes())],
        "the empty piece is skipped, not sent as a terminating zero chunk"
    );
}

#[test]
fn empty_chunked_upload_is_only_the_last_chunk() {
    let server = start(vec![vec![Answer::Ok]]);
    let client = client();
    let mut source = Pieces::new(&[], false);
    upload(
        &client,
        "PUT",
        &server.url("/e"),
        &[],
        StreamFraming::Chunked,
        &mut source,
    )
    .unwrap();
    let expected = format!(
        "PUT /e HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        server.port()
    );
    assert_eq!(server.requests(), vec![(0, expected.into_bytes())]);
}

#[test]
fn streamed_content_length_upload_is_exact_and_read_in_large_pieces() {
    const LEN: usize = 3 * 1024 * 1024 + 17;
    let server = start(vec![vec![Answer::Ok]]);
    let client = client();
    let mut source = PatternFile {
        len: LEN,
        offset: 0,
        largest_piece: 0,
    };
    upload(
        &client,
        "PUT",
        &server.url("/file"),
        &[],
        StreamFraming::Length(LEN as u64),
        &mut source,
    )
    .unwrap();
    let head = format!(
        "PUT /file HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {LEN}\r\n\r\n",
        server.port()
    );
    let mut expected = head.into_bytes();
    expected.extend((0..LEN).map(pattern));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].1 == expected, "server received different bytes");
    assert!(
        source.largest_piece >= 64 * 1024,
        "pieces of at least 64 KiB, got {}",
        source.largest_piece
    );
    assert!(
        source.largest_piece <= nodelay_core::limits::UPLOAD_CHUNK_BYTES,
        "the buffer is never grown: {}",
        source.largest_piece
    );
}

#[test]
fn a_source_shorter_or_longer_than_its_length_is_a_local_error() {
    let server = start(vec![vec![Answer::Ok], vec![Answer::Ok]]);
    let client = client();
    for (pieces, what) in [
        (&[&b"abc"[..]][..], "3 given"),
        (&[b"abcdef", b"gh"], "more given"),
    ] {
        let mut source = Pieces::new(pieces, false);
        let e = upload(
            &client,
            "POST",
            &server.url("/x"),
            &[],
            StreamFraming::Length(5),
            &mut source,
        )
        .expect_err("a size mismatch must fail");
        assert_eq!(e.kind(), ErrorKind::LocalProtocol, "{e:?}");
        assert!(e.message().contains(what), "{e}");
    }
}

#[test]
fn a_failing_source_fails_the_request_without_a_retry() {
    let server = start(vec![vec![Answer::Ok], vec![Answer::Ok]]);
    let client = client();
    get(&client, &server.url("/warm"));
    let e = upload(
        &client,
        "PUT",
        &server.url("/x"),
        &[],
        StreamFraming::Chunked,
        &mut Failing { pulled: false },
    )
    .expect_err("the source failed");
    assert_eq!(e.kind(), ErrorKind::BodySource);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn callers_content_length_header_frames_a_stream_of_unknown_size() {
    let server = start(vec![vec![Answer::Ok]]);
    let client = client();
    let mut source = Pieces::new(&[b"ab", b"cd"], false);
    upload(
        &client,
        "POST",
        &server.url("/cl"),
        &[("Content-Length", "4")],
        StreamFraming::Chunked,
        &mut source,
    )
    .unwrap();
    let expected = format!(
        "POST /cl HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 4\r\n\r\nabcd",
        server.port()
    );
    assert_eq!(server.requests(), vec![(0, expected.into_bytes())]);
}

#[test]
fn contradicting_framing_headers_are_refused_before_any_io() {
    let client = client();
    let url = "http://127.0.0.1:9/never";
    let cases: [(&[(&str, &str)], StreamFraming); 3] = [
        (&[("Content-Length", "3")], StreamFraming::Length(4)),
        (&[("Transfer-Encoding", "gzip")], StreamFraming::Chunked),
        (
            &[("Transfer-Encoding", "chunked")],
            StreamFraming::Length(4),
        ),
    ];
    for (headers, framing) in cases {
        let e = client
            .prepare_streamed(
                &RequestParts {
                    method: "POST",
                    url,
                    headers,
                    body: None,
                },
                framing,
            )
            .err()
            .expect("refused");
        assert_eq!(e.kind(), ErrorKind::LocalProtocol, "{headers:?}");
    }
}

#[test]
fn stale_connection_replays_a_rewindable_stream() {
    let server = start(vec![
        vec![Answer::Ok, Answer::CloseSilently],
        vec![Answer::Ok],
    ]);
    let client = client();
    get(&client, &server.url("/warm"));
    let mut source = Pieces::new(&[b"once", b"more"], true);
    let out = upload(
        &client,
        "PUT",
        &server.url("/put"),
        &[],
        StreamFraming::Length(8),
        &mut source,
    )
    .unwrap();
    assert_eq!(out, b"ok");
    let puts: Vec<(usize, Vec<u8>)> = server
        .requests()
        .into_iter()
        .filter(|(_, r)| r.starts_with(b"PUT "))
        .collect();
    assert_eq!(puts.len(), 2, "sent on the stale connection, then again");
    assert_eq!((puts[0].0, puts[1].0), (0, 1));
    assert_eq!(puts[0].1, puts[1].1, "the replay is the whole body again");
    assert!(puts[1].1.ends_with(b"\r\n\r\noncemore"));
}

#[test]
fn stale_connection_never_replays_a_consumed_stream() {
    let server = start(vec![
        vec![Answer::Ok, Answer::CloseSilently],
        vec![Answer::Ok],
    ]);
    let client = client();
    get(&client, &server.url("/warm"));
    let mut source = Pieces::new(&[b"gone"], false);
    let e = upload(
        &client,
        "PUT",
        &server.url("/put"),
        &[],
        StreamFraming::Chunked,
        &mut source,
    )
    .expect_err("a consumed stream cannot be sent again");
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e:?}");
    thread::sleep(Duration::from_millis(50));
    assert_eq!(server.accepted(), 1, "no replay");
}
