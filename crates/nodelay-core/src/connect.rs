//! Opening TCP connections within the connect deadline.

use std::io;
use std::net::{TcpStream, ToSocketAddrs};

use crate::deadline::{Budget, Deadlines};
use crate::error::{Error, ErrorKind};
use crate::target::Origin;
use crate::tls::TlsSetup;
use crate::transport::Transport;

/// Resolves the origin and connects to the first address that answers, each
/// attempt bounded by what is left of the connect (and total) deadline.
/// `TCP_NODELAY` is set on success: we always send whole requests in one write,
/// so Nagle can only add latency.
pub(crate) fn connect(
    origin: &Origin,
    tls: &TlsSetup,
    deadlines: &Deadlines,
) -> Result<Transport, Error> {
    let tcp = connect_tcp(origin, deadlines)?;
    if origin.scheme == "https" {
        return Ok(Transport::Tls(Box::new(tls.handshake(
            &origin.host,
            tcp,
            deadlines,
        )?)));
    }
    Ok(Transport::Plain(tcp))
}

fn connect_tcp(origin: &Origin, deadlines: &Deadlines) -> Result<TcpStream, Error> {
    // Name resolution uses the system resolver (getaddrinfo), which has no
    // timeout of its own; literal IPs skip it.
    let addrs = (&*origin.host, origin.port)
        .to_socket_addrs()
        .map_err(|e| {
            Error::new(
                ErrorKind::Connect,
                format!("failed to resolve {}: {e}", origin.host),
            )
            .with_source(e)
        })?;
    let mut last_error: Option<io::Error> = None;
    for addr in addrs {
        let attempt = match deadlines.budget(deadlines.timeouts.connect) {
            Budget::Expired => break,
            Budget::Wait(Some(t)) => TcpStream::connect_timeout(&addr, t),
            Budget::Wait(None) => TcpStream::connect(addr),
        };
        match attempt {
            Ok(stream) => {
                stream.set_nodelay(true).map_err(|e| {
                    Error::new(
                        ErrorKind::Connect,
                        format!("setting TCP_NODELAY failed: {e}"),
                    )
                })?;
                return Ok(stream);
            }
            Err(e) => last_error = Some(e),
        }
    }
    Err(match last_error {
        Some(e) if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::WouldBlock => {
            Error::new(
                ErrorKind::ConnectTimeout,
                format!("timed out connecting to {}:{}", origin.host, origin.port),
            )
            .with_source(e)
        }
        Some(e) => Error::new(
            ErrorKind::Connect,
            format!("failed to connect to {}:{}: {e}", origin.host, origin.port),
        )
        .with_source(e),
        None => Error::new(
            ErrorKind::ConnectTimeout,
            format!("timed out connecting to {}:{}", origin.host, origin.port),
        ),
    })
}
