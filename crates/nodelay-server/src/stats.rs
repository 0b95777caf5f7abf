//! Counters shared by the accept loop, every connection and the handle.

use std::sync::atomic::{AtomicU64, Ordering};

/// Connection and request counters. `Relaxed` is enough: each counter is read on
/// its own, nothing else is published through them.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    connections: AtomicU64,
    requests: AtomicU64,
    /// Bytes read from and written to client sockets (below TLS).
    received: AtomicU64,
    sent: AtomicU64,
    /// Requests being answered now (head parsed, reply not yet made), and
    /// the most there ever were at once: the concurrency a client's batch
    /// really reached, as the server saw it.
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
}

/// One request being answered; dropping it ends it (see [`Stats::answering`]).
pub(crate) struct Answering<'a>(&'a Stats);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
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

    /// Records a request being answered until the returned guard is
    /// dropped (when its reply is made), and the peak of such requests.
    pub(crate) fn answering(&self) -> Answering<'_> {
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak_in_flight.fetch_max(now, Ordering::Relaxed);
        Answering(self)
    }

    /// Requests being answered now.
    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// The most requests answered at once since start.
    pub(crate) fn peak_in_flight(&self) -> u64 {
        self.peak_in_flight.load(Ordering::Relaxed)
    }

    /// Records bytes read from a client socket.
    pub(crate) fn bytes_received(&self, n: u64) {
        self.received.fetch_add(n, Ordering::Relaxed);
    }

    /// Records bytes written to a client socket.
    pub(crate) fn bytes_sent(&self, n: u64) {
        self.sent.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes read from client sockets since start.
    pub(crate) fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// Bytes written to client sockets since start.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
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
