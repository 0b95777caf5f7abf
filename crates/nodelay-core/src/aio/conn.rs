//! One async HTTP/1.1 connection: the transport, its reused read buffer, and
//! reads and writes bounded by the request's deadlines (tokio timers, armed
//! only when an operation has to wait).

use std::future::Future;
use std::io::{self, IoSlice};
use std::os::fd::RawFd;
use std::task::{Context, Waker};
use std::time::Duration;

use nodelay_proto::ReadBuffer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::aconnect::AsyncTransport;
use crate::conn::io_error;
use crate::deadline::{Deadlines, Phase};
use crate::error::{Error, ErrorKind};
use crate::limits::READ_BUFFER_BYTES;

pub(crate) struct AsyncConn {
    io: AsyncTransport,
    buf: ReadBuffer,
}

impl AsyncConn {
    pub fn new(io: AsyncTransport) -> Self {
        AsyncConn {
            io,
            buf: ReadBuffer::new(READ_BUFFER_BYTES),
        }
    }

    /// Closes an inherited connection in a forked child without touching
    /// the parent's reactor: dropping the tokio socket would deregister it
    /// from the epoll instance the child shares with the parent (and so
    /// break the parent's connection); closing our descriptor does not.
    pub fn abandon(self) {
        // SAFETY: the descriptor is owned by this connection, which is
        // forgotten right after, so nothing uses or closes it again.
        unsafe {
            libc::close(self.io.raw_fd());
        }
        std::mem::forget(self);
    }

    /// This connection for the driver of the calling thread: watched by its
    /// event loop, or on tokio's reactor (`aio/watched.rs`).
    pub(crate) fn fit_to_thread(self) -> io::Result<Self> {
        Ok(AsyncConn {
            io: self.io.fit_to_thread()?,
            buf: self.buf,
        })
    }

    /// The byte stream (the pool's handover between drivers looks at its kind).
    pub(crate) fn transport(&self) -> &AsyncTransport {
        &self.io
    }

    /// The byte stream, for another driver (the pool's handover; the
    /// connection is idle, nothing is buffered).
    pub(crate) fn into_transport(self) -> AsyncTransport {
        self.io
    }

    /// Received bytes not consumed yet.
    pub fn buffered(&self) -> &[u8] {
        self.buf.buffered()
    }

    /// The read buffer (the exchange hands its bytes to the protocol's
    /// state machine and consumes what it used).
    pub fn read_buffer(&mut self) -> &mut ReadBuffer {
        &mut self.buf
    }

    pub fn consume(&mut self, n: usize) {
        self.buf.consume(n);
    }

    /// The socket's descriptor (an upload watches it for an early answer
    /// while a write waits, `aio/upload.rs`).
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.io.raw_fd()
    }

    /// Zero-timeout readability check of an idle connection (as on the sync
    /// path): a readable idle socket was closed by the peer or carries bytes
    /// nobody asked for. TLS 1.3 session tickets make it readable too; those
    /// are fed to rustls and do not count.
    pub fn is_reusable(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        let fd = self.io.raw_fd();
        if !poll_readable(fd) {
            return true;
        }
        let AsyncTransport::Tls(stream) = &mut self.io else {
            return false;
        };
        let (_, tls) = stream.get_mut();
        let mut raw = [0u8; 4096];
        loop {
            // SAFETY: `raw` is a valid writable buffer of `raw.len()` bytes
            // and `fd` is the open socket owned by this connection.
            let n =
                unsafe { libc::recv(fd, raw.as_mut_ptr().cast(), raw.len(), libc::MSG_DONTWAIT) };
            if n == 0 {
                return false;
            }
            if n < 0 {
                let e = io::Error::last_os_error();
                return e.kind() == io::ErrorKind::WouldBlock && !poll_readable(fd);
            }
            let mut input = &raw[..n as usize];
            while !input.is_empty() {
                if tls.read_tls(&mut input).is_err() {
                    return false;
                }
                match tls.process_new_packets() {
                    Ok(state)
                        if state.plaintext_bytes_to_read() == 0 && !state.peer_has_closed() => {}
                    _ => return false,
                }
            }
        }
    }

    /// Whether the runtime has seen this connection become readable since its
    /// last read: the peer closed it or sent bytes nobody asked for (or, over
    /// TLS, a session ticket). No syscall: the reactor's readiness, which a
    /// read that drained the socket (a short read) cleared, is consulted with
    /// a no-op waker. For a connection its holder just used, in place of the
    /// pool's `poll()` check; `true` sends it through that full check.
    pub fn readiness_seen(&self) -> bool {
        let tcp = match &self.io {
            // Off the reactor: the pool's full check decides.
            AsyncTransport::Watched(_) => return true,
            AsyncTransport::Plain(s) => s,
            AsyncTransport::Tls(s) => s.get_ref().0,
            AsyncTransport::NestedTls(s) => s.get_ref().0.get_ref().0,
        };
        let mut cx = Context::from_waker(Waker::noop());
        tcp.poll_read_ready(&mut cx).is_ready()
    }

    /// Reads more bytes into the buffer, growing it up to `max_buffer` when it
    /// is full (response heads may exceed one buffer). Returns 0 at EOF.
    pub async fn fill(&mut self, max_buffer: usize, deadlines: &Deadlines) -> Result<usize, Error> {
        let Some(spare) = self.buf.spare(max_buffer) else {
            return Err(Error::new(
                ErrorKind::RemoteProtocol,
                "read buffer limit reached",
            ));
        };
        let n = read_timed(deadlines, self.io.read(spare)).await?;
        self.buf.filled(n);
        Ok(n)
    }

    /// Reads straight into `dst`, bypassing the buffer. Returns 0 at EOF.
    pub async fn read_direct(
        &mut self,
        dst: &mut [u8],
        deadlines: &Deadlines,
    ) -> Result<usize, Error> {
        debug_assert!(self.buf.is_empty(), "buffered bytes must be drained first");
        read_timed(deadlines, self.io.read(dst)).await
    }

    /// Writes `wire` and then `body` (one write for a small request, one
    /// vectored write for head plus a large body), then flushes (TLS).
    pub async fn write_all(
        &mut self,
        wire: &[u8],
        body: Option<&[u8]>,
        deadlines: &Deadlines,
    ) -> Result<(), Error> {
        let mut slices = [IoSlice::new(wire), IoSlice::new(body.unwrap_or_default())];
        let count = if body.is_some_and(|b| !b.is_empty()) {
            2
        } else {
            1
        };
        self.write_parts(&mut slices[..count], deadlines).await
    }

    /// Writes every slice of `parts` in order (vectored), then flushes.
    pub async fn write_parts(
        &mut self,
        mut parts: &mut [IoSlice<'_>],
        deadlines: &Deadlines,
    ) -> Result<(), Error> {
        IoSlice::advance_slices(&mut parts, 0);
        while !parts.is_empty() {
            let written = if parts.len() == 1 {
                write_timed(deadlines, self.io.write(&parts[0])).await?
            } else {
                write_timed(deadlines, self.io.write_vectored(parts)).await?
            };
            if written == 0 {
                return Err(Error::new(
                    ErrorKind::Write,
                    "connection closed while sending",
                ));
            }
            IoSlice::advance_slices(&mut parts, written);
        }
        write_timed(deadlines, self.io.flush()).await
    }
}

/// Runs one I/O operation within `budget`; `None` when the timer fired first.
async fn timed<T>(
    budget: Option<Duration>,
    op: impl Future<Output = io::Result<T>>,
) -> Option<io::Result<T>> {
    match budget {
        None => Some(op.await),
        Some(t) => tokio::time::timeout(t, op).await.ok(),
    }
}

/// One read within the budget `Deadlines::read_budget` gives (the rest of the
/// head's deadline, or the read timeout for a body read).
async fn read_timed<T>(
    deadlines: &Deadlines,
    op: impl Future<Output = io::Result<T>>,
) -> Result<T, Error> {
    let budget = deadlines.read_budget(Duration::ZERO)?;
    match timed(budget, op).await {
        Some(Ok(n)) => Ok(n),
        Some(Err(e)) => Err(io_error(ErrorKind::Read, e)),
        None => Err(deadlines.timed_out(deadlines.read_phase())),
    }
}

async fn write_timed<T>(
    deadlines: &Deadlines,
    op: impl Future<Output = io::Result<T>>,
) -> Result<T, Error> {
    let budget = deadlines.write_budget()?;
    match timed(budget, op).await {
        Some(Ok(n)) => Ok(n),
        Some(Err(e)) => Err(io_error(ErrorKind::Write, e)),
        None => Err(deadlines.timed_out(Phase::SEND)),
    }
}

pub(crate) fn poll_readable(fd: RawFd) -> bool {
    let mut fds = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fds` is a valid pollfd array of length 1 for the duration of the call.
    let ready = unsafe { libc::poll(&mut fds, 1, 0) };
    ready != 0
}
