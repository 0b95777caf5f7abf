//! One HTTP/1.1 connection: a blocking socket, its reused read buffer, and
//! deadline-bounded reads and writes that honour signals.

use std::io::{self, IoSlice, Read, Write};
use std::time::{Duration, Instant};

use nodelay_proto::ReadBuffer;

use crate::deadline::{Deadlines, Phase};
use crate::error::{Error, ErrorKind};
use crate::interrupt::{Interrupt, SIGNAL_CHECK_INTERVAL};
use crate::limits::READ_BUFFER_BYTES;
use crate::transport::Transport;

pub(crate) struct Connection {
    stream: Transport,
    buf: ReadBuffer,
    /// Timeouts currently set on the socket, so the common case (no total
    /// deadline) sets them once per connection instead of once per read.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

impl Connection {
    pub fn new(stream: Transport) -> Self {
        Connection {
            stream,
            buf: ReadBuffer::new(READ_BUFFER_BYTES),
            read_timeout: None,
            write_timeout: None,
        }
    }

    /// The byte stream (the pool's handover between drivers looks at its kind).
    pub(crate) fn transport(&self) -> &Transport {
        &self.stream
    }

    /// The byte stream, for another driver (the pool's handover; the
    /// connection is idle, nothing is buffered).
    pub(crate) fn into_transport(self) -> Transport {
        self.stream
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

    /// Whether a read would find bytes without waiting (buffered here, in the
    /// TLS session or in the socket).
    pub fn has_data_now(&mut self) -> bool {
        !self.buf.is_empty() || self.stream.has_data_now()
    }

    /// Zero-timeout readability check of an idle connection: an idle socket
    /// with something to read has been closed by the peer (EOF/RST) or carries
    /// bytes nobody asked for; either way it must not be reused.
    pub fn is_reusable(&mut self) -> bool {
        self.buf.is_empty() && self.stream.is_idle_and_open()
    }

    /// Reads more bytes into the buffer, growing it up to `max_buffer` when it
    /// is full (response heads may exceed one buffer). Returns 0 at EOF.
    pub fn fill(
        &mut self,
        max_buffer: usize,
        deadlines: &Deadlines,
        interrupt: &dyn Interrupt,
    ) -> Result<usize, Error> {
        let Some(spare) = self.buf.spare(max_buffer) else {
            return Err(Error::new(
                ErrorKind::RemoteProtocol,
                "read buffer limit reached",
            ));
        };
        let n = read_with_deadline(
            &mut self.stream,
            &mut self.read_timeout,
            spare,
            deadlines,
            interrupt,
        )?;
        self.buf.filled(n);
        Ok(n)
    }

    /// Reads straight into `dst`, bypassing the buffer (big bodies land in their
    /// final place with no copy). Returns 0 at EOF.
    pub fn read_direct(
        &mut self,
        dst: &mut [u8],
        deadlines: &Deadlines,
        interrupt: &dyn Interrupt,
    ) -> Result<usize, Error> {
        debug_assert!(self.buf.is_empty(), "buffered bytes must be drained first");
        read_with_deadline(
            &mut self.stream,
            &mut self.read_timeout,
            dst,
            deadlines,
            interrupt,
        )
    }

    /// Writes all of `parts` (one syscall in the common case: a single slice,
    /// or head and body as one vectored write).
    pub fn write_all(
        &mut self,
        parts: &mut [IoSlice<'_>],
        deadlines: &Deadlines,
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        let mut parts = parts;
        while !parts.is_empty() {
            let budget = deadlines.write_budget()?;
            if budget != self.write_timeout {
                self.stream
                    .tcp()
                    .set_write_timeout(budget)
                    .map_err(|e| io_error(ErrorKind::Write, e))?;
                self.write_timeout = budget;
            }
            let written = if parts.len() == 1 {
                self.stream.write(&parts[0])
            } else {
                self.stream.write_vectored(parts)
            };
            match written {
                Ok(0) => {
                    return Err(Error::new(
                        ErrorKind::Write,
                        "connection closed while sending",
                    ))
                }
                Ok(n) => IoSlice::advance_slices(&mut parts, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if interrupt.should_abort() {
                        return Err(Error::new(
                            ErrorKind::Interrupted,
                            "interrupted by a signal",
                        ));
                    }
                }
                Err(e) if is_timeout(&e) => return Err(deadlines.timed_out(Phase::SEND)),
                Err(e) => return Err(io_error(ErrorKind::Write, e)),
            }
        }
        Ok(())
    }
}

/// One read from `stream` into `dst` within the request's deadlines
/// (`read_timeout`: the timeout currently set on the socket).
///
/// A signal that lands while this thread is not blocked in `read` (it is
/// processing the bytes the last read returned) causes no `EINTR`: the
/// handler only notes it. So when `interrupt` can ever answer yes (the
/// main thread of a Python program), a read waits at most
/// [`SIGNAL_CHECK_INTERVAL`] at a time and asks it between waits: such a
/// Ctrl-C ends the request within one interval instead of being noticed
/// only after the response. How long a read may wait in all is
/// `Deadlines::read_budget`'s rule (the whole head within the read
/// timeout, each body read within it). The socket timeout changes only
/// when the budget moves by more than [`SOCKET_TIMEOUT_SLACK`], and a
/// read that returns data costs nothing more.
fn read_with_deadline(
    stream: &mut Transport,
    read_timeout: &mut Option<Duration>,
    dst: &mut [u8],
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<usize, Error> {
    let polling = interrupt.needs_polling();
    // Time this read spent in waits that ended without data; measured
    // from the first such wait's start, so the clock is read only once a
    // read has waited a whole socket timeout.
    let mut waited = Duration::ZERO;
    let mut first_wait_started: Option<Instant> = None;
    loop {
        let budget = deadlines.read_budget(waited)?;
        let wait = match budget {
            Some(b) if polling => Some(b.min(SIGNAL_CHECK_INTERVAL)),
            None if polling => Some(SIGNAL_CHECK_INTERVAL),
            other => other,
        };
        if !close_enough(*read_timeout, wait) {
            stream
                .tcp()
                .set_read_timeout(wait)
                .map_err(|e| io_error(ErrorKind::Read, e))?;
            *read_timeout = wait;
        }
        // What the socket will wait: `wait`, or a little less.
        let wait = *read_timeout;
        match stream.read(dst) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if interrupt.should_abort() {
                    return Err(Error::new(
                        ErrorKind::Interrupted,
                        "interrupted by a signal",
                    ));
                }
            }
            // The wait ended: the next turn asks the deadlines whether
            // time is left (another slice) or not (the timeout error).
            Err(e) if is_timeout(&e) => {
                if polling && interrupt.should_abort() {
                    return Err(Error::new(
                        ErrorKind::Interrupted,
                        "interrupted by a signal",
                    ));
                }
                let now = Instant::now();
                let since = *first_wait_started.get_or_insert_with(|| {
                    now.checked_sub(wait.unwrap_or_default()).unwrap_or(now)
                });
                waited = now.saturating_duration_since(since);
            }
            Err(e) => return Err(io_error(ErrorKind::Read, e)),
        }
    }
}

/// A read may wait up to this much less than its budget rather than change
/// the socket's timeout: a head's budget is what is left of its deadline,
/// slightly different on every request, and a `setsockopt` per request costs
/// more than the rare extra turn of the read loop (which then waits for the
/// rest). A read never waits longer than its budget.
const SOCKET_TIMEOUT_SLACK: Duration = Duration::from_millis(10);

/// Whether a socket timeout of `set` may stand for a wanted wait of `want`.
fn close_enough(set: Option<Duration>, want: Option<Duration>) -> bool {
    match (set, want) {
        (Some(set), Some(want)) => set <= want && want - set <= SOCKET_TIMEOUT_SLACK,
        (set, want) => set == want,
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

pub(crate) fn io_error(kind: ErrorKind, e: io::Error) -> Error {
    // A TLS alert after the handshake (TLS 1.3 servers reject a missing or
    // bad client certificate this way) is a TLS failure, not a network one.
    if let Some(tls) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        let message = format!("TLS error: {tls}");
        return Error::new(ErrorKind::Tls, message).with_source(e);
    }
    let what = if kind == ErrorKind::Write {
        "sending the request"
    } else {
        "reading the response"
    };
    Error::new(kind, format!("error {what}: {e}")).with_source(e)
}
