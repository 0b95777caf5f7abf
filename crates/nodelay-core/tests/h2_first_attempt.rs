//! The HTTP/2 attempt of a request and its fallback to HTTP/1.1, through
//! every driver that runs it: the sync client with a body in bytes and
//! streamed, the async client likewise, and a batch's `fetch`. Each must
//! speak HTTP/2 first where the request may (h2c by prior knowledge, h2 when
//! ALPN picks it), fall back to HTTP/1.1 on the very connection ALPN made
//! when the server picks `http/1.1` (the server receives exactly the
//! request's HTTP/1.1 bytes on it), keep `http` URLs on HTTP/1.1 when only
//! negotiating, and send a refused stream (RST_STREAM REFUSED_STREAM) again
//! once, on the same connection, never twice.

#[path = "support/h2_peer.rs"]
mod h2_peer;
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use h2_peer::{scripted, Peer, Script, DATA, END_STREAM, REFUSED_STREAM, RST_STREAM};
use nodelay_core::aio::{AsyncClient, BodyPump};
use nodelay_core::batch::{fetch, HeldConnection};
use nodelay_core::{
    runtime, BodySource, Client, Error, ErrorKind, Http2Mode, NeverInterrupt, ProxySettings,
    RequestParts, StreamFraming, Timeouts, TlsOptions, Version,
};
use nodelay_server::{ServerConfig, ServerHandle, TlsIdentity};

/// Every way a request is run, each with its own clients.
#[derive(Clone, Copy, Debug)]
enum Driver {
    SyncBytes,
    SyncStreamed,
    AsyncBytes,
    AsyncStreamed,
    Batch,
}

const DRIVERS: [Driver; 5] = [
    Driver::SyncBytes,
    Driver::SyncStreamed,
    Driver::AsyncBytes,
    Driver::AsyncStreamed,
    Driver::Batch,
];

/// The body every request here carries (a POST: never resent unless the
/// server did not process it).
const BODY: &[u8] = b"payload of the request";

/// Cap on a decoded body for the batch's whole read.
const MAX_DECODED_BYTES: u64 = 1 << 20;

/// The answer of a request, and the bytes its HTTP/1.1 form puts on the wire
/// (head and body) when it goes over HTTP/1.1.
struct Outcome {
    version: Version,
    status: u16,
    body: Vec<u8>,
    http1_bytes: Vec<u8>,
}

/// A sync client and an async client of one mode, trusting the test CA.
struct Clients {
    sync: Client,
    aio: AsyncClient,
}

fn tls() -> TlsOptions {
    TlsOptions {
        ca_file: Some(support::ca_file()),
        ..TlsOptions::default()
    }
}

fn clients(mode: Http2Mode) -> Clients {
    let config = support::pool(Some(10), 10);
    Clients {
        sync: Client::with_http2(config, tls(), mode),
        aio: AsyncClient::with_options(config, tls(), mode, &ProxySettings::default()).unwrap(),
    }
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(5))
}

/// [`BODY`] in two pieces, able to start over.
struct Pieces {
    next: usize,
}

impl Pieces {
    const SPLIT: usize = 7;

    fn new() -> Pieces {
        Pieces { next: 0 }
    }
}

impl BodySource for Pieces {
    fn next_chunk<'a>(&'a mut self, _buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        let piece = match self.next {
            0 => Some(&BODY[..Self::SPLIT]),
            1 => Some(&BODY[Self::SPLIT..]),
            _ => None,
        };
        self.next += 1;
        Ok(piece)
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        self.next = 0;
        Ok(true)
    }
}

fn parts(url: &str) -> RequestParts<'_> {
    RequestParts {
        method: "POST",
        url,
        headers: &[("User-Agent", "nodelay-test")],
        body: Some(BODY),
    }
}

/// POSTs [`BODY`] to `url` through `driver`.
fn post(driver: Driver, clients: &Clients, url: &str) -> Result<Outcome, Error> {
    let streamed = StreamFraming::Length(BODY.len() as u64);
    match driver {
        Driver::SyncBytes | Driver::SyncStreamed => {
            let client = &clients.sync;
            let (prepared, mut exchange) = if matches!(driver, Driver::SyncBytes) {
                let prepared = client.prepare(&parts(url))?;
                let exchange = client.send(&prepared, Some(BODY), timeouts(), &NeverInterrupt)?;
                (prepared, exchange)
            } else {
                let prepared = client.prepare_streamed(&parts(url), streamed)?;
                let mut source = Pieces::new();
                let exchange =
                    client.send_streamed(&prepared, &mut source, timeouts(), &NeverInterrupt)?;
                (prepared, exchange)
            };
            let mut body = Vec::new();
            exchange.read_to_end(&mut body, &NeverInterrupt)?;
            let (version, status) = (exchange.version(), exchange.status());
            // Read to its end: an HTTP/1.1 connection goes back to the pool.
            exchange.finish();
            Ok(Outcome {
                version,
                status,
                body,
                http1_bytes: http1_bytes(prepared.wire(), prepared.body_inlined()),
            })
        }
        Driver::AsyncBytes | Driver::AsyncStreamed => runtime::handle().block_on(async {
            let client = &clients.aio;
            let (prepared, exchange) = if matches!(driver, Driver::AsyncBytes) {
                let prepared = client.prepare(&parts(url))?;
                let exchange = client.send(&prepared, Some(BODY), timeouts()).await?;
                (prepared, exchange)
            } else {
                let prepared = client.prepare_streamed(&parts(url), streamed)?;
                let mut pump = BodyPump::spawn(|server| server.serve(&mut Pieces::new(), |_| {}));
                let sent = client.send_streamed(&prepared, &mut pump, timeouts()).await;
                pump.finish().await;
                (prepared, sent?)
            };
            let (version, status) = (exchange.version(), exchange.status());
            let body = exchange.read_whole(MAX_DECODED_BYTES).await?.body;
            Ok(Outcome {
                version,
                status,
                body,
                http1_bytes: http1_bytes(prepared.wire(), prepared.body_inlined()),
            })
        }),
        Driver::Batch => runtime::handle().block_on(async {
            let client = &clients.sync;
            let prepared = client.prepare(&parts(url))?;
            let mut held = HeldConnection::default();
            let fetched = fetch(
                client,
                &mut held,
                &prepared,
                Some(BODY),
                timeouts(),
                MAX_DECODED_BYTES,
            )
            .await;
            held.release();
            let fetched = fetched?;
            Ok(Outcome {
                version: fetched.version,
                status: fetched.status,
                body: fetched.body,
                http1_bytes: http1_bytes(prepared.wire(), prepared.body_inlined()),
            })
        }),
    }
}

/// What goes on the wire for a request over HTTP/1.1: its encoded head, and
/// [`BODY`] behind it unless it was inlined.
fn http1_bytes(wire: &[u8], inlined: bool) -> Vec<u8> {
    let mut bytes = wire.to_vec();
    if !inlined {
        bytes.extend_from_slice(BODY);
    }
    bytes
}

// ------------------------------------------------------------ HTTP/1.1 peer

/// What an HTTP/1.1 peer saw: per connection, the raw bytes of each request.
type Seen = Arc<Mutex<Vec<Vec<Vec<u8>>>>>;

/// An HTTP/1.1 server, over TLS offering only `http/1.1` by ALPN when `tls`,
/// that records each request's exact bytes and answers `200` with body
/// `ok`, keeping the connection open.
fn http1_peer(tls: bool) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = match tls {
        true => format!("https://localhost:{port}/upload"),
        false => format!("http://127.0.0.1:{port}/upload"),
    };
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    let config = tls.then(tls_config);
    thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(sock) = sock else { return };
            sock.set_read_timeout(Some(h2_peer::DEADLINE)).unwrap();
            let record = Arc::clone(&record);
            let index = {
                let mut seen = record.lock().unwrap();
                seen.push(Vec::new());
                seen.len() - 1
            };
            let config = config.clone();
            thread::spawn(move || match config {
                Some(config) => {
                    let conn = rustls::ServerConnection::new(config).unwrap();
                    serve_http1(rustls::StreamOwned::new(conn, sock), &record, index);
                }
                None => serve_http1(sock, &record, index),
            });
        }
    });
    (url, seen)
}

/// The test identity, offering only `http/1.1` by ALPN.
fn tls_config() -> Arc<rustls::ServerConfig> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let identity = TlsIdentity::localhost();
    let chain = CertificateDer::pem_slice_iter(&identity.cert_chain_pem)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// Reads requests (head, then a `Content-Length` body) until the client
/// leaves, recording each one's bytes and answering each.
fn serve_http1(mut sock: impl Read + Write, seen: &Seen, index: usize) {
    let mut buf = Vec::new();
    let mut piece = [0u8; 4096];
    loop {
        let Some(end) = find(&buf, b"\r\n\r\n").map(|at| at + 4) else {
            match sock.read(&mut piece) {
                Ok(n) if n > 0 => buf.extend_from_slice(&piece[..n]),
                _ => return,
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .map_or(0, |n| n.trim().parse().unwrap());
        while buf.len() < end + length {
            match sock.read(&mut piece) {
                Ok(n) if n > 0 => buf.extend_from_slice(&piece[..n]),
                _ => return,
            }
        }
        let request: Vec<u8> = buf.drain(..end + length).collect();
        seen.lock().unwrap()[index].push(request);
        let answered = sock
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .and_then(|()| sock.flush());
        if answered.is_err() {
            return;
        }
    }
}

/// Requests per connection as text, for readable failures.
fn printable(connections: &[Vec<Vec<u8>>]) -> Vec<Vec<String>> {
    connections
        .iter()
        .map(|requests| {
            requests
                .iter()
                .map(|r| String::from_utf8_lossy(r).into_owned())
                .collect()
        })
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ------------------------------------------------------------ HTTP/2 peers

/// The exact body of the stream `stream` (DATA frames of other streams
/// skipped) until its END_STREAM; `None` when the client reset it or left.
fn body_of(peer: &mut Peer, stream: u32) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let frame = peer.read_frame()?;
        match frame.kind {
            DATA if frame.stream == stream => {
                body.extend_from_slice(&frame.payload);
                if frame.flags & END_STREAM != 0 {
                    return Some(body);
                }
            }
            RST_STREAM if frame.stream == stream => return None,
            _ => {}
        }
    }
}

/// Bodies an HTTP/2 peer received, in order.
type Bodies = Arc<Mutex<Vec<Vec<u8>>>>;

/// One connection that checks the client's preface (the first bytes on the
/// connection: HTTP/2 by prior knowledge, no HTTP/1.1 upgrade), refuses
/// the first `refusals` requests with RST_STREAM REFUSED_STREAM, and answers
/// each later one with `ok`, recording its body.
fn h2_peer_refusing(refusals: usize, bodies: &Bodies) -> Script {
    let bodies = Arc::clone(bodies);
    Box::new(move |peer| {
        peer.handshake(&[]);
        let mut refused = 0;
        while let Some(stream) = peer.next_request() {
            if refused < refusals {
                refused += 1;
                peer.write_frame(RST_STREAM, 0, stream, &REFUSED_STREAM.to_be_bytes());
                continue;
            }
            let Some(body) = body_of(peer, stream) else {
                continue;
            };
            bodies.lock().unwrap().push(body);
            peer.respond(stream, b"ok");
        }
    })
}

fn embedded(http2: bool, tls: bool) -> ServerHandle {
    nodelay_server::start(ServerConfig {
        http2,
        tls: tls.then(TlsIdentity::localhost),
        ..ServerConfig::default()
    })
    .expect("start the embedded server")
}

// ------------------------------------------------------------ the cases

#[test]
fn prior_knowledge_speaks_h2c_from_the_first_byte() {
    for driver in DRIVERS {
        let bodies = Bodies::default();
        let server = scripted(vec![h2_peer_refusing(0, &bodies)]);
        let clients = clients(Http2Mode::PriorKnowledge);
        let url = format!("{}/upload", server.url);
        for _ in 0..2 {
            let got = post(driver, &clients, &url).unwrap_or_else(|e| panic!("{driver:?}: {e}"));
            assert_eq!(got.version, Version::Http2, "{driver:?}");
            assert_eq!((got.status, got.body.as_slice()), (200, &b"ok"[..]));
        }
        assert_eq!(
            *bodies.lock().unwrap(),
            vec![BODY.to_vec(); 2],
            "{driver:?}"
        );
        assert_eq!(server.connections(), 1, "{driver:?}: one shared connection");
    }
}

#[test]
fn alpn_choosing_h2_makes_the_request_go_over_http2() {
    for driver in DRIVERS {
        let server = embedded(true, true);
        let clients = clients(Http2Mode::Negotiate);
        let url = format!("{}/echo", server.url());
        for _ in 0..2 {
            let got = post(driver, &clients, &url).unwrap_or_else(|e| panic!("{driver:?}: {e}"));
            assert_eq!(got.version, Version::Http2, "{driver:?}");
            assert_eq!((got.status, got.body.as_slice()), (200, BODY), "{driver:?}");
        }
        assert_eq!(server.connections_accepted(), 1, "{driver:?}");
    }
}

#[test]
fn alpn_choosing_http1_sends_the_http1_bytes_on_the_connection_it_made() {
    for driver in DRIVERS {
        let (url, seen) = http1_peer(true);
        let clients = clients(Http2Mode::Negotiate);
        let mut expected = Vec::new();
        for _ in 0..2 {
            let got = post(driver, &clients, &url).unwrap_or_else(|e| panic!("{driver:?}: {e}"));
            assert_eq!(got.version, Version::Http11, "{driver:?}");
            assert_eq!((got.status, got.body.as_slice()), (200, &b"ok"[..]));
            expected.push(got.http1_bytes);
        }
        assert!(
            expected[0].starts_with(b"POST /upload HTTP/1.1\r\n"),
            "{driver:?}"
        );
        // One connection, the one ALPN made, carrying each request exactly
        // as encoded.
        assert_eq!(
            printable(&seen.lock().unwrap()),
            printable(&[expected]),
            "{driver:?}"
        );
    }
}

#[test]
fn http_urls_stay_on_http1_when_only_negotiating() {
    for driver in DRIVERS {
        let (url, seen) = http1_peer(false);
        let clients = clients(Http2Mode::Negotiate);
        let mut expected = Vec::new();
        for _ in 0..2 {
            let got = post(driver, &clients, &url).unwrap_or_else(|e| panic!("{driver:?}: {e}"));
            assert_eq!(got.version, Version::Http11, "{driver:?}");
            expected.push(got.http1_bytes);
        }
        assert_eq!(
            printable(&seen.lock().unwrap()),
            printable(&[expected]),
            "{driver:?}"
        );
    }
}

#[test]
fn a_refused_stream_goes_again_once_on_the_same_connection() {
    for driver in DRIVERS {
        let bodies = Bodies::default();
        let server = scripted(vec![h2_peer_refusing(1, &bodies)]);
        let clients = clients(Http2Mode::PriorKnowledge);
        let got = post(driver, &clients, &format!("{}/upload", server.url))
            .unwrap_or_else(|e| panic!("{driver:?}: {e}"));
        assert_eq!((got.status, got.body.as_slice()), (200, &b"ok"[..]));
        assert_eq!(*bodies.lock().unwrap(), vec![BODY.to_vec()], "{driver:?}");
        assert_eq!(server.connections(), 1, "{driver:?}");
    }
}

#[test]
fn a_stream_refused_twice_is_an_error_not_a_loop() {
    for driver in DRIVERS {
        let bodies = Bodies::default();
        let server = scripted(vec![h2_peer_refusing(2, &bodies)]);
        let clients = clients(Http2Mode::PriorKnowledge);
        let Err(error) = post(driver, &clients, &format!("{}/upload", server.url)) else {
            panic!("{driver:?}: a request refused twice succeeded");
        };
        assert_eq!(
            error.kind(),
            ErrorKind::RemoteProtocol,
            "{driver:?}: {error:?}"
        );
        assert!(bodies.lock().unwrap().is_empty(), "{driver:?}");
        assert_eq!(server.connections(), 1, "{driver:?}");
    }
}
