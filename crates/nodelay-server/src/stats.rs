//! Counters shared by the accept loop, every connection and the handle.

use std::sync::atomic::{AtomicU64, Ordering};

/// Connection and request counters. `Relaxed` is enough: each counter is read on
/// its own, nothing else is published through them.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    connections: AtomicU64,
    requests: AtomicU64,
}

impl Stats {
    /// Records one accepted TCP connection.
    pub(crate) fn connection_accepted(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one request, counted when its head has been parsed.
    pub(crate) fn request_started(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// TCP connections accepted since start.
    pub(crate) fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// Requests received since start (including the one asking, for `/stats`).
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}
