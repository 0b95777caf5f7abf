//! The async connect: TCP (and TLS with ALPN) on the process runtime, within
//! the connect deadline. Shared by the HTTP/2 driver and the async client.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::deadline::{Budget, Deadlines};
use crate::error::{Error, ErrorKind};
use crate::target::Origin;
use crate::tls::{handshake_error, server_name, TlsSetup};
use crate::transport::Transport;

/// The byte stream under an async connection: plain TCP or TLS over TCP.
pub(crate) enum AsyncTransport {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncTransport {
    /// Turns the connection into a blocking one for the HTTP/1.1 path (when
    /// ALPN chose `http/1.1`), keeping its TLS session. Must not be called
    /// with bytes pending in the TLS layer's plaintext buffer (nothing was
    /// sent yet, so nothing is).
    pub(crate) fn into_blocking(self) -> Result<Transport, Error> {
        let to_std = |tcp: TcpStream| {
            let std = tcp.into_std()?;
            std.set_nonblocking(false)?;
            Ok::<_, io::Error>(std)
        };
        let failed = |e: io::Error| {
            Error::new(ErrorKind::Connect, format!("socket setup failed: {e}")).with_source(e)
        };
        Ok(match self {
            AsyncTransport::Plain(tcp) => Transport::Plain(to_std(tcp).map_err(failed)?),
            AsyncTransport::Tls(tls) => {
                let (tcp, conn) = tls.into_inner();
                Transport::Tls(Box::new(rustls::StreamOwned::new(
                    conn,
                    to_std(tcp).map_err(failed)?,
                )))
            }
        })
    }
}

/// Connects to `origin` (TLS for `https`, offering `alpn` in preference
/// order) within the connect (and total) deadline. Returns the transport and
/// the protocol the server chose by ALPN (`None` for plain TCP, or when the
/// server chose none). Must run on the process runtime (`crate::runtime`).
pub(crate) async fn connect(
    origin: &Origin,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<(AsyncTransport, Option<Vec<u8>>), Error> {
    let timed_out = || {
        Error::new(
            ErrorKind::ConnectTimeout,
            format!("timed out connecting to {}:{}", origin.host, origin.port),
        )
    };
    let attempt = connect_unbounded(origin, tls, alpn);
    match deadlines.budget(deadlines.timeouts.connect) {
        Budget::Expired => Err(timed_out()),
        Budget::Wait(None) => attempt.await,
        Budget::Wait(Some(limit)) => tokio::time::timeout(limit, attempt)
            .await
            .unwrap_or_else(|_| Err(timed_out())),
    }
}

async fn connect_unbounded(
    origin: &Origin,
    tls: &TlsSetup,
    alpn: &[&[u8]],
) -> Result<(AsyncTransport, Option<Vec<u8>>), Error> {
    let tcp = connect_tcp(origin).await?;
    if origin.scheme != "https" {
        return Ok((AsyncTransport::Plain(tcp), None));
    }
    let config = tls.config_with_alpn(alpn)?;
    let name = server_name(&origin.host)?;
    let stream = TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(handshake_error)?;
    let chosen = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    Ok((AsyncTransport::Tls(Box::new(stream)), chosen))
}

/// Resolves the origin and connects to the first address that answers, with
/// `TCP_NODELAY` (whole requests leave in one write; Nagle only adds latency).
async fn connect_tcp(origin: &Origin) -> Result<TcpStream, Error> {
    let addrs = tokio::net::lookup_host((&*origin.host, origin.port))
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::Connect,
                format!("failed to resolve {}: {e}", origin.host),
            )
            .with_source(e)
        })?;
    let mut last_error = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
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
        Some(e) => Error::new(
            ErrorKind::Connect,
            format!("failed to connect to {}:{}: {e}", origin.host, origin.port),
        )
        .with_source(e),
        None => Error::new(
            ErrorKind::Connect,
            format!("{} resolves to no address", origin.host),
        ),
    })
}

impl AsyncRead for AsyncTransport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_read(cx, buf),
            AsyncTransport::Tls(s) => Pin::new(&mut **s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for AsyncTransport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_write(cx, buf),
            AsyncTransport::Tls(s) => Pin::new(&mut **s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            AsyncTransport::Tls(s) => Pin::new(&mut **s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            AsyncTransport::Plain(s) => s.is_write_vectored(),
            AsyncTransport::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_flush(cx),
            AsyncTransport::Tls(s) => Pin::new(&mut **s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            AsyncTransport::Tls(s) => Pin::new(&mut **s).poll_shutdown(cx),
        }
    }
}
