//! A frame-level HTTP/2 server for scripted tests: raw TCP, hand-written
//! frames (RFC 9113 §4, §6), one script per accepted connection.

// Each test binary that includes this module uses its own subset of it.
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
pub const GOAWAY: u8 = 0x7;
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

// Error codes (RFC 9113 §7).
pub const NO_ERROR: u32 = 0x0;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;

/// SETTINGS_INITIAL_WINDOW_SIZE (RFC 9113 §6.5.2).
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
/// The initial flow-control window before SETTINGS change it (RFC 9113 §6.9.2).
pub const DEFAULT_WINDOW: usize = 65_535;

/// HPACK for `:status: 200` (static table index 8, RFC 7541 Appendix A).
pub const STATUS_200: &[u8] = &[0x88];

/// How long a scripted connection waits for the client's next frame: past
/// it the test failed (a hang).
pub const PEER_READ_TIMEOUT: Duration = Duration::from_secs(5);

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

    /// Reads until the client closes (bounded by the socket timeout).
    pub fn drain(&mut self) {
        while self.read_frame().is_some() {}
    }
}

pub type Script = Box<dyn FnOnce(&mut Peer) + Send>;

/// A server whose connection `i` plays `scripts[i]`; counts connections.
pub struct Scripted {
    pub url: String,
    pub connections: Arc<AtomicUsize>,
}

impl Scripted {
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
            sock.set_read_timeout(Some(PEER_READ_TIMEOUT)).unwrap();
            thread::spawn(move || script(&mut Peer { sock }));
        }
    });
    Scripted { url, connections }
}
