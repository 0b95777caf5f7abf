//! The async HTTP/1.1 driver on the process's tokio runtime (`runtime.rs`):
//! the sync driver's phases, pool rules, limits and errors over the same
//! sans-IO proto crate, with tokio sockets and timers. Dropping a request's
//! future at any await closes its connection (a half-used connection is never
//! pooled) and frees its pool slot.

mod body;
mod client;
mod conn;
mod decode;
mod exchange;
mod pool;

pub use body::AsyncBodyStream;
pub use client::{read_whole, AsyncClient};
pub use exchange::AsyncExchange;
