//! Plain connections watched by another event loop (`aio/watched.rs`): a
//! watcher of the test's own (a thread per watch, waiting in `poll`) drives
//! requests polled on the test's thread, off tokio's reactor; the same
//! connection then serves a runtime task, and comes back. Loopback only.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use nodelay_core::aio::{watching, AsyncClient, Interest, Watcher};
use nodelay_core::{prepare, runtime, Error, RequestParts, Timeouts};
use scripted::Step::*;
use scripted::{ok, write, Server};

/// Longest a test's watch waits for its socket.
const WATCH_LIMIT_MS: i32 = 5_000;

/// Watches each armed descriptor from a thread of its own.
#[derive(Default)]
struct PollWatcher {
    watches: AtomicUsize,
    forgotten: Mutex<Vec<RawFd>>,
}

impl Watcher for PollWatcher {
    fn watch(&self, fd: RawFd, interest: Interest, waker: &Waker) -> io::Result<()> {
        self.watches.fetch_add(1, Ordering::SeqCst);
        let events = match interest {
            Interest::Read => libc::POLLIN,
            Interest::Write => libc::POLLOUT,
        };
        let waker = waker.clone();
        thread::spawn(move || {
            let mut fds = libc::pollfd {
                fd,
                events,
                revents: 0,
            };
            // SAFETY: `fds` is a valid pollfd array of length 1.
            unsafe { libc::poll(&mut fds, 1, WATCH_LIMIT_MS) };
            waker.wake();
        });
        Ok(())
    }

    fn forget(&self, fd: RawFd) {
        self.forgotten.lock().unwrap().push(fd);
    }
}

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread with `watcher` as the thread's watcher,
/// inside the runtime's context (as nodelay-py's bridge does).
fn drive<F: Future>(watcher: &Arc<dyn Watcher>, future: F) -> F::Output {
    let _context = runtime::runtime().enter();
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = watching(watcher, || future.as_mut().poll(&mut cx)) {
            return out;
        }
        thread::park_timeout(Duration::from_millis(100));
    }
}

async fn get(client: &AsyncClient, url: &str) -> Result<(u16, Vec<u8>), Error> {
    let prepared = prepare(&RequestParts {
        method: "GET",
        url,
        headers: &[],
        body: None,
    })?;
    let timeouts: Timeouts = support::each_phase_within(Duration::from_secs(5));
    let exchange = client.send(&prepared, None, timeouts).await?;
    let status = exchange.status();
    Ok((status, exchange.read_whole(1 << 20).await?.body))
}

#[test]
fn a_watched_connection_waits_on_the_watcher_and_moves_between_drivers() {
    // Each answer comes late, so every request waits for its socket.
    let late = |body: &str| {
        [
            ReadRequest,
            Sleep(Duration::from_millis(50)),
            write(ok(body)),
        ]
    };
    let script = [late("one"), late("two"), late("three")].concat();
    let server = Server::start(vec![script]);
    let url = server.url("/");
    let client = AsyncClient::new(support::pool(Some(4), 4));
    let poller = Arc::new(PollWatcher::default());
    let watcher: Arc<dyn Watcher> = poller.clone();

    let first = drive(&watcher, get(&client, &url)).unwrap();
    assert_eq!(first, (200, b"one".to_vec()));
    assert!(poller.watches.load(Ordering::SeqCst) >= 1);
    assert!(poller.forgotten.lock().unwrap().is_empty());

    // A runtime task takes the kept connection back to tokio's reactor.
    let second = runtime::handle().block_on(get(&client, &url)).unwrap();
    assert_eq!(second, (200, b"two".to_vec()));
    assert_eq!(poller.forgotten.lock().unwrap().len(), 1);

    let watches = poller.watches.load(Ordering::SeqCst);
    let third = drive(&watcher, get(&client, &url)).unwrap();
    assert_eq!(third, (200, b"three".to_vec()));
    assert!(poller.watches.load(Ordering::SeqCst) > watches);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn a_watched_connection_dropped_mid_request_leaves_the_watcher() {
    let server = Server::start(vec![vec![ReadRequest, Hang]]);
    let url = server.url("/");
    let client = AsyncClient::new(support::pool(Some(4), 4));
    let poller = Arc::new(PollWatcher::default());
    let watcher: Arc<dyn Watcher> = poller.clone();
    {
        let _context = runtime::runtime().enter();
        let waker = Waker::noop();
        let mut request = Box::pin(get(&client, &url));
        // Polled until it waits for the answer, then dropped (a cancelled task).
        while poller.watches.load(Ordering::SeqCst) == 0 {
            let polled = watching(&watcher, || {
                request.as_mut().poll(&mut Context::from_waker(waker))
            });
            assert!(polled.is_pending());
            thread::sleep(Duration::from_millis(10));
        }
    }
    assert_eq!(poller.forgotten.lock().unwrap().len(), 1);
    assert_eq!(client.idle_connections(), 0);
}
