//! A raw HTTP/1.1 test client over `std::net::TcpStream`: tests write the exact
//! request bytes and read back the exact response, framing included.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use nodelay_server::{start, ServerConfig, ServerHandle};

/// Longest a test waits for any read: a hung server fails the test, not the suite.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// A fresh server on an OS-chosen loopback port.
pub fn server() -> ServerHandle {
    start(ServerConfig::default()).expect("server starts")
}

/// One parsed response. `chunk_sizes` is empty unless the body was chunked.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub chunk_sizes: Vec<usize>,
}

impl Response {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name`, in order.
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("UTF-8 body")
    }
}

/// One client connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        Conn {
            reader: BufReader::new(stream),
        }
    }

    /// Writes `bytes` as they are.
    pub fn send(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).expect("write");
    }

    /// Sends `GET path` with keep-alive and reads the answer.
    pub fn get(&mut self, path: &str) -> Response {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes());
        self.read_response(false)
    }

    /// Reads one response; `head_only` for answers to HEAD (no body whatever the headers say).
    pub fn read_response(&mut self, head_only: bool) -> Response {
        let status_line = self.line();
        let mut parts = status_line.splitn(3, ' ');
        assert_eq!(
            parts.next(),
            Some("HTTP/1.1"),
            "status line {status_line:?}"
        );
        let status: u16 = parts.next().unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let line = self.line();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header line");
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
            chunk_sizes: Vec::new(),
        };
        if head_only || status == 204 || status == 304 {
            return response;
        }
        if response.header("transfer-encoding") == Some("chunked") {
            self.read_chunked(&mut response);
        } else if let Some(len) = response.header("content-length") {
            let mut body = vec![0; len.parse().unwrap()];
            self.reader.read_exact(&mut body).expect("body");
            response.body = body;
        } else {
            panic!("response without framing: {response:?}");
        }
        response
    }

    /// Reads to EOF; panics if the server sends anything.
    pub fn expect_closed(&mut self) {
        let mut rest = Vec::new();
        self.reader.read_to_end(&mut rest).expect("read to EOF");
        assert!(rest.is_empty(), "unexpected bytes {rest:?}");
    }

    fn read_chunked(&mut self, response: &mut Response) {
        loop {
            let size_line = self.line();
            let size = usize::from_str_radix(size_line.split(';').next().unwrap(), 16).unwrap();
            if size == 0 {
                // No trailers expected: the empty line ends the message.
                assert_eq!(self.line(), "");
                return;
            }
            response.chunk_sizes.push(size);
            let start = response.body.len();
            response.body.resize(start + size, 0);
            self.reader.read_exact(&mut response.body[start..]).unwrap();
            assert_eq!(self.line(), "", "chunk not followed by CRLF");
        }
    }

    /// One CRLF-terminated line, without the CRLF.
    fn line(&mut self) -> String {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).expect("read line");
        assert!(n > 0, "connection closed mid-response");
        assert!(line.ends_with("\r\n"), "line {line:?} not CRLF-terminated");
        line.truncate(line.len() - 2);
        line
    }
}

/// Opens a connection, sends `GET path` and reads the answer.
pub fn get(server: &ServerHandle, path: &str) -> Response {
    Conn::open(server.addr()).get(path)
}

/// Expected `/bytes/{n}` body.
pub fn pattern(n: usize) -> Vec<u8> {
    b"abcdefghijklmnopqrstuvwxyz0123456789"
        .iter()
        .cycle()
        .take(n)
        .copied()
        .collect()
}
