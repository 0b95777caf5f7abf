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
thread_local! {
    /// This thread's answer: 0 not asked yet, 1 main, 2 not main.
    static MAIN: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// A fork makes the forking thread the child's main thread: it asks again.
#[cfg(target_os = "linux")]
extern "C" fn forget_in_child() {
    MAIN.with(|cached| cached.set(0));
}

#[cfg(target_os = "linux")]
fn is_main_thread() -> bool {
    // Asked before every blocking read (core conn.rs): cached per thread, as
    // the answer costs two syscalls.
    MAIN.with(|cached| match cached.get() {
        1 => true,
        2 => false,
        _ => {
            static REGISTER: std::sync::Once = std::sync::Once::new();
            REGISTER.call_once(|| {
                // SAFETY: `forget_in_child` only sets a const-initialised
                // thread-local Cell (no allocation, no lock) and lives for the
                // whole program.
                unsafe {
                    libc::pthread_atfork(None, None, Some(forget_in_child));
                }
            });
            // SAFETY: gettid and getpid have no preconditions and cannot fail.
            let main = unsafe { libc::gettid() == libc::getpid() };
            cached.set(if main { 1 } else { 2 });
            main
        }
    })
}

#[cfg(not(target_os = "linux"))]
fn is_main_thread() -> bool {
    true
}
