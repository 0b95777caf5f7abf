//! A server that answers before the request body is complete (413 Content Too
//! Large and the like) and stops reading: the client returns that answer, as
//! curl and browsers do, instead of a write error, and never reuses the
//! connection. Raw-socket server on loopback; exact bytes both ways.

mod support;

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::{
    BodySource, Client, Error, Exchange, NeverInterrupt, PoolConfig, RequestParts, StreamFraming,
    Timeouts,
};

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

struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
    heads: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
}

impl Server {
    /// Connection `i` does `scripts[i]` with its first request.
    fn start(scripts: Vec<Then>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (counter, seen) = (Arc::clone(&accepted), Arc::clone(&heads));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let index = counter.fetch_add(1, Ordering::SeqCst);
                let Some(&then) = scripts.get(index) else {
                    return;
                };
                let seen = Arc::clone(&seen);
                thread::spawn(move || serve(stream, then, &seen));
            }
        });
        Server {
            port,
            accepted,
            heads,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/upload", self.port)
    }
}

fn serve(mut stream: TcpStream, then: Then, heads: &std::sync::Mutex<Vec<Vec<u8>>>) {
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    };
    heads.lock().unwrap().push(pending[..head_end].to_vec());
    match then {
        Then::AnswerAndClose => {
            let _ = stream.write_all(ANSWER_413);
            drop(stream);
        }
        Then::AnswerAndHold => {
            let _ = stream.write_all(ANSWER_413);
            thread::sleep(Duration::from_secs(8));
        }
        Then::ReadBodyAndAnswer => {
            let head = String::from_utf8_lossy(&pending[..head_end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            let mut body = pending.len() - head_end;
            while body < length {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => body += n,
                }
            }
            let _ = stream.write_all(ANSWER_OK);
            let _ = stream.shutdown(Shutdown::Write);
            thread::sleep(Duration::from_millis(200));
        }
    }
}

fn client() -> Client {
    Client::new(PoolConfig {
        max_connections: None,
        max_keepalive: Some(10),
        keepalive_expiry: None,
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
    let server = Server::start(vec![Then::AnswerAndClose, Then::ReadBodyAndAnswer]);
    let client = client();
    let body = vec![b'x'; LARGE];
    let started = Instant::now();
    let (status, content) = post(&client, &server.url(), &body).unwrap();
    assert_eq!((status, content.as_slice()), (413, &b"too big!"[..]));
    assert!(started.elapsed() < Duration::from_secs(4));
    let head = server.heads.lock().unwrap()[0].clone();
    let expected = format!(
        "POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {LARGE}\r\n\r\n",
        server.port
    );
    assert_eq!(String::from_utf8_lossy(&head), expected);
    // The next request goes out on a new connection.
    let (status, content) = post(&client, &server.url(), b"small").unwrap();
    assert_eq!((status, content.as_slice()), (200, &b"fresh"[..]));
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn streamed_body_stops_when_the_server_answers_and_holds() {
    let server = Server::start(vec![Then::AnswerAndHold, Then::ReadBodyAndAnswer]);
    let client = client();
    let pulled = Arc::new(AtomicUsize::new(0));
    let mut source = Pieces {
        left: LARGE,
        piece: 256 * 1024,
        pulled: Arc::clone(&pulled),
    };
    let started = Instant::now();
    let (status, content) =
        post_streamed(&client, &server.url(), StreamFraming::Chunked, &mut source).unwrap();
    assert_eq!((status, content.as_slice()), (413, &b"too big!"[..]));
    // Well before the 5 s write timeout that a blocked upload would run into.
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(
        pulled.load(Ordering::SeqCst) < LARGE,
        "the whole body was pulled although the server had answered"
    );
    let (status, _) = post(&client, &server.url(), b"again").unwrap();
    assert_eq!(status, 200);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn streamed_body_answered_early_and_closed_returns_the_answer() {
    let server = Server::start(vec![Then::AnswerAndClose, Then::ReadBodyAndAnswer]);
    let client = client();
    let mut source = Pieces {
        left: LARGE,
        piece: 256 * 1024,
        pulled: Arc::new(AtomicUsize::new(0)),
    };
    let (status, content) = post_streamed(
        &client,
        &server.url(),
        StreamFraming::Length(LARGE as u64),
        &mut source,
    )
    .unwrap();
    assert_eq!((status, content.as_slice()), (413, &b"too big!"[..]));
    let (status, _) = post(&client, &server.url(), b"again").unwrap();
    assert_eq!(status, 200);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn a_body_the_server_reads_whole_is_unaffected() {
    let server = Server::start(vec![Then::ReadBodyAndAnswer]);
    let client = client();
    let body = vec![b'y'; 4 * 1024 * 1024];
    let (status, content) = post(&client, &server.url(), &body).unwrap();
    assert_eq!((status, content.as_slice()), (200, &b"fresh"[..]));
}
