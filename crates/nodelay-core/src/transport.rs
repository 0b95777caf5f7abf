//! The byte stream under a connection: plain TCP, TLS over TCP, or TLS with
//! the origin inside TLS with an `https://` proxy (a CONNECT tunnel).

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use crate::tls::{NestedTlsStream, TlsStream};

pub(crate) enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
    NestedTls(Box<NestedTlsStream>),
}

impl Transport {
    /// The TCP socket (timeouts are set on it).
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(s) => &s.sock,
            Transport::NestedTls(s) => &s.sock.sock,
        }
    }

    /// Whether a read would find bytes without waiting: decrypted bytes held
    /// by the TLS session, or a readable socket (a TLS record in it is taken
    /// as ready: records arrive whole in practice). A TLS error also counts
    /// as ready, so that the next read reports it.
    pub fn has_data_now(&mut self) -> bool {
        if let Transport::Tls(stream) = self {
            match stream.conn.process_new_packets() {
                Ok(state) if state.plaintext_bytes_to_read() > 0 => return true,
                Ok(_) => {}
                Err(_) => return true,
            }
        }
        poll_readable(self.tcp())
    }

    /// Whether an idle connection can carry another request: nothing to
    /// read (a readable idle socket means EOF, RST or bytes nobody asked
    /// for). TLS 1.3 servers may send session tickets after the handshake,
    /// which make the socket readable; those are processed, not fatal. A
    /// readable nested session is not picked apart: it is simply not reused.
    pub fn is_idle_and_open(&mut self) -> bool {
        if !poll_readable(self.tcp()) {
            return true;
        }
        let Transport::Tls(stream) = self else {
            return false;
        };
        if stream.sock.set_nonblocking(true).is_err() {
            return false;
        }
        let alive = only_handshake_records(stream);
        stream.sock.set_nonblocking(false).is_ok() && alive
    }
}

/// Most TLS records one liveness check reads before giving up on a socket
/// that keeps delivering non-application records (a TLS 1.3 server sends a
/// handful of session tickets, often as separate writes: OpenSSL's default
/// is two).
const LIVENESS_MAX_TLS_READS: usize = 8;

/// Reads what a readable idle TLS socket holds, without blocking, until it
/// would block: true when all of it was handshake traffic (session tickets,
/// key updates), false on EOF, a close_notify, application data or a TLS
/// error. Reading until the socket is empty, rather than checking it once
/// more after one read, is what keeps a ticket that arrives a moment after
/// the first from being taken for an answer (an upload would then stop and
/// wait for a response the server is not going to send).
fn only_handshake_records(stream: &mut TlsStream) -> bool {
    for _ in 0..LIVENESS_MAX_TLS_READS {
        match stream.conn.read_tls(&mut stream.sock) {
            Ok(0) => return false,
            Ok(_) => match stream.conn.process_new_packets() {
                Ok(state) if state.plaintext_bytes_to_read() == 0 && !state.peer_has_closed() => {}
                _ => return false,
            },
            Err(e) => return e.kind() == io::ErrorKind::WouldBlock,
        }
    }
    false
}

fn poll_readable(sock: &TcpStream) -> bool {
    let mut fds = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fds` is a valid pollfd array of length 1 for the duration of the call.
    let ready = unsafe { libc::poll(&mut fds, 1, 0) };
    ready != 0
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            // A peer closing without close_notify ends the stream like a TCP
            // EOF (what curl, urllib3 and httpx accept); framing still
            // detects truncated bodies.
            Transport::Tls(s) => match s.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
            Transport::NestedTls(s) => match s.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
            Transport::NestedTls(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write_vectored(bufs),
            Transport::Tls(s) => s.write_vectored(bufs),
            Transport::NestedTls(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
            Transport::NestedTls(s) => s.flush(),
        }
    }
}
