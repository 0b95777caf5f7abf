//! Connections through a proxy: the connection to the proxy itself, and the
//! CONNECT tunnel (RFC 9110 §9.3.6) that https targets go through.
//!
//! The whole CONNECT exchange runs within the connect deadline: one write of
//! the CONNECT head, then the proxy's answer read with the proto crate's
//! parser (bounded by its head limits). Only a 2xx opens the tunnel; the
//! origin's TLS handshake then runs inside it, checked against the origin's
//! name. Nothing of the request is sent before that, so a refusing proxy
//! never sees it in cleartext. With an `https://` proxy the CONNECT exchange
//! runs over TLS with the proxy, and the origin's TLS session inside that.
//!
//! A SOCKS proxy (`socks.rs`) is driven here too, on the same connect
//! deadline: TCP to the proxy, the handshake, then the origin's TLS (if any)
//! directly over the tunnel, as over a direct connection.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Instant;

use nodelay_proto::limits::MAX_INTERIM_RESPONSES;
use nodelay_proto::parse_response_head;

use crate::connect::{connect as connect_direct, dial_tcp};
use crate::deadline::{Deadlines, Phase};
use crate::error::{Error, ErrorKind};
use crate::interrupt::interrupted;
use crate::interrupt::Interrupt;
use crate::proxy::{ConnKey, Proxy, Route, SocksProxy};
use crate::resolve::resolve;
use crate::socks::{Handshake, Next, SocksError, SocksTarget, SocksVersion, MAX_REPLY_BYTES};
use crate::target::Origin;
use crate::tls::TlsSetup;
use crate::transport::Transport;

/// Bytes asked for per read of the proxy's answer: a CONNECT answer is a
/// short head, and reading little keeps the buffer near the head limit.
pub(crate) const CONNECT_READ_BYTES: usize = 4096;

/// Longest part of a proxy's reason phrase repeated in an error message.
const MAX_REASON_IN_MESSAGE: usize = 100;

/// Opens the connection a pool key describes: to the origin, to the proxy
/// that forwards requests, or a CONNECT tunnel through the proxy.
pub(crate) fn connect_route(
    key: &ConnKey,
    tls: &TlsSetup,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<Transport, Error> {
    match &key.route {
        Route::Direct => connect_direct(&key.origin, tls, deadlines, interrupt),
        Route::Forward(proxy) => connect_proxy(proxy, tls, deadlines, interrupt),
        Route::Tunnel(proxy) => open(proxy, &key.origin, tls, deadlines, interrupt),
        Route::Socks(proxy) => open_socks(proxy, &key.origin, tls, deadlines, interrupt),
    }
}

/// Opens a connection to the proxy (TCP, plus TLS for an `https://` proxy).
/// Failures name the proxy (never its credentials); a refused or reset
/// connection is a `ProxyError`, timeouts stay `ConnectTimeout`.
fn connect_proxy(
    proxy: &Proxy,
    tls: &TlsSetup,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<Transport, Error> {
    connect_direct(&proxy.origin, tls, deadlines, interrupt)
        .map_err(|e| proxy_connect_error(e, proxy))
}

/// A failure to reach the proxy, named after it (shared with the async
/// connect path, `aconnect.rs`).
pub(crate) fn proxy_connect_error(e: Error, proxy: &dyn fmt::Display) -> Error {
    let unreachable = e.kind() == ErrorKind::Connect;
    let kind = if unreachable {
        ErrorKind::Proxy
    } else {
        e.kind()
    };
    let e = e.recast(kind, format!("proxy {proxy}: "));
    if unreachable {
        e.proxy_unreachable()
    } else {
        e
    }
}

/// Opens a CONNECT tunnel to `origin` through `proxy`, then the TLS session
/// with the origin inside it (for an `https` origin).
fn open(
    proxy: &Proxy,
    origin: &Origin,
    tls: &TlsSetup,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<Transport, Error> {
    let mut stream = connect_proxy(proxy, tls, deadlines, interrupt)?;
    let request = connect_head(proxy.authorization(), origin);
    let phase_end = deadlines.until(deadlines.timeouts.connect);
    send(&mut stream, &request, proxy, phase_end, deadlines)?;
    read_answer(&mut stream, proxy, origin, phase_end, deadlines)?;
    if origin.scheme != "https" {
        return Ok(stream);
    }
    match stream {
        Transport::Plain(tcp) => Ok(Transport::Tls(Box::new(tls.handshake(
            &origin.host,
            tcp,
            deadlines,
            interrupt,
        )?))),
        // An https:// proxy: the origin's TLS runs inside the proxy's.
        Transport::Tls(outer) => Ok(Transport::NestedTls(Box::new(tls.handshake(
            &origin.host,
            *outer,
            deadlines,
            interrupt,
        )?))),
        Transport::NestedTls(_) => unreachable!("a proxy connection is never nested"),
    }
}

/// `CONNECT host:port HTTP/1.1` with `Host` (RFC 9112 §3.2.3: the
/// authority-form target) and the proxy's credentials when it has some.
pub(crate) fn connect_head(authorization: Option<&str>, origin: &Origin) -> Vec<u8> {
    let authority = if origin.host.contains(':') {
        format!("[{}]:{}", origin.host, origin.port)
    } else {
        format!("{}:{}", origin.host, origin.port)
    };
    let mut head = Vec::with_capacity(128);
    head.extend_from_slice(b"CONNECT ");
    head.extend_from_slice(authority.as_bytes());
    head.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    head.extend_from_slice(authority.as_bytes());
    head.extend_from_slice(b"\r\n");
    if let Some(value) = authorization {
        head.extend_from_slice(b"Proxy-Authorization: ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// Sets the socket timeouts to what is left until `phase_end` (the whole
/// CONNECT exchange shares one connect timeout, so a proxy dripping its
/// answer byte by byte cannot stretch it).
fn connect_budget(
    tcp: &TcpStream,
    phase_end: Option<Instant>,
    proxy: &dyn fmt::Display,
    deadlines: &Deadlines,
) -> Result<(), Error> {
    let budget = match phase_end {
        None => None,
        Some(end) => {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timed_out(proxy, deadlines));
            }
            Some(left)
        }
    };
    tcp.set_read_timeout(budget)
        .and_then(|()| tcp.set_write_timeout(budget))
        .map_err(|e| {
            Error::new(ErrorKind::Connect, format!("socket setup failed: {e}")).with_source(e)
        })
}

/// The connect timeout's error for a CONNECT exchange or SOCKS handshake
/// with `proxy`.
pub(crate) fn timed_out(proxy: &dyn fmt::Display, deadlines: &Deadlines) -> Error {
    let doing = format!("waiting for proxy {proxy} to open a tunnel");
    deadlines.timed_out(Phase::connect(&doing))
}

/// What a proxy exchange is called in messages.
pub(crate) const DURING_CONNECT: &str = "CONNECT";
pub(crate) const DURING_SOCKS: &str = "the SOCKS handshake";

/// An I/O failure talking to `proxy` `during` an exchange (a timeout is the
/// connect timeout's error).
pub(crate) fn io_failure(
    e: io::Error,
    proxy: &dyn fmt::Display,
    during: &str,
    deadlines: &Deadlines,
) -> Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        return timed_out(proxy, deadlines).with_source(e);
    }
    Error::new(
        ErrorKind::Proxy,
        format!("connection to proxy {proxy} failed during {during}: {e}"),
    )
    .with_source(e)
}

fn send(
    stream: &mut Transport,
    request: &[u8],
    proxy: &Proxy,
    phase_end: Option<Instant>,
    deadlines: &Deadlines,
) -> Result<(), Error> {
    let mut rest = request;
    while !rest.is_empty() {
        connect_budget(stream.tcp(), phase_end, proxy, deadlines)?;
        match stream.write(rest) {
            Ok(0) => {
                return Err(io_failure(
                    io::ErrorKind::WriteZero.into(),
                    proxy,
                    DURING_CONNECT,
                    deadlines,
                ))
            }
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_failure(e, proxy, DURING_CONNECT, deadlines)),
        }
    }
    stream
        .flush()
        .map_err(|e| io_failure(e, proxy, DURING_CONNECT, deadlines))
}

/// Reads the proxy's answer to CONNECT: `Ok` for a 2xx with nothing after
/// it, a `ProxyError` naming the status otherwise.
fn read_answer(
    stream: &mut Transport,
    proxy: &Proxy,
    origin: &Origin,
    phase_end: Option<Instant>,
    deadlines: &Deadlines,
) -> Result<(), Error> {
    let mut answer = ConnectAnswer::default();
    let mut chunk = [0u8; CONNECT_READ_BYTES];
    loop {
        if answer.parse(proxy, origin)? {
            if has_plaintext_buffered(stream) {
                return Err(unexpected_bytes(proxy));
            }
            return Ok(());
        }
        connect_budget(stream.tcp(), phase_end, proxy, deadlines)?;
        match stream.read(&mut chunk) {
            Ok(0) => return Err(answer.closed(proxy)),
            Ok(n) => answer.received(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_failure(e, proxy, DURING_CONNECT, deadlines)),
        }
    }
}

/// The proxy's answer to CONNECT as it arrives, parsed without I/O: the
/// blocking (`read_answer`) and async (`aconnect.rs`) connect paths feed it
/// what they read.
#[derive(Default)]
pub(crate) struct ConnectAnswer {
    buf: Vec<u8>,
    interim: usize,
}

impl ConnectAnswer {
    /// Appends bytes read from the proxy.
    pub fn received(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// `Ok(true)` once a 2xx answer arrived with nothing after it (the
    /// tunnel is open), `Ok(false)` while the head is incomplete, a
    /// `ProxyError` naming the status for any other answer.
    pub fn parse(&mut self, proxy: &Proxy, origin: &Origin) -> Result<bool, Error> {
        loop {
            let parsed = parse_response_head(&self.buf, false).map_err(|e| {
                Error::new(
                    ErrorKind::Proxy,
                    format!("proxy {proxy} answered CONNECT with an invalid response: {e}"),
                )
                .with_source(e)
            })?;
            let Some(head) = parsed else {
                return Ok(false);
            };
            if head.is_interim() {
                self.interim += 1;
                if self.interim > MAX_INTERIM_RESPONSES {
                    return Err(Error::new(
                        ErrorKind::Proxy,
                        format!("proxy {proxy} sent too many interim responses to CONNECT"),
                    ));
                }
                self.buf.drain(..head.head_len);
                continue;
            }
            if !(200..300).contains(&head.status) {
                let reason = String::from_utf8_lossy(
                    &self.buf[head.reason.0 as usize..head.reason.1 as usize],
                );
                return Err(refused(proxy, origin, head.status, reason.trim()));
            }
            // The origin speaks only after our TLS ClientHello: bytes already
            // here came from the proxy, and a tunnel that starts with them
            // would hand them to TLS as the origin's.
            if self.buf.len() > head.head_len {
                return Err(unexpected_bytes(proxy));
            }
            return Ok(true);
        }
    }

    /// The error for a proxy that closed the connection before answering.
    pub fn closed(&self, proxy: &Proxy) -> Error {
        Error::new(
            ErrorKind::Proxy,
            format!(
                "proxy {proxy} closed the connection {} its answer to CONNECT",
                if self.buf.is_empty() {
                    "before"
                } else {
                    "in the middle of"
                }
            ),
        )
    }
}

pub(crate) fn unexpected_bytes(proxy: &Proxy) -> Error {
    Error::new(
        ErrorKind::Proxy,
        format!("proxy {proxy} sent unexpected bytes after its CONNECT answer"),
    )
}

/// Whether an `https://` proxy's TLS session holds decrypted bytes we have
/// not read (they would follow the CONNECT answer).
fn has_plaintext_buffered(stream: &mut Transport) -> bool {
    match stream {
        Transport::Tls(s) => s
            .conn
            .process_new_packets()
            .map_or(true, |state| state.plaintext_bytes_to_read() > 0),
        _ => false,
    }
}

fn refused(proxy: &Proxy, origin: &Origin, status: u16, reason: &str) -> Error {
    let reason: String = reason
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_REASON_IN_MESSAGE)
        .collect();
    let what = match (status, proxy.authorization()) {
        (407, Some(_)) => "; the proxy refused the credentials",
        (407, None) => "; the proxy requires credentials (give them in the proxy URL)",
        _ => "",
    };
    Error::new(
        ErrorKind::Proxy,
        format!(
            "proxy {proxy} refused to open a tunnel to {}:{}: {status} {reason}{what}",
            origin.host, origin.port
        ),
    )
}

/// Opens a connection to `origin` through a SOCKS proxy: TCP to the proxy,
/// the handshake (`socks.rs`) within the connect deadline, then for an
/// `https` origin the TLS session with it, checked against its name.
fn open_socks(
    proxy: &SocksProxy,
    origin: &Origin,
    tls: &TlsSetup,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<Transport, Error> {
    let resolved = if socks_resolves_here(proxy, origin) {
        resolve(&origin.host, origin.port, deadlines, interrupt)?
    } else {
        Vec::new()
    };
    let mut handshake = socks_handshake(proxy, origin, &resolved)?;
    let mut tcp = dial_tcp(&proxy.origin, tls.dial(), deadlines, interrupt)
        .map_err(|e| socks_connect_error(e, proxy))?;
    let phase_end = deadlines.until(deadlines.timeouts.connect);
    run_socks(
        &mut tcp,
        &mut handshake,
        proxy,
        origin,
        phase_end,
        deadlines,
        interrupt,
    )?;
    if origin.scheme != "https" {
        return Ok(Transport::Plain(tcp));
    }
    Ok(Transport::Tls(Box::new(tls.handshake(
        &origin.host,
        tcp,
        deadlines,
        interrupt,
    )?)))
}

/// Moves the handshake's bytes over the blocking socket, every wait bounded
/// by what is left until `phase_end`.
fn run_socks(
    tcp: &mut TcpStream,
    handshake: &mut Handshake,
    proxy: &SocksProxy,
    origin: &Origin,
    phase_end: Option<Instant>,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<(), Error> {
    let mut chunk = [0u8; MAX_REPLY_BYTES];
    loop {
        connect_budget(tcp, phase_end, proxy, deadlines)?;
        let io = match handshake.next() {
            Next::Done => return Ok(()),
            Next::Send(bytes) => match tcp.write(bytes) {
                Ok(0) => Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    handshake.sent(n);
                    Ok(())
                }
                Err(e) => Err(e),
            },
            Next::Receive(wanted) => match tcp.read(&mut chunk[..wanted.min(MAX_REPLY_BYTES)]) {
                Ok(0) => return Err(socks_closed(handshake, proxy)),
                Ok(n) => {
                    handshake
                        .received(&chunk[..n])
                        .map_err(|e| socks_error(e, proxy, origin))?;
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        match io {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if interrupt.should_abort() {
                    return Err(interrupted());
                }
            }
            Err(e) => return Err(io_failure(e, proxy, DURING_SOCKS, deadlines)),
        }
    }
}

/// Whether `origin`'s name is resolved here before the SOCKS handshake
/// (`socks4://`, `socks5://`; an IP literal needs no resolving).
pub(crate) fn socks_resolves_here(proxy: &SocksProxy, origin: &Origin) -> bool {
    proxy.version.resolves_locally() && origin.host.parse::<IpAddr>().is_err()
}

/// A failure to reach a SOCKS proxy, named after it. It stays a connect
/// error (a timeout stays `ConnectTimeout`): httpx, over socksio, raises
/// `ConnectError` when its SOCKS proxy is unreachable, and `ProxyError` only
/// for what the proxy answered.
pub(crate) fn socks_connect_error(e: Error, proxy: &SocksProxy) -> Error {
    let kind = e.kind();
    e.recast(kind, format!("proxy {proxy}: "))
}

/// The handshake asking `proxy` for `origin`: its IP literal, the first of
/// its `resolved` addresses (the first IPv4 one for SOCKS4) when
/// [`socks_resolves_here`], else its name for the proxy to resolve.
pub(crate) fn socks_handshake(
    proxy: &SocksProxy,
    origin: &Origin,
    resolved: &[SocketAddr],
) -> Result<Handshake, Error> {
    let target = if let Ok(ip) = origin.host.parse::<IpAddr>() {
        SocksTarget::Ip(ip)
    } else if proxy.version.resolves_locally() {
        let usable = |a: &&SocketAddr| proxy.version != SocksVersion::V4 || a.is_ipv4();
        match resolved.iter().find(usable) {
            Some(addr) => SocksTarget::Ip(addr.ip()),
            None => return Err(socks_error(SocksError::Socks4NeedsIpv4, proxy, origin)),
        }
    } else {
        SocksTarget::Name(&origin.host)
    };
    Handshake::new(
        proxy.version,
        proxy.credentials.as_ref(),
        target,
        origin.port,
    )
    .map_err(|e| socks_error(e, proxy, origin))
}

/// A failed handshake as a `ProxyError` naming the proxy (never its
/// credentials), the target and the reply's meaning.
pub(crate) fn socks_error(e: SocksError, proxy: &SocksProxy, origin: &Origin) -> Error {
    let target = if origin.host.contains(':') {
        format!("[{}]:{}", origin.host, origin.port)
    } else {
        format!("{}:{}", origin.host, origin.port)
    };
    let message = match e {
        SocksError::Refused5(_) | SocksError::Refused4(_) => {
            format!("proxy {proxy} refused to open a tunnel to {target}: {e}")
        }
        _ => format!("SOCKS handshake with proxy {proxy} for {target} failed: {e}"),
    };
    Error::new(ErrorKind::Proxy, message)
}

/// The error for a SOCKS proxy that closed the connection mid-handshake.
pub(crate) fn socks_closed(handshake: &Handshake, proxy: &SocksProxy) -> Error {
    Error::new(
        ErrorKind::Proxy,
        format!(
            "proxy {proxy} closed the connection {} its {} reply",
            if handshake.mid_reply() {
                "in the middle of"
            } else {
                "before"
            },
            handshake.label()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy() -> Proxy {
        Proxy::parse("http://u:secret@proxy.test:3128").expect("valid proxy URL")
    }

    fn origin() -> Origin {
        Origin {
            scheme: "https",
            host: "origin.test".into(),
            port: 443,
        }
    }

    #[test]
    fn answer_split_across_reads_opens_the_tunnel() {
        let mut answer = ConnectAnswer::default();
        answer.received(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 Connection");
        assert!(!answer.parse(&proxy(), &origin()).unwrap());
        answer.received(b" established\r\n\r\n");
        assert!(answer.parse(&proxy(), &origin()).unwrap());
    }

    #[test]
    fn refusal_names_the_status_never_the_credentials() {
        let mut answer = ConnectAnswer::default();
        answer.received(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n");
        let e = answer.parse(&proxy(), &origin()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Proxy);
        assert!(!e.is_proxy_unreachable()); // the proxy answered
        let message = e.to_string();
        assert!(
            message.contains("407 Proxy Authentication Required"),
            "{message}"
        );
        assert!(message.contains("refused the credentials"), "{message}");
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn a_proxy_not_reached_is_a_proxy_error_marked_unreachable() {
        let refused = Error::new(ErrorKind::Connect, "connection refused");
        let e = proxy_connect_error(refused, &"http://proxy.test:3128");
        assert_eq!(e.kind(), ErrorKind::Proxy);
        assert!(e.is_proxy_unreachable());
        let timed_out = Error::new(ErrorKind::ConnectTimeout, "timed out");
        let e = proxy_connect_error(timed_out, &"http://proxy.test:3128");
        assert_eq!(e.kind(), ErrorKind::ConnectTimeout);
        assert!(!e.is_proxy_unreachable());
    }

    #[test]
    fn bytes_after_the_answer_are_refused() {
        let mut answer = ConnectAnswer::default();
        answer.received(b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n");
        let e = answer.parse(&proxy(), &origin()).unwrap_err();
        assert!(e.to_string().contains("unexpected bytes"), "{e}");
    }

    #[test]
    fn closed_before_or_during_the_answer() {
        let answer = ConnectAnswer::default();
        assert!(answer.closed(&proxy()).to_string().contains("before"));
        let mut answer = ConnectAnswer::default();
        answer.received(b"HTTP/1.1 2");
        assert!(answer
            .closed(&proxy())
            .to_string()
            .contains("in the middle of"));
    }

    #[test]
    fn connect_head_bytes() {
        assert_eq!(
            connect_head(Some("Basic dTpw"), &origin()),
            b"CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\
              Proxy-Authorization: Basic dTpw\r\n\r\n"
        );
    }
}
