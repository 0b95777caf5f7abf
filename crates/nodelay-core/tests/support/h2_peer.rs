//! A scripted HTTP/2 server for the h2 tests: raw TCP, hand-written frames,
//! so a test states the exact frames a peer sends (RFC 9113 §4-§6) and sees
//! the exact frames the client sends. Each h2 test file includes it with
//! `#[path = "support/h2_peer.rs"] mod h2_peer;`.

// Each test binary compiles this module and uses its own subset of it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Frame types and flags (RFC 9113 §6).
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

// Error codes (RFC 9113 §7).
pub const NO_ERROR: u32 = 0x0;
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const INTERNAL_ERROR: u32 = 0x2;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;

// Settings (RFC 9113 §6.5.2).
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;

/// The initial flow-control window before SETTINGS change it (RFC 9113 §6.9.2).
pub const DEFAULT_WINDOW: usize = 65_535;

/// HPACK for `:status: 200` (static table index 8, RFC 7541 Appendix A).
pub const STATUS_200: &[u8] = &[0x88];
/// HPACK for `:status: 204` (static table index 9).
pub const STATUS_204: &[u8] = &[0x89];

/// The largest frame payload a peer may send before the client's SETTINGS
/// say otherwise (RFC 9113 §4.2): what the scripts cut bodies into.
pub const DEFAULT_MAX_FRAME: usize = 16_384;

/// Longest any scripted exchange may take: past it the test failed (a hang).
pub const DEADLINE: Duration = Duration::from_secs(5);

/// One server-side connection, speaking frames.
pub struct Peer {
    pub sock: TcpStream,
}

pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// A SETTINGS payload of one setting.
pub fn setting(id: u16, value: u32) -> Vec<u8> {
    let mut payload = id.to_be_bytes().to_vec();
    payload.extend_from_slice(&value.to_be_bytes());
    payload
}

/// A header block: `status` (an HPACK byte such as [`STATUS_200`]), then
/// each field as a literal without indexing with a literal name (RFC 7541
/// §6.2.2); names and values shorter than 127 bytes.
pub fn header_block(status: &[u8], fields: &[(&str, &str)]) -> Vec<u8> {
    let mut block = status.to_vec();
    for (name, value) in fields {
        assert!(name.len() < 127 && value.len() < 127);
        block.push(0x00);
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
        block.push(value.len() as u8);
        block.extend_from_slice(value.as_bytes());
    }
    block
}

impl Peer {
    pub fn read_frame(&mut self) -> Option<Frame> {
        let mut head = [0u8; 9];
        self.sock.read_exact(&mut head).ok()?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let mut payload = vec![0; len];
        self.sock.read_exact(&mut payload).ok()?;
        Some(Frame {
            kind: head[3],
            flags: head[4],
            stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
            payload,
        })
    }

    pub fn write_frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> bool {
        let len = (payload.len() as u32).to_be_bytes();
        let mut frame = vec![len[1], len[2], len[3], kind, flags];
        frame.extend_from_slice(&stream.to_be_bytes());
        frame.extend_from_slice(payload);
        self.sock.write_all(&frame).is_ok()
    }

    /// Reads the client preface, sends `settings` as our SETTINGS.
    pub fn handshake(&mut self, settings: &[u8]) {
        let mut preface = [0u8; 24];
        self.sock.read_exact(&mut preface).unwrap();
        assert_eq!(&preface[..], PREFACE);
        self.write_frame(SETTINGS, 0, 0, settings);
    }

    /// Reads frames (acknowledging the client's SETTINGS) until a request's
    /// HEADERS arrive; returns its stream id, or `None` if the client left.
    pub fn next_request(&mut self) -> Option<u32> {
        loop {
            let frame = self.read_frame()?;
            match frame.kind {
                SETTINGS if frame.flags & ACK == 0 => {
                    self.write_frame(SETTINGS, ACK, 0, &[]);
                }
                HEADERS => {
                    assert!(!frame.payload.is_empty(), "a request has pseudo-headers");
                    return Some(frame.stream);
                }
                _ => {}
            }
        }
    }

    /// Reads frames (acknowledging the client's SETTINGS) until a frame of
    /// `kind` arrives; `None` if the client left first.
    pub fn until(&mut self, kind: u8) -> Option<Frame> {
        loop {
            let frame = self.read_frame()?;
            if frame.kind == SETTINGS && frame.flags & ACK == 0 {
                self.write_frame(SETTINGS, ACK, 0, &[]);
            }
            if frame.kind == kind {
                return Some(frame);
            }
        }
    }

    /// Reads a request's body until its END_STREAM (or the client resets the
    /// stream or leaves): the bytes, and whether it ended with END_STREAM.
    pub fn read_body(&mut self) -> (Vec<u8>, bool) {
        let mut body = Vec::new();
        while let Some(frame) = self.read_frame() {
            match frame.kind {
                DATA => {
                    body.extend_from_slice(&frame.payload);
                    if frame.flags & END_STREAM != 0 {
                        return (body, true);
                    }
                }
                RST_STREAM => return (body, false),
                _ => {}
            }
        }
        (body, false)
    }

    pub fn respond(&mut self, stream: u32, body: &[u8]) {
        self.write_frame(HEADERS, END_HEADERS, stream, STATUS_200);
        self.write_frame(DATA, END_STREAM, stream, body);
    }

    /// Sends `body` in DATA frames of at most [`DEFAULT_MAX_FRAME`] bytes,
    /// none of them ending the stream.
    pub fn data(&mut self, stream: u32, body: &[u8]) {
        for piece in body.chunks(DEFAULT_MAX_FRAME) {
            self.write_frame(DATA, 0, stream, piece);
        }
    }

    /// Ends `stream` the way Go, Caddy, nginx as a proxy, Node's http2 and
    /// hypercorn do: a DATA frame with no payload carrying END_STREAM.
    pub fn end_with_empty_data(&mut self, stream: u32) {
        self.write_frame(DATA, END_STREAM, stream, &[]);
    }

    pub fn goaway(&mut self, last_stream: u32, code: u32) {
        let mut payload = last_stream.to_be_bytes().to_vec();
        payload.extend_from_slice(&code.to_be_bytes());
        self.write_frame(GOAWAY, 0, 0, &payload);
    }

    /// Reads until the client closes (bounded by the socket timeout).
    pub fn drain(&mut self) {
        while self.read_frame().is_some() {}
    }
}

pub type Script = Box<dyn FnOnce(&mut Peer) + Send>;

/// A connection that answers its first request with `body`, then reads
/// until the client leaves.
pub fn answering(body: &'static [u8]) -> Script {
    Box::new(move |peer| {
        peer.handshake(&[]);
        if let Some(stream) = peer.next_request() {
            peer.respond(stream, body);
        }
        peer.drain();
    })
}

/// A server whose connection `i` plays `scripts[i]`; counts connections.
pub struct Scripted {
    pub url: String,
    pub connections: Arc<AtomicUsize>,
}

impl Scripted {
    /// How many connections the server has accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

pub fn scripted(scripts: Vec<Script>) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&connections);
    thread::spawn(move || {
        for script in scripts {
            let Ok((sock, _)) = listener.accept() else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            sock.set_read_timeout(Some(DEADLINE)).unwrap();
            // Frames go out one write each: without this, Nagle holds each
            // small frame back until the client's delayed ACK (40 ms).
            sock.set_nodelay(true).unwrap();
            thread::spawn(move || script(&mut Peer { sock }));
        }
    });
    Scripted { url, connections }
}

/// A server playing the same script on each of at most `max_connections`
/// connections (the bound ends its accept loop).
pub fn serving(
    max_connections: usize,
    script: impl Fn(&mut Peer) + Send + Sync + 'static,
) -> Scripted {
    let script = Arc::new(script);
    scripted(
        (0..max_connections)
            .map(|_| {
                let script = Arc::clone(&script);
                Box::new(move |peer: &mut Peer| script(peer)) as Script
            })
            .collect(),
    )
}
