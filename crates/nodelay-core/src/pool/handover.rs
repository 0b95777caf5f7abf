//! Moving an idle connection from one driver to the other, so a sync
//! request reuses the connection a batch (the tokio driver) left and the
//! other way round. Each face takes an idle connection through here after
//! the liveness check of the driver that left it (which knows its TLS
//! session's buffering).
//!
//! - tokio → blocking: the socket leaves the reactor (`epoll_ctl` DEL) and
//!   turns blocking again; a TLS session goes along (nothing is buffered in
//!   it: the connection is idle and checked).
//! - blocking → tokio: a plain socket turns non-blocking and joins the
//!   reactor (`epoll_ctl` ADD). A TLS session cannot follow: tokio-rustls
//!   builds its stream only around a handshake it makes itself, so a
//!   blocking TLS connection stays with the blocking driver
//!   ([`fits_async`] passes over it).
//!
//! A handover costs two or three syscalls and a read buffer, once per
//! change of driver, never on a request that stays with one driver.

use std::io;
use std::time::Duration;

use super::{Driven, Idle};
use crate::aconnect::AsyncTransport;
use crate::aio::conn::AsyncConn;
use crate::conn::Connection;
use crate::transport::Transport;

/// Whether the blocking driver can take `idle` (a tunnelled async
/// connection cannot be made blocking: its inner TLS session is
/// tokio-rustls's).
pub(super) fn fits_blocking(idle: &Idle) -> bool {
    !matches!(
        &idle.conn,
        Driven::Async(conn) if matches!(conn.transport(), AsyncTransport::NestedTls(_))
    )
}

/// Whether the tokio driver can take `idle` (not a blocking TLS one).
pub(super) fn fits_async(idle: &Idle) -> bool {
    !matches!(
        &idle.conn,
        Driven::Blocking(conn) if !matches!(conn.transport(), Transport::Plain(_))
    )
}

/// `conn` alive and ready for the blocking driver, or `None` (it is closed).
pub(super) fn into_blocking(conn: Driven) -> Option<Connection> {
    match conn {
        Driven::Blocking(mut conn) => conn.is_reusable().then_some(conn),
        Driven::Async(mut conn) => {
            if !conn.is_reusable() {
                return None;
            }
            let transport = conn.into_transport().into_blocking().ok()?;
            // A blocking driver that used this socket before left its socket
            // timeouts on it; a new `Connection` assumes none are set.
            let tcp = transport.tcp();
            tcp.set_read_timeout(None::<Duration>).ok()?;
            tcp.set_write_timeout(None::<Duration>).ok()?;
            Some(Connection::new(transport))
        }
    }
}

/// `conn` alive and ready for the tokio driver (called on the runtime), or
/// `None` (it is closed).
pub(super) fn into_async(conn: Driven) -> Option<AsyncConn> {
    match conn {
        Driven::Async(mut conn) => conn.is_reusable().then_some(conn),
        Driven::Blocking(mut conn) => {
            if !conn.is_reusable() {
                return None;
            }
            let Transport::Plain(tcp) = conn.into_transport() else {
                // `fits_async` keeps TLS connections away from here.
                return None;
            };
            let joined = (|| -> io::Result<_> {
                tcp.set_nonblocking(true)?;
                tokio::net::TcpStream::from_std(tcp)
            })();
            Some(AsyncConn::new(AsyncTransport::Plain(joined.ok()?)))
        }
    }
}
