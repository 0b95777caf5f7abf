//! The loop's wake-up descriptor: an eventfd that runtime threads signal and
//! the event loop watches (`loop.add_reader`).
//!
//! An eventfd is a counter in the kernel: a signal is an 8-byte `write` that
//! adds to it, and one 8-byte `read` takes every signal since the last read
//! at once. It costs the signalling thread less than a byte written to a
//! socket pair (no socket buffer is allocated) and needs one descriptor, not
//! two.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Size of what an eventfd reads and writes: one `u64` counter.
const COUNTER_BYTES: usize = std::mem::size_of::<u64>();

pub(crate) struct WakeFd(OwnedFd);

impl WakeFd {
    /// A non-blocking eventfd, closed on `exec`.
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new
        // descriptor that nothing else owns.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        Ok(WakeFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the descriptor readable. A full counter (2^64 - 2 signals not
    /// yet read, which cannot happen) would refuse the write; it is readable
    /// then anyway, so errors are ignored.
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes COUNTER_BYTES from a live u64 to a descriptor we own.
        let _ = unsafe {
            libc::write(
                self.0.as_raw_fd(),
                (&raw const one).cast::<libc::c_void>(),
                COUNTER_BYTES,
            )
        };
    }

    /// Takes every pending signal (the descriptor is no longer readable
    /// until the next one). Nothing pending (`EAGAIN`) is fine.
    pub(crate) fn clear(&self) {
        let mut counter: u64 = 0;
        loop {
            // SAFETY: reads at most COUNTER_BYTES into a live u64.
            let n = unsafe {
                libc::read(
                    self.0.as_raw_fd(),
                    (&raw mut counter).cast::<libc::c_void>(),
                    COUNTER_BYTES,
                )
            };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}
