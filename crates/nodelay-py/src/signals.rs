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
