//! A plain TCP connection whose readiness another event loop reports instead
//! of tokio's reactor: the asyncio loop of the thread that polls the request
//! (nodelay-py's bridge, docs/async.md).
//!
//! A socket registered with tokio's reactor wakes a runtime thread for every
//! answer that arrives (its registration is edge-triggered and always on),
//! and tokio's `poll_read` returns `Pending` until that thread has seen the
//! event, however readable the socket already is. A request the event loop's
//! thread drives itself would then wait for a runtime thread to notice its
//! answer and to wake the loop across threads. So while such a thread drives
//! requests ([`watching`]), each plain connection it checks out leaves the
//! reactor (`AsyncTransport::fit_to_thread` in `aconnect.rs`): reads and writes go to the descriptor itself
//! (`recv`/`send`, non-blocking), and a read or write that would block arms a
//! one-shot watch with the thread's [`Watcher`], which wakes the request when
//! the loop reports the socket ready. A connection checked out by a runtime
//! task joins the reactor again. Each change costs one `epoll_ctl`, once per
//! change of driver, never on a request that stays with one.
//!
//! TLS connections stay with the reactor (tokio-rustls owns their reads).

use std::cell::RefCell;
use std::io::{self, IoSlice, Read, Write};
use std::mem::ManuallyDrop;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What a watch waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Bytes to read, the peer's close, or an error.
    Read,
    /// Room to write, or an error.
    Write,
}

/// An event loop that reports sockets' readiness (see the module comment).
pub trait Watcher: Send + Sync {
    /// Wakes `waker` once `fd` is ready for `interest` (once: a later wait
    /// arms the watch again). May be called on any thread; a socket that is
    /// ready already wakes at the loop's next turn.
    fn watch(&self, fd: RawFd, interest: Interest, waker: &Waker) -> io::Result<()>;

    /// `fd` leaves this watcher (it is about to be closed, or another driver
    /// takes it): no wake-up for it follows.
    fn forget(&self, fd: RawFd);
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Watcher>>> = const { RefCell::new(None) };
}

/// Runs `f` with `watcher` as this thread's watcher: the plain connections
/// checked out meanwhile are watched by it (see the module comment).
pub fn watching<R>(watcher: &Arc<dyn Watcher>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<dyn Watcher>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with_borrow_mut(|current| *current = previous);
        }
    }
    let previous = CURRENT.with_borrow_mut(|current| current.replace(Arc::clone(watcher)));
    let _restore = Restore(previous);
    f()
}

/// This thread's watcher, when its driver watches its own sockets.
pub(crate) fn current_watcher() -> Option<Arc<dyn Watcher>> {
    CURRENT.with_borrow(Clone::clone)
}

/// A non-blocking TCP socket driven through a [`Watcher`].
pub struct WatchedTcp {
    /// Dropped by hand: the watcher forgets the socket before it closes.
    tcp: ManuallyDrop<TcpStream>,
    watcher: Arc<dyn Watcher>,
}

impl WatchedTcp {
    /// Whether `watcher` is the one this socket is watched by.
    pub(crate) fn is_watched_by(&self, watcher: &Arc<dyn Watcher>) -> bool {
        Arc::ptr_eq(&self.watcher, watcher)
    }

    /// `tcp` must be non-blocking.
    pub(crate) fn new(tcp: TcpStream, watcher: Arc<dyn Watcher>) -> Self {
        WatchedTcp {
            tcp: ManuallyDrop::new(tcp),
            watcher,
        }
    }

    /// The socket (still non-blocking), no longer watched.
    pub(crate) fn into_std(self) -> TcpStream {
        let mut this = ManuallyDrop::new(self);
        this.watcher.forget(this.tcp.as_raw_fd());
        // SAFETY: `this` is never used or dropped again, so the stream and
        // the watcher are each taken out exactly once.
        unsafe {
            drop(std::ptr::read(&this.watcher));
            ManuallyDrop::take(&mut this.tcp)
        }
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.tcp.as_raw_fd()
    }

    /// Runs the non-blocking `op`; when it would block, arms a watch for
    /// `interest` with the task's waker and returns `Pending`.
    fn attempt<T>(
        &self,
        interest: Interest,
        cx: &Context<'_>,
        mut op: impl FnMut(&TcpStream) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        loop {
            match op(&self.tcp) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Arming re-checks readiness (epoll does on `EPOLL_CTL_MOD`
                    // and `ADD`), so bytes that came since `op` are not missed.
                    return match self.watcher.watch(self.raw_fd(), interest, cx.waker()) {
                        Ok(()) => Poll::Pending,
                        Err(e) => Poll::Ready(Err(e)),
                    };
                }
                done => return Poll::Ready(done),
            }
        }
    }
}

impl Drop for WatchedTcp {
    fn drop(&mut self) {
        self.watcher.forget(self.tcp.as_raw_fd());
        // SAFETY: dropped once, here; `self.tcp` is not used after.
        unsafe { ManuallyDrop::drop(&mut self.tcp) }
    }
}

impl AsyncRead for WatchedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let dst = buf.initialize_unfilled();
        let n = std::task::ready!(self.attempt(Interest::Read, cx, |mut tcp| tcp.read(dst)))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for WatchedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.attempt(Interest::Write, cx, |mut tcp| tcp.write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.attempt(Interest::Write, cx, |mut tcp| tcp.write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(())) // nothing is buffered here
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.tcp.shutdown(std::net::Shutdown::Write))
    }
}
