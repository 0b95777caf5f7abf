//! A server that answers before the request body is complete (413 Content Too
//! Large and the like) and stops reading: the client returns that answer, as
//! curl and browsers do, instead of a write error, and never reuses the
//! connection. Raw-socket server on loopback; exact bytes both ways.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nodelay_core::{
    BodySource, Client, Error, Exchange, NeverInterrupt, PoolConfig, RequestParts, StreamFraming,
    Timeouts,
};
use scripted::Step::*;
use scripted::{write, Server};

const ANSWER_413: &[u8] =
    b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!";
const ANSWER_OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh";

/// What the server does once it has read a request head.
#[derive(Clone, Copy)]
enum Then {
    /// Answer 413 and close without reading the body: the unread bytes make
    /// the kernel send RST, which is what a client sees from most servers.
    AnswerAndClose,
    /// Answer 413, keep the connection open and read nothing more.
    AnswerAndHold,
    /// Read the whole body it announced, answer 200 `fresh`.
    ReadBodyAndAnswer,
}

/// How long `AnswerAndHold` keeps its connection: past every request of a test.
const HOLD: Duration = Duration::from_secs(8);

/// How long `ReadBodyAndAnswer` keeps its connection after answering, so the
/// client reads the answer before the close.
const LINGER: Duration = Duration::from_millis(200);

/// The scripted server; connection `i` does `scripts[i]` with its first
/// request (whose head it records).
fn start(scripts: Vec<Then>) -> Server {
    let script = |then| match then {
        // The script's end closes the socket with the body unread.
        Then::AnswerAndClose => vec![ReadHead, write(ANSWER_413)],
        Then::AnswerAndHold => vec![ReadHead, write(ANSWER_413), Sleep(HOLD)],
        Then::ReadBodyAndAnswer => vec![
            ReadHead,
            DiscardBody,
            write(ANSWER_OK),
            ShutdownWrite,
            Sleep(LINGER),
        ],
    };
    Server::start(scripts.into_iter().map(script).collect())
}

/// The request URL all tests post to.
fn url(server: &Server) -> String {
    server.url("/upload")
}

fn client() -> Client {
    Client::new(PoolConfig {
        max_connections: None,
        max_keepalive: Some(10),
        keepalive_expiry: None,
        ..PoolConfig::default()
    })
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(5))
}

fn read_all(mut exchange: Exchange) -> Result<(u16, Vec<u8>), Error> {
    let mut out = Vec::new();
    let status = exchange.status();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    exchange.finish();
    Ok((status, out))
}

fn post(client: &Client, url: &str, body: &[u8]) -> Result<(u16, Vec<u8>), Error> {
    let parts = RequestParts {
        method: "POST",
        url,
        headers: &[],
        body: Some(body),
    };
    let prepared = client.prepare(&parts)?;
    let exchange = client.send(&prepared, Some(body), timeouts(), &NeverInterrupt)?;
    read_all(exchange)
}

/// `total` bytes of `x` in pieces of `piece` bytes, counting what was pulled.
struct Pieces {
    left: usize,
    piece: usize,
    pulled: Arc<AtomicUsize>,
}

impl BodySource for Pieces {
    fn next_chunk<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        let n = self.piece.min(self.left);
        self.left -= n;
        self.pulled.fetch_add(n, Ordering::SeqCst);
        buf.clear();
        buf.resize(n, b'x');
        Ok(Some(&buf[..]))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        Ok(false)
    }
}

fn post_streamed(
    client: &Client,
    url: &str,
    framing: StreamFraming,
    source: &mut Pieces,
) -> Result<(u16, Vec<u8>), Error> {
    let parts = RequestParts {
        method: "POST",
        url,
        headers: &[],
        body: None,
    };
    let prepared = client.prepare_streamed(&parts, framing)?;
    let exchange = client.send_streamed(&prepared, source, timeouts(), &NeverInterrupt)?;
    read_all(exchange)
}

/// Far more than loopback socket buffers hold, so the upload cannot finish
/// before the server's answer and close.
const LARGE: usize = 64 * 1024 * 1024;

#[test]
fn in_memory_body_answered_early_and_closed_returns_the_answer() {
    let server = start(vec![Then::AnswerAndClose, Then::ReadBodyAndAnswer]);
    let client = client();
    let body = vec![b'x'; LARGE];
    let started = Instant::now();
    let (status, content) = post(&client, &url(&server), &body).unwrap();
    assert_eq!((status, content.as_slice()), (413, &b"too big!"[..]));
    assert!(started.elapsed() < Duration::from_secs(4));
    let head = server.requests()[0].1.clone();
    let expected = format!(
        "POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {LARGE}\r\n\r\n",
        server.port()
    );
    assert_eq!(String::from_utf8_lossy(&head), expected);
    // The next request goes out on a new connection.
    let (status, content) = post(&client, &url(&server), b"small").unwrap();
    assert_eq!((status, content.as_slice()), (200, &b"fresh"[..]));
    assert_eq!(server.accepted(), 2);
}

#[test]
fn streamed_body_stops_when_the_server_answers_and_holds() {
    let server = start(vec![Then::AnswerAndHold, Then::ReadBodyAndAnswer]);
    let client = client();
    let pulled = Arc::new(AtomicUsize::new(0));
    let mut source = Pieces {
        left: LARGE,
        piece: 256 * 1024,
        pulled: Arc::clone(&pulled),
    };
    let started = Instant::now();
    let (status, content) =
        post_streamed(&client, &url(&server), StreamFraming::Chunked, &mut source).unwrap();
    assert_eq!((status, content.as_slice()), (413, &b"too big!"[..]));
    // Well before the 5 s write timeout that a blocked upload would run into.
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(
        pulled.load(Ordering::SeqCst) < LARGE,
        "the whole body was pulled although the server had answered"
    );
    let (status, _) = post(&client, &url(&server), b"again").unwrap();
    assert_eq!(status, 200);
    assert_eq!(server.accepted(), 2);
}

#[test]
fn streamed_body_answered_early_and_closed_returns_the_answer() {
    let server = start(vec![Then::AnswerAndClose, Then::ReadBodyAndAnswer]);
    let client = client();
    let mut source = Pieces {
        left: LARGE,
        piece: 256 * 1024,
        pulled: Arc::new(AtomicUsize::new(0)),
    };
    let (status, content) = post_streamed(
        &client,
        &url(&server),
        StreamFraming::Length(LARGE as u64),
        &mut source,
    )
    .unwrap();
    assert_eq!((status, content.as_slice()), (413, &b"too big!"[..]));
    let (status, _) = post(&client, &url(&server), b"again").unwrap();
    assert_eq!(status, 200);
    assert_eq!(server.accepted(), 2);
}

#[test]
fn a_body_the_server_reads_whole_is_unaffected() {
    let server = start(vec![Then::ReadBodyAndAnswer]);
    let client = client();
    let body = vec![b'y'; 4 * 1024 * 1024];
    let (status, content) = post(&client, &url(&server), &body).unwrap();
    assert_eq!((status, content.as_slice()), (200, &b"fresh"[..]));
}
