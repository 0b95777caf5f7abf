//! Binding the listening socket and naming its URL.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use tokio::net::{TcpListener, TcpSocket};

use crate::limits::LISTEN_BACKLOG;

/// Binds `host:port` with [`LISTEN_BACKLOG`], trying each address the host resolves
/// to. Must run inside a tokio runtime context (the listener registers with its
/// reactor); it is synchronous so that errors and the chosen port reach the caller
/// before the server is announced.
pub(crate) fn bind(host: &str, port: u16) -> io::Result<TcpListener> {
    // Accept "[::1]" as well as "::1": people copy hosts out of URLs.
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let mut last_error = None;
    for addr in (host, port).to_socket_addrs()? {
        match bind_addr(addr) {
            Ok(listener) => return Ok(listener),
            Err(err) => last_error = Some(err),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            format!("{host} resolves to no address"),
        )
    }))
}

fn bind_addr(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // Lets a restarted server (or the next test) rebind a port whose old
    // connections are still in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// `http://HOST:PORT` (`https://` for TLS) with no trailing slash; IPv6 hosts
/// come out bracketed because that is how `SocketAddr` displays them.
pub(crate) fn url_for(addr: SocketAddr, tls: bool) -> String {
    let scheme = if tls { "https" } else { "http" };
    format!("{scheme}://{addr}")
}

#[cfg(test)]
mod tests {
    use super::url_for;

    #[test]
    fn urls_bracket_ipv6_hosts() {
        assert_eq!(
            url_for("127.0.0.1:8080".parse().unwrap(), false),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            url_for("[::1]:8080".parse().unwrap(), true),
            "https://[::1]:8080"
        );
    }
}
