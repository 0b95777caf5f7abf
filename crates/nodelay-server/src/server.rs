//! The engine: a tokio runtime, the accept loop and one hyper connection task per
//! socket; plus [`run_until`], the blocking way to run it.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_rustls::TlsAcceptor;

use crate::config::ServerConfig;
use crate::counted::Counted;
use crate::limits::ACCEPT_ERROR_BACKOFF;
use crate::listener::{bind, url_for};
use crate::routes;
use crate::state::State;
use crate::tls::{acceptor, ALPN_H2};

/// Which protocols a server speaks, fixed at start.
#[derive(Clone)]
pub(crate) struct Protocols {
    /// HTTP/2 next to HTTP/1.1 (h2c prior knowledge, or `h2` by ALPN).
    http2: bool,
    /// Present for an HTTPS server.
    tls: Option<TlsAcceptor>,
}

impl Protocols {
    pub(crate) fn new(config: &ServerConfig) -> io::Result<Protocols> {
        let tls = match &config.tls {
            Some(identity) => Some(acceptor(identity, config.http2)?),
            None => None,
        };
        Ok(Protocols {
            http2: config.http2,
            tls,
        })
    }

    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }
}

/// Name of the server's threads, so they are recognisable in `top -H` and profiles.
const THREAD_NAME: &str = "nodelay-server";

/// A runtime with `workers` threads. One worker means a current-thread runtime:
/// everything runs on the thread that drives it, with no cross-thread wake-ups.
pub(crate) fn runtime(workers: usize) -> io::Result<Runtime> {
    let mut builder = if workers <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(workers);
        builder
    };
    builder
        .enable_io()
        .enable_time()
        .thread_name(THREAD_NAME)
        .build()
}

/// Accepts connections on `listener` until `stop` resolves. Connection tasks are
/// not waited for: dropping the runtime afterwards cancels them and closes their
/// sockets, so a slow `/delay` cannot hold up a shutdown.
pub(crate) async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    protocols: Protocols,
    stop: impl Future<Output = ()>,
) {
    let mut stop = pin!(stop);
    loop {
        let accepted = tokio::select! {
            // Checked first so a stop request wins over a flood of connections.
            biased;
            () = &mut stop => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _peer)) => {
                state.stats.connection_accepted();
                tokio::spawn(serve_connection(
                    stream,
                    Arc::clone(&state),
                    protocols.clone(),
                ));
            }
            // Typically EMFILE; the listener is still fine, so wait and go on.
            Err(_) => tokio::time::sleep(ACCEPT_ERROR_BACKOFF).await,
        }
    }
}

/// Serves one socket until the client closes it or asks to (`Connection:
/// close`); keep-alive is hyper's default. Which protocol: HTTP/1.1, or on a
/// plain port with HTTP/2 on whatever the first bytes say (the h2c preface or
/// an HTTP/1.1 request line), or on a TLS port what ALPN chose.
async fn serve_connection(stream: TcpStream, state: Arc<State>, protocols: Protocols) {
    // Small responses must leave at once, not wait for Nagle's delayed ACK dance.
    // A failure here only costs latency, so it is not fatal.
    let _ = stream.set_nodelay(true);
    let stream = Counted::new(stream, Arc::clone(&state));
    let service = service_fn(move |req| routes::handle(req, Arc::clone(&state)));
    // Errors are the client's doing (reset, malformed request, failed
    // handshake) and end only this connection; a benchmark server does not log
    // per connection.
    // hyper's HTTP/1.1 defaults are kept on purpose: vectored writes (head and
    // body in one `writev`), keep-alive, and no `pipeline_flush`, which hyper
    // marks experimental and which lets the write buffer grow without bound
    // under pipelining.
    match protocols.tls {
        None if protocols.http2 => {
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
        None => {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
        Some(acceptor) => {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let h2 = tls.get_ref().1.alpn_protocol() == Some(ALPN_H2);
            if h2 {
                let _ = http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            } else {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            }
        }
    }
}

/// Runs a server on the calling thread until `stop` resolves (the `serve` command).
///
/// Binds first, so bind errors are returned; then calls `on_ready` with the
/// server's URL (`http://127.0.0.1:PORT`, `https://` with TLS) and serves. `stop` is polled once before
/// `on_ready`, inside the runtime: a stop future that installs signal handlers
/// when first polled has installed them by the time readiness is announced, so a
/// signal sent right after it stops the server cleanly.
pub fn run_until<F: Future<Output = ()>>(
    config: ServerConfig,
    on_ready: impl FnOnce(&str),
    stop: F,
) -> io::Result<()> {
    let protocols = Protocols::new(&config)?;
    let runtime = runtime(config.workers)?;
    let listener = {
        let _context = runtime.enter();
        bind(&config.host, config.port)?
    };
    let url = url_for(listener.local_addr()?, protocols.is_tls());
    let state = Arc::new(State::default());
    runtime.block_on(async move {
        let mut stop = pin!(stop);
        if poll_fn(|cx| Poll::Ready(stop.as_mut().poll(cx)))
            .await
            .is_ready()
        {
            return;
        }
        on_ready(&url);
        serve(listener, state, protocols, stop).await;
    });
    Ok(())
}
