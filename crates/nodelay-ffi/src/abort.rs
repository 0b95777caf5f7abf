//! The host's abort check: while a request waits, the engine asks it after a
//! syscall returns EINTR (a signal arrived) and periodically during waits
//! that see no EINTR, so a host language can run its signal handlers (Perl's
//! `%SIG`, Ruby's `Thread#raise`) and stop the request.

use std::ffi::c_void;

use nodelay_core::{Interrupt, NeverInterrupt};

/// Called on the thread that called the request function; returns nonzero
/// to abandon the request (it then fails with `NODELAY_E_INTERRUPTED` and its
/// connection is closed). It must return normally: never `longjmp`, `croak`
/// or `rb_raise` out of it (the host raises after the call returned).
pub type nodelay_abort_fn = Option<unsafe extern "C" fn(ctx: *mut c_void) -> i32>;

/// A host callback and its context as the engine's `Interrupt`.
pub(crate) struct HostAbort {
    callback: unsafe extern "C" fn(*mut c_void) -> i32,
    ctx: *mut c_void,
}

// SAFETY: the engine calls `should_abort` only on the thread running the
// blocking request (the one that passed the callback), which is where the
// host expects it; the context pointer is never dereferenced by Rust.
unsafe impl Sync for HostAbort {}

impl Interrupt for HostAbort {
    fn should_abort(&self) -> bool {
        // SAFETY: the caller gave a valid function and its context for the
        // duration of the request call.
        unsafe { (self.callback)(self.ctx) != 0 }
    }
}

/// The engine's interrupt for an optional host callback (no allocation).
pub(crate) enum Abort {
    Host(HostAbort),
    Never,
}

impl Abort {
    pub(crate) fn of(callback: nodelay_abort_fn, ctx: *mut c_void) -> Abort {
        match callback {
            Some(callback) => Abort::Host(HostAbort { callback, ctx }),
            None => Abort::Never,
        }
    }
}

impl Interrupt for Abort {
    fn should_abort(&self) -> bool {
        match self {
            Abort::Host(host) => host.should_abort(),
            Abort::Never => NeverInterrupt.should_abort(),
        }
    }

    fn needs_polling(&self) -> bool {
        matches!(self, Abort::Host(_))
    }
}
