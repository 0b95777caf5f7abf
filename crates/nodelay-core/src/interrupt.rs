//! How a blocking call learns that it must stop when a signal arrives.
//!
//! A blocking `read`/`write` returns `EINTR` when a signal (Ctrl-C) lands on
//! this thread. The driver then asks its `Interrupt`: the Python binding runs
//! the interpreter's signal handlers and answers `true` if one raised (the
//! request is abandoned and its connection closed), `false` to carry on.

use std::time::Duration;

use crate::error::{Error, ErrorKind};

/// How often a wait that cannot see `EINTR` (a channel, a condition
/// variable, a wait on the runtime, a batch or the embedded server run from
/// Python) asks for pending signals: the longest a Ctrl-C waits there. The
/// one interval of every such wait in the crates. 50 ms is under the ~100 ms
/// at which a delay stops feeling immediate, and the check (which takes the
/// Python GIL and runs its signal handlers) done 20 times a second costs
/// nothing measurable.
pub const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// What a blocking wait asks whether to give up its request: the Python
/// binding answers from the interpreter's signal handlers (Ctrl-C).
pub trait Interrupt: Sync {
    /// Called after a blocking syscall returned `EINTR`.
    fn should_abort(&self) -> bool;

    /// Whether a wait that sees no `EINTR` (one on the runtime) must ask
    /// `should_abort` from time to time. False when nothing on this thread
    /// could ever answer true (Python runs signal handlers on its main thread
    /// only), which spares such waits a timer.
    fn needs_polling(&self) -> bool {
        true
    }
}

/// For callers with no signal handling of their own: always carry on.
pub struct NeverInterrupt;

impl Interrupt for NeverInterrupt {
    fn should_abort(&self) -> bool {
        false
    }

    fn needs_polling(&self) -> bool {
        false
    }
}

/// The error of a request abandoned because a signal's handler asked to
/// (see [`Interrupt::should_abort`]).
pub(crate) fn interrupted() -> Error {
    Error::new(ErrorKind::Interrupted, "interrupted by a signal")
}
