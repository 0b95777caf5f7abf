//! Fork detection: a child process must not reuse its parent's connections
//! (both would read the same socket). A `pthread_atfork` child handler bumps a
//! generation counter; the pool compares it on every checkout, one atomic load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

extern "C" fn bump_in_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Installs the fork handler once per process.
pub(crate) fn install() {
    REGISTER.call_once(|| {
        // SAFETY: `bump_in_child` is async-signal-safe (one atomic add) and
        // lives for the whole program; no prepare/parent handlers are needed.
        unsafe {
            libc::pthread_atfork(None, None, Some(bump_in_child));
        }
    });
}

/// The current fork generation of this process.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}
