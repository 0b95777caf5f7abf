//! The async driver on the process's tokio runtime (`runtime.rs`): HTTP/1.1
//! with the sync driver's phases, pool rules, limits and errors over the
//! same sans-IO proto crate, with tokio sockets and timers; HTTP/2 on the
//! shared connections of `h2/`; proxies (forwarding and CONNECT tunnels,
//! `aconnect.rs`); streamed request bodies. Dropping a request's future at
//! any await closes its HTTP/1.1 connection (a half-used connection is never
//! pooled) and frees its pool slot, or resets its HTTP/2 stream.

pub(crate) mod any_exchange;
mod body;
pub(crate) mod client;
pub(crate) mod conn;
pub(crate) mod exchange;
pub(crate) mod h2;
pub(crate) mod pool;
pub(crate) mod upload;
pub(crate) mod watched;

pub use any_exchange::AsyncExchange;
pub use body::AsyncBodyStream;
pub use client::AsyncClient;
pub use upload::{BodyPump, PumpServer};
pub use watched::{watching, Interest, WatchedTcp, Watcher};
