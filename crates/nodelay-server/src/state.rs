//! Everything a request handler may touch, shared by all connections of a server.

use crate::payload::Payloads;
use crate::routes::site::Site;
use crate::stats::Stats;

/// Per-server shared state, behind one `Arc` cloned into each connection.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Connection and request counters.
    pub(crate) stats: Stats,
    /// Cached static payloads.
    pub(crate) payloads: Payloads,
    /// The generated crawl site (`/site/`).
    pub(crate) site: Site,
}
