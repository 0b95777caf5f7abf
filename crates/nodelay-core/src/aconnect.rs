//! Opening connections on the tokio runtime: TCP (then TLS) within the
//! connect deadline, with the TLS rules of `tls.rs` (verification, CA file,
//! client certificate, SNI). The async twin of `connect.rs`, shared by the
//! async HTTP/1.1 driver (`aio/`) and the HTTP/2 driver (`h2/`); and the
//! async twin of `tunnel.rs`'s routes (to a forwarding proxy, a CONNECT
//! tunnel, or through a SOCKS proxy), over the same sans-IO CONNECT head and
//! answer parser and the same SOCKS handshake (`socks.rs`).

use std::future::Future;
use std::io::{self, IoSlice};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::aio::watched::{current_watcher, WatchedTcp};
use crate::connect::connect_timed_out;
use crate::deadline::{Budget, Deadlines};
use crate::error::{Error, ErrorKind};
use crate::proxy::{ConnKey, Proxy, Route, SocksProxy};
use crate::socks::{Handshake, Next, MAX_REPLY_BYTES};
use crate::target::Origin;
use crate::tls::{handshake_error, is_timeout, server_name, tls_timed_out, TlsSetup};
use crate::transport::Transport;
use crate::tunnel::{
    connect_head, io_failure, proxy_connect_error, socks_closed, socks_connect_error, socks_error,
    socks_handshake, socks_resolves_here, timed_out, unexpected_bytes, ConnectAnswer,
    CONNECT_READ_BYTES, DURING_CONNECT, DURING_SOCKS,
};

/// The byte stream under an async connection: plain TCP or TLS over TCP.
pub enum AsyncTransport {
    /// Cleartext TCP (`http://`, or h2c).
    Plain(TcpStream),
    /// TLS over TCP (`https://`, or a tunnel through an `http://` proxy).
    Tls(Box<TlsStream<TcpStream>>),
    /// The origin's TLS inside an `https://` proxy's (a CONNECT tunnel).
    NestedTls(Box<TlsStream<TlsStream<TcpStream>>>),
    /// Cleartext TCP whose readiness an event loop reports, off tokio's
    /// reactor (`aio/watched.rs`).
    Watched(WatchedTcp),
}

impl AsyncTransport {
    /// This transport for the driver of this thread: a plain connection
    /// watched by this thread's watcher when it has one, else on tokio's
    /// reactor. Must be called inside the runtime's context (joining the
    /// reactor needs it).
    pub(crate) fn fit_to_thread(self) -> io::Result<AsyncTransport> {
        Ok(match (self, current_watcher()) {
            (AsyncTransport::Plain(tcp), Some(watcher)) => {
                AsyncTransport::Watched(WatchedTcp::new(tcp.into_std()?, watcher))
            }
            (AsyncTransport::Watched(watched), Some(watcher)) => {
                if watched.is_watched_by(&watcher) {
                    AsyncTransport::Watched(watched)
                } else {
                    AsyncTransport::Watched(WatchedTcp::new(watched.into_std(), watcher))
                }
            }
            (AsyncTransport::Watched(watched), None) => {
                AsyncTransport::Plain(tokio::net::TcpStream::from_std(watched.into_std())?)
            }
            (other, _) => other,
        })
    }

    /// The socket's descriptor (for the idle liveness check).
    pub fn raw_fd(&self) -> RawFd {
        match self {
            AsyncTransport::Plain(s) => s.as_raw_fd(),
            AsyncTransport::Tls(s) => s.get_ref().0.as_raw_fd(),
            AsyncTransport::NestedTls(s) => s.get_ref().0.get_ref().0.as_raw_fd(),
            AsyncTransport::Watched(s) => s.raw_fd(),
        }
    }

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
            AsyncTransport::Watched(watched) => {
                let std = watched.into_std();
                std.set_nonblocking(false).map_err(failed)?;
                Transport::Plain(std)
            }
            AsyncTransport::Tls(tls) => {
                let (tcp, conn) = tls.into_inner();
                Transport::Tls(Box::new(rustls::StreamOwned::new(
                    conn,
                    to_std(tcp).map_err(failed)?,
                )))
            }
            // HTTP/2 never goes through an HTTP proxy (as on the sync path),
            // so ALPN never hands over a connection tunnelled through one.
            AsyncTransport::NestedTls(_) => {
                return Err(Error::new(
                    ErrorKind::Connect,
                    "a tunnelled connection cannot be handed to the blocking driver",
                ))
            }
        })
    }
}

/// Opens the connection a pool key describes (the async `tunnel::connect_route`):
/// to the origin, to the proxy that forwards requests, or a CONNECT tunnel
/// through the proxy with the origin's TLS inside. `alpn` is offered to the
/// origin (a proxy is always spoken to in HTTP/1.1).
pub(crate) async fn connect_route(
    key: &ConnKey,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<AsyncTransport, Error> {
    match &key.route {
        Route::Direct => Ok(connect(&key.origin, tls, alpn, deadlines).await?.0),
        Route::Forward(proxy) => connect_proxy(proxy, tls, deadlines).await,
        Route::Tunnel(proxy) => open_tunnel(proxy, &key.origin, tls, alpn, deadlines).await,
        Route::Socks(proxy) => Ok(open_socks(proxy, &key.origin, tls, alpn, deadlines)
            .await?
            .0),
    }
}

/// Opens a connection to the origin of `key` on a route where the
/// connection is the origin's own (direct, or a SOCKS tunnel: the routes
/// HTTP/2 may take, `Route::allows_h2`), offering `alpn`; returns the
/// protocol the origin chose, as [`connect`] does.
pub(crate) async fn connect_origin(
    key: &ConnKey,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<(AsyncTransport, Option<Vec<u8>>), Error> {
    match &key.route {
        Route::Socks(proxy) => open_socks(proxy, &key.origin, tls, alpn, deadlines).await,
        _ => connect(&key.origin, tls, alpn, deadlines).await,
    }
}

/// Through a SOCKS proxy: TCP to it, the handshake (`socks.rs`), then the
/// TLS session with an `https` origin offering `alpn`; all within the
/// connect deadline. Returns the protocol ALPN chose, if any.
async fn open_socks(
    proxy: &SocksProxy,
    origin: &Origin,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<(AsyncTransport, Option<Vec<u8>>), Error> {
    let resolved = if socks_resolves_here(proxy, origin) {
        lookup(origin, deadlines).await?
    } else {
        Vec::new()
    };
    let mut handshake = socks_handshake(proxy, origin, &resolved)?;
    let mut tcp = connect_tcp(&proxy.origin, tls.dial().local_address, deadlines)
        .await
        .map_err(|e| socks_connect_error(e, proxy))?;
    within(
        deadlines,
        run_socks(&mut tcp, &mut handshake, proxy, origin, deadlines),
    )
    .await
    .ok_or_else(|| timed_out(proxy, deadlines))??;
    if origin.scheme != "https" {
        return Ok((AsyncTransport::Plain(tcp), None));
    }
    let stream = tls_over(tcp, origin, tls, alpn, deadlines).await?;
    let protocol = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    Ok((AsyncTransport::Tls(Box::new(stream)), protocol))
}

/// Moves the handshake's bytes over the tokio socket (the caller bounds the
/// whole exchange by the connect deadline).
async fn run_socks(
    tcp: &mut TcpStream,
    handshake: &mut Handshake,
    proxy: &SocksProxy,
    origin: &Origin,
    deadlines: &Deadlines,
) -> Result<(), Error> {
    let failed = |e| io_failure(e, proxy, DURING_SOCKS, deadlines);
    let mut chunk = [0u8; MAX_REPLY_BYTES];
    loop {
        match handshake.next() {
            Next::Done => return Ok(()),
            Next::Send(bytes) => {
                let n = tcp.write(bytes).await.map_err(failed)?;
                if n == 0 {
                    return Err(failed(io::ErrorKind::WriteZero.into()));
                }
                handshake.sent(n);
            }
            Next::Receive(wanted) => {
                let n = tcp
                    .read(&mut chunk[..wanted.min(MAX_REPLY_BYTES)])
                    .await
                    .map_err(failed)?;
                if n == 0 {
                    return Err(socks_closed(handshake, proxy));
                }
                handshake
                    .received(&chunk[..n])
                    .map_err(|e| socks_error(e, proxy, origin))?;
            }
        }
    }
}

/// ALPN offered to a proxy (its CONNECT and forwarded requests are HTTP/1.1).
const ALPN_PROXY: &[&[u8]] = &[crate::tls::ALPN_HTTP11];

async fn connect_proxy(
    proxy: &Proxy,
    tls: &TlsSetup,
    deadlines: &Deadlines,
) -> Result<AsyncTransport, Error> {
    match connect(&proxy.origin, tls, ALPN_PROXY, deadlines).await {
        Ok((transport, _)) => Ok(transport),
        Err(e) => Err(proxy_connect_error(e, proxy)),
    }
}

/// CONNECT through `proxy` (its whole exchange within the connect deadline),
/// then the TLS session with an `https` origin inside the tunnel.
async fn open_tunnel(
    proxy: &Proxy,
    origin: &Origin,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<AsyncTransport, Error> {
    let mut stream = connect_proxy(proxy, tls, deadlines).await?;
    let request = connect_head(proxy.authorization(), origin);
    within(
        deadlines,
        connect_exchange(&mut stream, &request, proxy, origin, deadlines),
    )
    .await
    .ok_or_else(|| timed_out(proxy, deadlines))??;
    if origin.scheme != "https" {
        return Ok(stream);
    }
    match stream {
        AsyncTransport::Plain(tcp) => Ok(AsyncTransport::Tls(Box::new(
            tls_over(tcp, origin, tls, alpn, deadlines).await?,
        ))),
        AsyncTransport::Tls(outer) => Ok(AsyncTransport::NestedTls(Box::new(
            tls_over(*outer, origin, tls, alpn, deadlines).await?,
        ))),
        // A new connection is never watched yet (`aio/watched.rs` watches
        // checked-out ones).
        AsyncTransport::NestedTls(_) | AsyncTransport::Watched(_) => {
            unreachable!("a proxy connection is never nested or watched")
        }
    }
}

/// Writes the CONNECT head and reads the answer until the tunnel is open.
async fn connect_exchange(
    stream: &mut AsyncTransport,
    request: &[u8],
    proxy: &Proxy,
    origin: &Origin,
    deadlines: &Deadlines,
) -> Result<(), Error> {
    stream
        .write_all(request)
        .await
        .map_err(|e| io_failure(e, proxy, DURING_CONNECT, deadlines))?;
    stream
        .flush()
        .await
        .map_err(|e| io_failure(e, proxy, DURING_CONNECT, deadlines))?;
    let mut answer = ConnectAnswer::default();
    let mut chunk = vec![0u8; CONNECT_READ_BYTES];
    loop {
        if answer.parse(proxy, origin)? {
            if has_plaintext_buffered(stream) {
                return Err(unexpected_bytes(proxy));
            }
            return Ok(());
        }
        match stream.read(&mut chunk).await {
            Ok(0) => return Err(answer.closed(proxy)),
            Ok(n) => answer.received(&chunk[..n]),
            Err(e) => return Err(io_failure(e, proxy, DURING_CONNECT, deadlines)),
        }
    }
}

/// Whether an `https://` proxy's TLS session holds decrypted bytes we have
/// not read (they would follow the CONNECT answer).
fn has_plaintext_buffered(stream: &mut AsyncTransport) -> bool {
    match stream {
        AsyncTransport::Tls(s) => s
            .get_mut()
            .1
            .process_new_packets()
            .map_or(true, |state| state.plaintext_bytes_to_read() > 0),
        _ => false,
    }
}

/// The TLS handshake with `origin` over `io`, within the connect deadline.
async fn tls_over<IO: AsyncRead + AsyncWrite + Unpin>(
    io: IO,
    origin: &Origin,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<TlsStream<IO>, Error> {
    let config = tls.config_with_alpn(alpn)?;
    let name = server_name(&origin.host)?;
    within(deadlines, TlsConnector::from(config).connect(name, io))
        .await
        .ok_or_else(|| tls_timed_out(&origin.host, deadlines))?
        .map_err(|e| {
            if is_timeout(&e) {
                tls_timed_out(&origin.host, deadlines).with_source(e)
            } else {
                handshake_error(e)
            }
        })
}

/// Resolves the origin, connects to the first address that answers and, for
/// https, runs the TLS handshake offering `alpn`; each step bounded by what is
/// left of the connect (and total) deadline. Returns the transport and the
/// protocol the server chose by ALPN, if any. `TCP_NODELAY` is always set:
/// whole requests leave in one write, so Nagle can only add latency.
pub async fn connect(
    origin: &Origin,
    tls: &TlsSetup,
    alpn: &[&[u8]],
    deadlines: &Deadlines,
) -> Result<(AsyncTransport, Option<Vec<u8>>), Error> {
    // Clock reads only when asked for (`nodelay get -v`, see `timing`).
    let started = crate::timing::enabled().then(Instant::now);
    let dial = tls.dial();
    let tcp = match &dial.uds {
        Some(path) => connect_uds(path, origin, deadlines).await?,
        None => connect_tcp(origin, dial.local_address, deadlines).await?,
    };
    let connected = started.map(|started| (started, Instant::now()));
    let note = |tls: Option<Duration>| {
        if let Some((started, connected)) = connected {
            crate::timing::note(crate::timing::ConnectTimings {
                dns: None,
                tcp: connected - started,
                tls,
            });
        }
    };
    if origin.scheme != "https" {
        note(None);
        return Ok((AsyncTransport::Plain(tcp), None));
    }
    // One config per ALPN list, built once per client (see `TlsSetup`).
    let stream = tls_over(tcp, origin, tls, alpn, deadlines).await?;
    note(connected.map(|(_, connected)| connected.elapsed()));
    let protocol = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    Ok((AsyncTransport::Tls(Box::new(stream)), protocol))
}

/// Runs `fut` within the connect budget; `None` when it ran out.
async fn within<F: Future>(deadlines: &Deadlines, fut: F) -> Option<F::Output> {
    match deadlines.budget(deadlines.timeouts.connect) {
        Budget::Expired => None,
        Budget::Wait(None) => Some(fut.await),
        Budget::Wait(Some(t)) => tokio::time::timeout(t, fut).await.ok(),
    }
}

/// The Unix domain socket at `path` (see `connect::connect_uds`, whose
/// blocking connect runs on the runtime's blocking pool), handed to tokio.
async fn connect_uds(
    path: &std::path::Path,
    origin: &Origin,
    deadlines: &Deadlines,
) -> Result<TcpStream, Error> {
    let (path, origin_, deadlines_) = (path.to_owned(), origin.clone(), *deadlines);
    let connected = tokio::task::spawn_blocking(move || {
        crate::connect::connect_uds(
            &path,
            &origin_,
            &deadlines_,
            &crate::interrupt::NeverInterrupt,
        )
    })
    .await
    .map_err(|e| Error::new(ErrorKind::Connect, format!("connect task failed: {e}")))??;
    connected
        .set_nonblocking(true)
        .map_err(|e| io_error(e, origin))?;
    TcpStream::from_std(connected).map_err(|e| io_error(e, origin))
}

fn io_error(e: io::Error, origin: &Origin) -> Error {
    Error::new(
        ErrorKind::Connect,
        format!("failed to connect to {}:{}: {e}", origin.host, origin.port),
    )
    .with_source(e)
}

/// One TCP connect to `addr`, from `local` when given (bound first).
async fn connect_addr(addr: SocketAddr, local: Option<IpAddr>) -> io::Result<TcpStream> {
    let Some(ip) = local else {
        return TcpStream::connect(addr).await;
    };
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.bind(SocketAddr::new(ip, 0))?;
    socket.connect(addr).await
}

/// The addresses of `origin`. tokio resolves on its blocking pool
/// (getaddrinfo has no timeout of its own); literal IPs skip it. Resolution
/// counts against the connect budget.
async fn lookup(origin: &Origin, deadlines: &Deadlines) -> Result<Vec<SocketAddr>, Error> {
    within(
        deadlines,
        tokio::net::lookup_host((&*origin.host, origin.port)),
    )
    .await
    .ok_or_else(|| connect_timed_out(origin, deadlines))?
    .map(Iterator::collect)
    .map_err(|e| {
        Error::new(
            ErrorKind::Connect,
            format!("failed to resolve {}: {e}", origin.host),
        )
        .with_source(e)
    })
}

async fn connect_tcp(
    origin: &Origin,
    local: Option<IpAddr>,
    deadlines: &Deadlines,
) -> Result<TcpStream, Error> {
    let timed_out = || connect_timed_out(origin, deadlines);
    let addrs = lookup(origin, deadlines).await?;
    let mut last_error: Option<io::Error> = None;
    for addr in addrs {
        let Some(attempt) = within(deadlines, connect_addr(addr, local)).await else {
            return Err(timed_out());
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
        Some(e) => Error::new(
            ErrorKind::Connect,
            format!("failed to connect to {}:{}: {e}", origin.host, origin.port),
        )
        .with_source(e),
        None => timed_out(),
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
            AsyncTransport::Watched(s) => Pin::new(s).poll_read(cx, buf),
            // A peer closing without close_notify ends the stream like a TCP
            // EOF (as on the sync path); framing still detects truncation.
            AsyncTransport::Tls(s) => match Pin::new(s.as_mut()).poll_read(cx, buf) {
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    Poll::Ready(Ok(()))
                }
                other => other,
            },
            AsyncTransport::NestedTls(s) => match Pin::new(s.as_mut()).poll_read(cx, buf) {
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    Poll::Ready(Ok(()))
                }
                other => other,
            },
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
            AsyncTransport::Watched(s) => Pin::new(s).poll_write(cx, buf),
            AsyncTransport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            AsyncTransport::NestedTls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            AsyncTransport::Watched(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            AsyncTransport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            AsyncTransport::NestedTls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            AsyncTransport::Plain(s) => s.is_write_vectored(),
            AsyncTransport::Watched(s) => s.is_write_vectored(),
            AsyncTransport::Tls(s) => s.is_write_vectored(),
            AsyncTransport::NestedTls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_flush(cx),
            AsyncTransport::Watched(s) => Pin::new(s).poll_flush(cx),
            AsyncTransport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            AsyncTransport::NestedTls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncTransport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            AsyncTransport::Watched(s) => Pin::new(s).poll_shutdown(cx),
            AsyncTransport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            AsyncTransport::NestedTls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
