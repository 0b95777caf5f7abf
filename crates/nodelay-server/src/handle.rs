//! [`start`]: a server on a background thread, and the handle that controls it.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::Notify;

use crate::config::ServerConfig;
use crate::listener::{bind, url_for};
use crate::server::{runtime, serve, Protocols};
use crate::state::State;

/// A running server. Cheap to query from any thread; stops on [`shutdown`](Self::shutdown)
/// or when dropped.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    url: String,
    state: Arc<State>,
    /// Wakes the accept loop to stop. `Notify` keeps the wake-up if the loop is
    /// not waiting yet, so an early shutdown is never lost.
    stop: Arc<Notify>,
    /// The thread driving the runtime; taken by the first shutdown.
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Starts a server in the background and returns once it is listening.
///
/// Binding happens on the calling thread, so a port of `0` is already resolved in
/// [`ServerHandle::addr`] and bind errors are returned here. The tokio runtime
/// runs on its own thread (plus `workers` threads when `workers > 1`).
pub fn start(config: ServerConfig) -> io::Result<ServerHandle> {
    let protocols = Protocols::new(&config)?;
    let is_tls = protocols.is_tls();
    let runtime = runtime(config.workers)?;
    let listener = {
        let _context = runtime.enter();
        bind(&config.host, config.port)?
    };
    let addr = listener.local_addr()?;
    let state = Arc::new(State::default());
    let stop = Arc::new(Notify::new());
    let thread = {
        let state = Arc::clone(&state);
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("nodelay-server".to_owned())
            .spawn(move || {
                runtime.block_on(serve(listener, state, protocols, async move {
                    stop.notified().await
                }));
                // Dropping the runtime here cancels every connection task and
                // closes its socket before the thread (and so `shutdown`) ends.
                drop(runtime);
            })?
    };
    Ok(ServerHandle {
        addr,
        url: url_for(addr, is_tls),
        state,
        stop,
        thread: Mutex::new(Some(thread)),
    })
}

impl ServerHandle {
    /// The address the server listens on, with the actual port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT` (`https://` with TLS), no trailing slash; an IPv6
    /// host is bracketed.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// TCP connections accepted since start.
    pub fn connections_accepted(&self) -> u64 {
        self.state.stats.connections()
    }

    /// Requests received since start (a request is counted once its head is parsed).
    pub fn requests_served(&self) -> u64 {
        self.state.stats.requests()
    }

    /// Stops accepting, closes every connection and joins the server thread, so
    /// the port is free when this returns. Idempotent; also done on drop.
    pub fn shutdown(&self) {
        self.stop.notify_one();
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(thread) = thread {
            // Joining our own thread would deadlock; it can only happen if the
            // handle is dropped by code running on the server thread.
            if thread.thread().id() != std::thread::current().id() {
                // A panic on the server thread has already been reported by the
                // panic hook; shutdown has nothing to add.
                let _ = thread.join();
            }
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}
