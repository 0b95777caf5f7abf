//! `nodelay-floor`: the benchmark lab's floor, a plain Rust HTTP/1.1 loop client.
//!
//! It does the least work an HTTP client can do and still be correct: one keep-alive
//! connection per worker, each request written with a single `write` on a socket with
//! `TCP_NODELAY`, a minimal response parser (status line, `Content-Length` or chunked)
//! reading into one reused 256 KiB buffer, and a check of every status and length.
//! Whatever a Python client spends above this loop is overhead.
//!
//! ```text
//! nodelay-floor --url http://127.0.0.1:PORT/path -n N [--method POST --data BODY]
//!               [--content-type TYPE] [--concurrency C] [--warmup W]
//!               [--expect-length BYTES] [--new-connection]
//! ```
//! Prints one JSON object: `{"requests", "seconds", "cpu_user", "cpu_sys", "bytes",
//! "errors", "protocol"}`. Loopback and `http://` only: it is a lab instrument.
//! Standard library only (the CPU figures come from `getrusage(2)`, declared here).

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

/// Read buffer size: reads of at least 64 KiB, like the client we measure against.
const READ_BUFFER_BYTES: usize = 256 * 1024;
/// A response head larger than this is treated as an error (RFC 9112 sets no limit;
/// our servers send ~150 bytes).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Socket read/write timeout: a stuck server ends the run instead of hanging it.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// Upper bound on `-n` and on workers, so a typo cannot start an endless run.
const MAX_REQUESTS: u64 = 100_000_000;
const MAX_CONCURRENCY: usize = 1024;

const USAGE: &str = "usage: nodelay-floor --url http://127.0.0.1:PORT/path -n N \
[--method M] [--data BODY] [--content-type T] [--concurrency C] [--warmup W] \
[--expect-length BYTES] [--new-connection]";

#[derive(Debug, Clone)]
struct Options {
    host: String,
    port: u16,
    path: String,
    requests: u64,
    warmup: u64,
    method: String,
    data: Option<String>,
    content_type: String,
    concurrency: usize,
    expect_length: Option<u64>,
    new_connection: bool,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    requests: u64,
    bytes: u64,
    errors: u64,
    minor_version: u8,
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => Arc::new(options),
        Err(message) => {
            eprintln!("nodelay-floor: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let request = Arc::new(encode_request(&options));
    let per_worker = split(options.requests, options.concurrency);
    // Workers warm up, then wait here with main; the clock starts when all are ready.
    let ready = Arc::new(Barrier::new(per_worker.len() + 1));
    let workers: Vec<_> = per_worker
        .into_iter()
        .map(|n| {
            let options = Arc::clone(&options);
            let request = Arc::clone(&request);
            let ready = Arc::clone(&ready);
            thread::spawn(move || worker(&options, &request, n, &ready))
        })
        .collect();
    ready.wait();
    let cpu0 = cpu_times();
    let start = Instant::now();
    let mut total = Tally::default();
    for handle in workers {
        match handle.join() {
            Ok(tally) => {
                total.requests += tally.requests;
                total.bytes += tally.bytes;
                total.errors += tally.errors;
                total.minor_version = total.minor_version.max(tally.minor_version);
            }
            Err(_) => total.errors += 1,
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu1 = cpu_times();
    println!(
        "{{\"requests\": {}, \"seconds\": {:.6}, \"cpu_user\": {:.6}, \"cpu_sys\": {:.6}, \
\"bytes\": {}, \"errors\": {}, \"protocol\": \"HTTP/1.{}\"}}",
        total.requests,
        seconds,
        cpu1.0 - cpu0.0,
        cpu1.1 - cpu0.1,
        total.bytes,
        total.errors,
        total.minor_version
    );
    if total.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `n` requests shared by `workers` as evenly as possible.
fn split(n: u64, workers: usize) -> Vec<u64> {
    let w = workers as u64;
    (0..w).map(|i| n / w + u64::from(i < n % w)).collect()
}

/// One worker: `--warmup` requests (not counted), a wait for every other worker, then
/// `n` timed requests on one keep-alive connection (or a new one each time).
fn worker(options: &Options, request: &[u8], n: u64, ready: &Barrier) -> Tally {
    let mut tally = Tally::default();
    let mut buf = vec![0u8; READ_BUFFER_BYTES];
    let mut conn: Option<TcpStream> = None;
    for _ in 0..options.warmup {
        if one(options, request, &mut conn, &mut buf).is_err() {
            conn = None;
        }
    }
    ready.wait();
    for _ in 0..n {
        match one(options, request, &mut conn, &mut buf) {
            Ok((len, minor)) => {
                tally.requests += 1;
                tally.bytes += len;
                tally.minor_version = minor;
            }
            Err(err) => {
                if tally.errors == 0 {
                    eprintln!("nodelay-floor: {err}");
                }
                tally.errors += 1;
                conn = None;
            }
        }
    }
    tally
}

/// Sends one request and reads its response; returns (body length, HTTP minor version).
fn one(
    options: &Options,
    request: &[u8],
    conn: &mut Option<TcpStream>,
    buf: &mut [u8],
) -> io::Result<(u64, u8)> {
    if conn.is_none() || options.new_connection {
        *conn = Some(connect(options)?);
    }
    let stream = conn.as_mut().expect("connected above");
    // One write per request: head and body were encoded into one buffer.
    stream.write_all(request)?;
    let (len, minor, keep) = read_response(stream, buf)?;
    if let Some(expected) = options.expect_length {
        if len != expected {
            return Err(other(format!("body of {len} bytes, expected {expected}")));
        }
    }
    if !keep || options.new_connection {
        *conn = None;
    }
    Ok((len, minor))
}

fn connect(options: &Options) -> io::Result<TcpStream> {
    let addr = (options.host.as_str(), options.port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| other("no address".into()))?;
    let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(stream)
}

fn encode_request(options: &Options) -> Vec<u8> {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: nodelay-floor\r\nAccept: */*\r\n",
        options.method, options.path, options.host, options.port
    );
    if options.new_connection {
        head.push_str("Connection: close\r\n");
    }
    let body = options.data.as_deref().unwrap_or("");
    if options.data.is_some() {
        head.push_str(&format!(
            "Content-Type: {}\r\nContent-Length: {}\r\n",
            options.content_type,
            body.len()
        ));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Reads one response: returns (body bytes, HTTP minor version, keep-alive?).
/// Anything but status 200 is an error.
fn read_response(stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<(u64, u8, bool)> {
    let mut filled = 0;
    let head_end = loop {
        if let Some(pos) = find(&buf[..filled], b"\r\n\r\n") {
            break pos + 4;
        }
        if filled >= MAX_HEAD_BYTES.min(buf.len()) {
            return Err(other("response head too large".into()));
        }
        let n = stream.read(&mut buf[filled..])?;
        if n == 0 {
            return Err(other("connection closed before the response head".into()));
        }
        filled += n;
    };
    let head = std::str::from_utf8(&buf[..head_end])
        .map_err(|_| other("response head is not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let minor = match status_line.get(..9) {
        Some("HTTP/1.1 ") => 1,
        Some("HTTP/1.0 ") => 0,
        _ => return Err(other(format!("bad status line {status_line:?}"))),
    };
    let status = status_line.get(9..12).unwrap_or("");
    if status != "200" {
        return Err(other(format!("status {status}")));
    }
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut keep = minor == 1;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse()
                    .map_err(|_| other("bad Content-Length".into()))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().ends_with("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            let value = value.to_ascii_lowercase();
            keep = if value.contains("close") {
                false
            } else {
                keep || value.contains("keep-alive")
            };
        }
    }
    // Move the body bytes already read to the front of the buffer.
    buf.copy_within(head_end..filled, 0);
    let already = filled - head_end;
    if chunked {
        let len = read_chunked(stream, buf, already)?;
        return Ok((len, minor, keep));
    }
    let Some(length) = length else {
        return Err(other(
            "response without Content-Length (close-delimited)".into(),
        ));
    };
    let mut remaining = length.saturating_sub(already as u64);
    if already as u64 > length {
        return Err(other("more bytes than Content-Length (pipelining?)".into()));
    }
    while remaining > 0 {
        let want = usize::try_from(remaining)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = stream.read(&mut buf[..want])?;
        if n == 0 {
            return Err(other("connection closed inside the body".into()));
        }
        remaining -= n as u64;
    }
    Ok((length, minor, keep))
}

/// Reads a chunked body whose first `filled` bytes are at the start of `buf`.
fn read_chunked(stream: &mut TcpStream, buf: &mut [u8], mut filled: usize) -> io::Result<u64> {
    let mut total: u64 = 0;
    let mut pos = 0;
    loop {
        // Chunk-size line.
        let line_end = loop {
            if let Some(i) = find(&buf[pos..filled], b"\r\n") {
                break pos + i;
            }
            compact(buf, &mut pos, &mut filled);
            if filled == buf.len() {
                return Err(other("chunk-size line too long".into()));
            }
            let n = stream.read(&mut buf[filled..])?;
            if n == 0 {
                return Err(other("connection closed inside a chunked body".into()));
            }
            filled += n;
        };
        let line = std::str::from_utf8(&buf[pos..line_end]).unwrap_or("");
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(size_text, 16)
            .map_err(|_| other(format!("bad chunk size {size_text:?}")))?;
        pos = line_end + 2;
        if size == 0 {
            // No trailers from our servers: expect the final CRLF.
            while filled - pos < 2 {
                compact(buf, &mut pos, &mut filled);
                let n = stream.read(&mut buf[filled..])?;
                if n == 0 {
                    return Err(other("connection closed before the last CRLF".into()));
                }
                filled += n;
            }
            return Ok(total);
        }
        total += size;
        // Skip the chunk data plus its CRLF.
        let mut skip = size + 2;
        loop {
            let available = (filled - pos) as u64;
            if available >= skip {
                pos += skip as usize;
                break;
            }
            skip -= available;
            pos = 0;
            let n = stream.read(buf)?;
            if n == 0 {
                return Err(other("connection closed inside a chunk".into()));
            }
            filled = n;
        }
    }
}

fn compact(buf: &mut [u8], pos: &mut usize, filled: &mut usize) {
    buf.copy_within(*pos..*filled, 0);
    *filled -= *pos;
    *pos = 0;
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn other(message: String) -> io::Error {
    io::Error::other(message)
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut url: Option<String> = None;
    let mut options = Options {
        host: String::new(),
        port: 80,
        path: "/".into(),
        requests: 1000,
        warmup: 0,
        method: "GET".into(),
        data: None,
        content_type: "application/x-www-form-urlencoded".into(),
        concurrency: 1,
        expect_length: None,
        new_connection: false,
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--url" => url = Some(value("--url")?),
            "-n" | "--requests" => options.requests = number(&value("-n")?)?,
            "--warmup" => options.warmup = number(&value("--warmup")?)?,
            "--method" | "-X" => options.method = value("--method")?,
            "--data" | "-d" => options.data = Some(value("--data")?),
            "--content-type" => options.content_type = value("--content-type")?,
            "--concurrency" | "-c" => {
                options.concurrency = usize::try_from(number(&value("--concurrency")?)?)
                    .map_err(|_| "bad --concurrency".to_string())?;
            }
            "--expect-length" => options.expect_length = Some(number(&value("--expect-length")?)?),
            "--new-connection" => options.new_connection = true,
            "-h" | "--help" => return Err("help".into()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let url = url.ok_or("--url is required")?;
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
            (h, p.parse::<u16>().map_err(|_| format!("bad port {p:?}"))?)
        }
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if !is_loopback(host) {
        return Err(format!(
            "{host} is not a loopback address: the floor only measures loopback"
        ));
    }
    options.host = host.to_string();
    options.port = port;
    options.path = path.to_string();
    if options.requests == 0 || options.requests > MAX_REQUESTS {
        return Err(format!("-n must be in 1..={MAX_REQUESTS}"));
    }
    if options.concurrency == 0 || options.concurrency > MAX_CONCURRENCY {
        return Err(format!("--concurrency must be in 1..={MAX_CONCURRENCY}"));
    }
    options.concurrency = options
        .concurrency
        .min(usize::try_from(options.requests).unwrap_or(1));
    Ok(options)
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

fn number(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| format!("not a number: {text:?}"))
}

/// (user, system) CPU seconds of this process so far.
#[cfg(target_os = "linux")]
fn cpu_times() -> (f64, f64) {
    #[repr(C)]
    struct Timeval {
        sec: i64,
        usec: i64,
    }
    #[repr(C)]
    struct Rusage {
        utime: Timeval,
        stime: Timeval,
        rest: [i64; 14],
    }
    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
    const RUSAGE_SELF: i32 = 0;
    let mut usage = Rusage {
        utime: Timeval { sec: 0, usec: 0 },
        stime: Timeval { sec: 0, usec: 0 },
        rest: [0; 14],
    };
    // SAFETY: `usage` is a valid, writable `struct rusage` for 64-bit Linux (two
    // timevals of two i64 each, then 14 longs); getrusage writes only inside it.
    let rc = unsafe { getrusage(RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: &Timeval| t.sec as f64 + t.usec as f64 / 1e6;
    (secs(&usage.utime), secs(&usage.stime))
}

#[cfg(not(target_os = "linux"))]
fn cpu_times() -> (f64, f64) {
    (0.0, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_requests_evenly() {
        assert_eq!(split(10, 3), vec![4, 3, 3]);
        assert_eq!(split(2, 1), vec![2]);
    }

    #[test]
    fn refuses_non_loopback_hosts() {
        let args = ["--url", "http://10.0.0.1:80/", "-n", "1"].map(String::from);
        assert!(parse_args(args.into_iter()).is_err());
        let args = ["--url", "http://127.0.0.1:8080/bytes/2", "-n", "3"].map(String::from);
        let options = parse_args(args.into_iter()).unwrap();
        assert_eq!((options.port, options.path.as_str()), (8080, "/bytes/2"));
    }

    #[test]
    fn encodes_post_in_one_buffer() {
        let args = [
            "--url",
            "http://127.0.0.1:1/echo",
            "--method",
            "POST",
            "--data",
            "a=1",
        ]
        .map(String::from);
        let options = parse_args(args.into_iter()).unwrap();
        let text = String::from_utf8(encode_request(&options)).unwrap();
        assert!(text.starts_with("POST /echo HTTP/1.1\r\n"));
        assert!(text.ends_with("Content-Length: 3\r\n\r\na=1"));
    }
}
