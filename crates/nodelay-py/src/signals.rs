//! Ctrl-C during a blocking call: when a syscall returns EINTR the engine asks
//! us; we run Python's signal handlers and keep the exception they raise.

use std::sync::Mutex;

use nodelay_core::Interrupt;
use pyo3::prelude::*;

#[derive(Default)]
pub(crate) struct SignalCheck {
    raised: Mutex<Option<PyErr>>,
}

impl Interrupt for SignalCheck {
    /// Python runs signal handlers on the main thread only, whose thread id
    /// is the process id on Linux.
    fn needs_polling(&self) -> bool {
        is_main_thread()
    }

    fn should_abort(&self) -> bool {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(err) => {
                *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(err);
                true
            }
        })
    }
}

impl SignalCheck {
    /// The exception a signal handler raised, if any.
    pub fn take(&self) -> Option<PyErr> {
        self.raised.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

#[cfg(target_os = "linux")]
fn is_main_thread() -> bool {
    // SAFETY: gettid and getpid have no preconditions and cannot fail.
    unsafe { libc::gettid() == libc::getpid() }
}

#[cfg(not(target_os = "linux"))]
fn is_main_thread() -> bool {
    true
}
