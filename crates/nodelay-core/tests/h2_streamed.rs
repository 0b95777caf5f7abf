//! Streamed request bodies (a `BodySource`) over HTTP/2 on the sync client:
//! against the embedded server by prior knowledge and by ALPN, on the one
//! connection the client shares, under flow control; and against a scripted
//! frame-level server: a window that never opens is a write timeout, a
//! refused stream goes again only when the body can start over, a failing
//! source resets its stream (never ends it as if the body were whole).

#[path = "support/h2_peer.rs"]
mod h2_peer;
mod support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use h2_peer::{
    scripted, Peer, Script, CANCEL, DATA, DEFAULT_WINDOW, END_STREAM, HEADERS, REFUSED_STREAM,
    RST_STREAM, SETTINGS_INITIAL_WINDOW_SIZE,
};
use nodelay_core::{
    BodySource, Client, Error, ErrorKind, Http2Mode, NeverInterrupt, PoolConfig, RequestParts,
    StreamFraming, Timeouts, TlsOptions, Version,
};
use nodelay_server::{ServerConfig, ServerHandle, TlsIdentity};

/// Longest any request here may take: past it the test failed (a hang).
const DEADLINE: Duration = Duration::from_secs(10);

/// A body of `pieces`, pulled in order; `rewindable`: it can start over.
struct Pieces {
    pieces: Vec<Vec<u8>>,
    next: usize,
    rewindable: bool,
    /// Pieces handed out, over every pass.
    pulled: usize,
    /// Fail instead of giving the piece at this index.
    fail_at: Option<usize>,
}

impl Pieces {
    fn new(pieces: Vec<Vec<u8>>) -> Pieces {
        Pieces {
            pieces,
            next: 0,
            rewindable: true,
            pulled: 0,
            fail_at: None,
        }
    }

    fn whole(&self) -> Vec<u8> {
        self.pieces.concat()
    }
}

impl BodySource for Pieces {
    fn next_chunk<'a>(&'a mut self, _buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        let i = self.next;
        if self.fail_at == Some(i) {
            return Err(Error::body_source("the source broke"));
        }
        self.next += 1;
        if i < self.pieces.len() {
            self.pulled += 1;
        }
        Ok(self.pieces.get(i).map(Vec::as_slice))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        if self.rewindable {
            self.next = 0;
        }
        Ok(self.rewindable)
    }
}

/// `n` pieces of `size` bytes, each a different byte.
fn pieces(n: usize, size: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![b'a' + (i % 26) as u8; size]).collect()
}

fn client(mode: Http2Mode) -> Client {
    let ca = support::ca_file();
    Client::with_http2(
        PoolConfig {
            max_connections: Some(10),
            max_keepalive: Some(10),
            keepalive_expiry: None,
            ..PoolConfig::default()
        },
        TlsOptions {
            ca_file: Some(ca),
            ..TlsOptions::default()
        },
        mode,
    )
}

fn timeouts(write: Duration) -> Timeouts {
    Timeouts {
        write: Some(write),
        total: Some(DEADLINE),
        ..Timeouts::default()
    }
}

/// Streams `source` to `url`: version, status and body of the answer.
fn post(
    client: &Client,
    url: &str,
    source: &mut Pieces,
    framing: StreamFraming,
    timeouts: Timeouts,
) -> Result<(Version, u16, Vec<u8>), Error> {
    let prepared = client.prepare_streamed(
        &RequestParts {
            method: "POST",
            url,
            headers: &[],
            body: None,
        },
        framing,
    )?;
    let mut exchange = client.send_streamed(&prepared, source, timeouts, &NeverInterrupt)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    Ok((exchange.version(), exchange.status(), out))
}

fn embedded(tls: bool) -> ServerHandle {
    nodelay_server::start(ServerConfig {
        http2: true,
        tls: tls.then(TlsIdentity::localhost),
        ..ServerConfig::default()
    })
    .expect("start the embedded server")
}

// ---------------------------------------------------------------- embedded server

#[test]
fn a_streamed_body_goes_over_h2c_on_the_shared_connection() {
    let server = embedded(false);
    let client = client(Http2Mode::PriorKnowledge);
    let url = format!("{}/echo", server.url());
    // 3 MiB: three times hyper's stream window, so the upload waits for
    // WINDOW_UPDATEs; of unknown size, then announced.
    for framing in [StreamFraming::Chunked, StreamFraming::Length(3 << 20)] {
        let mut source = Pieces::new(pieces(48, 64 * 1024));
        let (version, status, body) =
            post(&client, &url, &mut source, framing, timeouts(DEADLINE)).unwrap();
        assert_eq!((version, status), (Version::Http2, 200));
        assert!(
            body == source.whole(),
            "the echo differs from the body sent"
        );
    }
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn a_streamed_body_goes_over_h2_chosen_by_alpn() {
    let server = embedded(true);
    let client = client(Http2Mode::Negotiate);
    let url = server.url().replace("127.0.0.1", "localhost") + "/echo";
    let mut source = Pieces::new(pieces(5, 1000));
    let (version, status, body) = post(
        &client,
        &url,
        &mut source,
        StreamFraming::Length(5000),
        timeouts(DEADLINE),
    )
    .unwrap();
    assert_eq!((version, status), (Version::Http2, 200));
    assert_eq!(body, source.whole());
    let mut empty = Pieces::new(Vec::new());
    let (version, _, body) = post(
        &client,
        &url,
        &mut empty,
        StreamFraming::Chunked,
        timeouts(DEADLINE),
    )
    .unwrap();
    assert_eq!((version, body.len()), (Version::Http2, 0));
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn a_body_shorter_than_its_length_fails_and_the_connection_goes_on() {
    let server = embedded(false);
    let client = client(Http2Mode::PriorKnowledge);
    let url = format!("{}/echo", server.url());
    let mut short = Pieces::new(pieces(2, 1000));
    let error = post(
        &client,
        &url,
        &mut short,
        StreamFraming::Length(3000),
        timeouts(DEADLINE),
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::LocalProtocol, "{error:?}");
    let mut long = Pieces::new(pieces(4, 1000));
    let error = post(
        &client,
        &url,
        &mut long,
        StreamFraming::Length(3000),
        timeouts(DEADLINE),
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::LocalProtocol, "{error:?}");
    let mut fine = Pieces::new(pieces(3, 1000));
    let (version, _, body) = post(
        &client,
        &url,
        &mut fine,
        StreamFraming::Length(3000),
        timeouts(DEADLINE),
    )
    .unwrap();
    assert_eq!((version, body), (Version::Http2, fine.whole()));
    assert_eq!(server.connections_accepted(), 1);
}

// ---------------------------------------------------------------- scripted server

/// The settings payload announcing a stream window of 0.
fn zero_window() -> Vec<u8> {
    let mut settings = SETTINGS_INITIAL_WINDOW_SIZE.to_be_bytes().to_vec();
    settings.extend_from_slice(&0u32.to_be_bytes());
    settings
}

#[test]
fn a_streamed_upload_into_a_window_that_never_opens_is_a_write_timeout() {
    let (data_seen, data_count) = mpsc::channel();
    let server = scripted(vec![Box::new(move |peer: &mut Peer| {
        peer.handshake(&zero_window());
        peer.until(HEADERS);
        let mut data = 0;
        while let Some(frame) = peer.read_frame() {
            if frame.kind == DATA {
                data += frame.payload.len();
            }
        }
        let _ = data_seen.send(data);
    }) as Script]);
    let client = client(Http2Mode::PriorKnowledge);
    let mut source = Pieces::new(pieces(64, 64 * 1024));
    let started = Instant::now();
    let error = post(
        &client,
        &format!("{}/upload", server.url),
        &mut source,
        StreamFraming::Chunked,
        timeouts(Duration::from_millis(300)),
    )
    .unwrap_err();
    let waited = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::WriteTimeout, "{error:?}");
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    // Pulled no further than the window allowed (a client may send up to the
    // default window before it reads our SETTINGS, RFC 9113 §6.9.2).
    assert!(source.pulled <= 2, "pulled {} pieces", source.pulled);
    drop(client);
    let data = data_count.recv_timeout(DEADLINE).unwrap();
    assert!(
        data <= DEFAULT_WINDOW,
        "{data} bytes of DATA into a window of 0"
    );
}

/// Reads one request's HEADERS and first DATA frame, then refuses the stream;
/// answers a second request on the same connection (a refused stream goes
/// again on the connection that refused it, see docs/http2.md) with the body
/// it received.
fn refuse_after_some_data_then_echo() -> Script {
    Box::new(|peer: &mut Peer| {
        peer.handshake(&[]);
        let stream = peer.until(HEADERS).unwrap().stream;
        peer.until(DATA);
        peer.write_frame(RST_STREAM, 0, stream, &REFUSED_STREAM.to_be_bytes());
        if let Some(again) = peer.until(HEADERS) {
            let (body, ended) = peer.read_body();
            assert!(ended, "the body ended without END_STREAM");
            peer.respond(again.stream, &body);
        }
        peer.drain();
    })
}

#[test]
fn a_refused_stream_goes_again_only_when_the_body_starts_over() {
    let server = scripted(vec![refuse_after_some_data_then_echo()]);
    let client = client(Http2Mode::PriorKnowledge);
    let url = format!("{}/upload", server.url);
    let mut source = Pieces::new(pieces(3, 1000));
    let (version, status, body) = post(
        &client,
        &url,
        &mut source,
        StreamFraming::Chunked,
        timeouts(DEADLINE),
    )
    .unwrap();
    assert_eq!((version, status), (Version::Http2, 200));
    assert_eq!(body, source.whole());
    assert_eq!(server.connections(), 1);

    // A one-shot body (an iterator) partly pulled is never sent twice.
    let server = scripted(vec![refuse_after_some_data_then_echo()]);
    let mut once = Pieces {
        rewindable: false,
        ..Pieces::new(pieces(3, 1000))
    };
    let error = post(
        &client,
        &format!("{}/upload", server.url),
        &mut once,
        StreamFraming::Chunked,
        timeouts(DEADLINE),
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RemoteProtocol, "{error:?}");
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_failing_source_resets_its_stream() {
    let (ending, ended) = mpsc::channel();
    let server = scripted(vec![Box::new(move |peer: &mut Peer| {
        peer.handshake(&[]);
        let stream = peer.until(HEADERS).unwrap().stream;
        let (mut received, mut reset) = (0, None);
        while let Some(frame) = peer.read_frame() {
            match frame.kind {
                DATA => {
                    received += frame.payload.len();
                    assert_eq!(
                        frame.flags & END_STREAM,
                        0,
                        "a broken body ended as if whole"
                    );
                }
                RST_STREAM => {
                    let code: [u8; 4] = frame.payload[..4].try_into().unwrap();
                    reset = Some(u32::from_be_bytes(code));
                    break;
                }
                _ => {}
            }
        }
        let _ = ending.send((received, reset));
        // The connection is still good for the next request.
        let next = peer.until(HEADERS).unwrap().stream;
        assert!(next > stream);
        let (body, _) = peer.read_body();
        peer.respond(next, &body);
        peer.drain();
    }) as Script]);
    let client = client(Http2Mode::PriorKnowledge);
    let url = format!("{}/upload", server.url);
    let mut failing = Pieces {
        fail_at: Some(2),
        ..Pieces::new(pieces(4, 1000))
    };
    let error = post(
        &client,
        &url,
        &mut failing,
        StreamFraming::Chunked,
        timeouts(DEADLINE),
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::BodySource, "{error:?}");
    let (received, reset) = ended.recv_timeout(DEADLINE).unwrap();
    // The pieces pulled before the failure may or may not have left before
    // the reset (h2 drops data still queued on a stream it resets); what
    // matters is that the stream ends with CANCEL, never END_STREAM.
    assert!(received <= 2000, "{received} bytes sent of the 2000 pulled");
    assert_eq!(reset, Some(CANCEL));
    let mut fine = Pieces::new(pieces(2, 10));
    let (_, status, body) = post(
        &client,
        &url,
        &mut fine,
        StreamFraming::Chunked,
        timeouts(DEADLINE),
    )
    .unwrap();
    assert_eq!((status, body), (200, fine.whole()));
    assert_eq!(server.connections(), 1);
}
