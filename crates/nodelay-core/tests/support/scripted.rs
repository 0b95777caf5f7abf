//! The raw-socket server of the HTTP/1.1 integration tests: connection `i`
//! plays script `i`, a list of [`Step`]s (read a request, write exact bytes,
//! sleep, close, reset, hang), and every request it reads is recorded byte
//! for byte. A test file says `#[path = "support/scripted.rs"] mod scripted;`.
//!
//! A script that ends closes its connection (FIN); a connection beyond the
//! scripts is closed at once. Dropping the [`Server`] stops every connection
//! that still hangs or drips.

// Each test binary uses its own subset.
#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a read of the server waits for the client: a test that stops
/// sending leaves no thread behind for longer.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest a `Hang` step holds its connection when the test never ends it.
const HANG_AT_MOST: Duration = Duration::from_secs(20);

/// How long `Server::wait_for_steps` waits for a script to reach a step.
const STEP_WAIT: Duration = Duration::from_secs(5);

/// One thing a scripted connection does.
#[derive(Clone, Debug)]
pub enum Step {
    /// Read one request (head, then a Content-Length or chunked body) and
    /// record its bytes.
    ReadRequest,
    /// Read one request head only, leaving any body unread, and record it.
    ReadHead,
    /// Read and throw away the Content-Length body of the head `ReadHead`
    /// read last (bytes already buffered count).
    DiscardBody,
    /// Write these bytes.
    Write(Vec<u8>),
    /// Write these bytes one at a time, `Duration` apart, until the test ends.
    Drip(Vec<u8>, Duration),
    /// Do nothing for this long.
    Sleep(Duration),
    /// Send FIN and read nothing more (the connection stays until the script ends).
    ShutdownWrite,
    /// Close with FIN.
    Close,
    /// Close with RST (SO_LINGER 0).
    Reset,
    /// Keep the connection open, doing nothing, until the test ends.
    Hang,
}

use Step::*;

/// A `Write` step of these bytes.
pub fn write(bytes: impl AsRef<[u8]>) -> Step {
    Write(bytes.as_ref().to_vec())
}

/// A 200 response with this body and its Content-Length.
pub fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Where `needle` first starts in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    /// (connection index, exact request bytes) in arrival order.
    requests: Mutex<Vec<(usize, Vec<u8>)>>,
    accepted: AtomicUsize,
    /// Steps finished per connection, to wait for a script to reach a point.
    steps_done: Mutex<Vec<usize>>,
}

/// A loopback server playing one script per accepted connection.
pub struct Server {
    port: u16,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Listens on a loopback port; connection `i` plays `scripts[i]`.
    pub fn start(scripts: Vec<Vec<Step>>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Seen::default());
        let stop = Arc::new(AtomicBool::new(false));
        seen.steps_done.lock().unwrap().resize(scripts.len(), 0);
        {
            let seen = Arc::clone(&seen);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let index = seen.accepted.fetch_add(1, Ordering::SeqCst);
                    let script = scripts.get(index).cloned().unwrap_or_else(|| vec![Close]);
                    let seen = Arc::clone(&seen);
                    let stop = Arc::clone(&stop);
                    thread::spawn(move || play(stream, index, &script, &seen, &stop));
                }
            });
        }
        Server { port, seen, stop }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// An `http://` URL of this server with this path.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.seen.accepted.load(Ordering::SeqCst)
    }

    /// Every request read so far: (connection index, exact bytes).
    pub fn requests(&self) -> Vec<(usize, Vec<u8>)> {
        self.seen.requests.lock().unwrap().clone()
    }

    /// Waits (bounded) until connection `index` has finished `steps` steps.
    pub fn wait_for_steps(&self, index: usize, steps: usize) {
        let until = Instant::now() + STEP_WAIT;
        while self
            .seen
            .steps_done
            .lock()
            .unwrap()
            .get(index)
            .copied()
            .unwrap_or(0)
            < steps
        {
            assert!(
                Instant::now() < until,
                "server script {index} never reached step {steps}"
            );
            thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so its thread ends.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn play(mut stream: TcpStream, index: usize, script: &[Step], seen: &Seen, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let mut pending = Vec::new();
    // The body `ReadHead` left unread, for `DiscardBody`.
    let mut unread_body = 0;
    for step in script {
        let alive = match step {
            ReadRequest | ReadHead => {
                match read_request(&mut stream, &mut pending, matches!(step, ReadRequest)) {
                    Some((request, body_len)) => {
                        seen.requests.lock().unwrap().push((index, request));
                        unread_body = body_len;
                        true
                    }
                    None => false,
                }
            }
            DiscardBody => discard(&mut stream, &mut pending, unread_body),
            Write(bytes) => stream.write_all(bytes).is_ok(),
            Drip(bytes, every) => {
                for b in bytes.iter().cycle() {
                    if stop.load(Ordering::SeqCst) || stream.write_all(&[*b]).is_err() {
                        break;
                    }
                    thread::sleep(*every);
                }
                false
            }
            Sleep(d) => {
                thread::sleep(*d);
                true
            }
            ShutdownWrite => stream.shutdown(Shutdown::Write).is_ok(),
            Close => {
                let _ = stream.shutdown(Shutdown::Both);
                false
            }
            Reset => {
                reset(&stream);
                false
            }
            Hang => {
                let until = Instant::now() + HANG_AT_MOST;
                while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                    thread::sleep(Duration::from_millis(5));
                }
                false
            }
        };
        if let Some(done) = seen.steps_done.lock().unwrap().get_mut(index) {
            *done += 1;
        }
        if !alive {
            // Dropping the stream closes it (after `Reset`, SO_LINGER 0 makes
            // that an RST).
            return;
        }
    }
}

/// Sets SO_LINGER 0, so closing the socket sends RST.
fn reset(stream: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket fd and a pointer to a live `linger` of the size given.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            std::ptr::addr_of!(linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_LINGER");
}

/// Reads one request: the head up to the blank line, then (`with_body`) its
/// Content-Length or chunked body. Bytes past it stay in `pending`. Returns
/// the request's bytes and the length of the body it left unread.
fn read_request(
    stream: &mut TcpStream,
    pending: &mut Vec<u8>,
    with_body: bool,
) -> Option<(Vec<u8>, usize)> {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if let Some(head_len) = find(pending, b"\r\n\r\n").map(|end| end + 4) {
            if !with_body {
                let body_len = content_length(&pending[..head_len]);
                return Some((pending.drain(..head_len).collect(), body_len));
            }
            if let Some(len) = complete_request_len(pending, head_len) {
                return Some((pending.drain(..len).collect(), 0));
            }
        }
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        pending.extend_from_slice(&chunk[..n]);
    }
}

/// A head's Content-Length (0 without one).
fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .to_ascii_lowercase()
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| {
            v.trim()
                .parse::<usize>()
                .expect("test requests have valid lengths")
        })
}

/// Length of the complete request at the start of `buf`, whose head is
/// `head_len` bytes, if all of its body is there.
fn complete_request_len(buf: &[u8], head_len: usize) -> Option<usize> {
    let head = String::from_utf8_lossy(&buf[..head_len]).to_ascii_lowercase();
    if head.contains("\r\ntransfer-encoding: chunked\r\n") {
        // Walk the chunks: size line, data, CRLF, until the zero-size chunk.
        let mut at = head_len;
        loop {
            let line_end = at + find(&buf[at..], b"\r\n")?;
            let size = usize::from_str_radix(std::str::from_utf8(&buf[at..line_end]).ok()?, 16)
                .expect("valid chunk size");
            if size == 0 {
                let end = line_end + 4; // "\r\n" ending the size line + the final "\r\n"
                return (buf.len() >= end).then_some(end);
            }
            at = line_end + 2 + size + 2;
            if buf.len() < at {
                return None;
            }
        }
    }
    let end = head_len + content_length(&buf[..head_len]);
    (buf.len() >= end).then_some(end)
}

/// Reads `len` body bytes (those already in `pending` first) and drops them;
/// false when the client closed first.
fn discard(stream: &mut TcpStream, pending: &mut Vec<u8>, len: usize) -> bool {
    let buffered = pending.len().min(len);
    pending.drain(..buffered);
    let mut left = len - buffered;
    let mut chunk = vec![0u8; 64 * 1024];
    while left > 0 {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
    true
}
