//! asyncio support: `AsyncEngine` and `AsyncRawStream` over the core's async
//! driver, completed through a per-loop bridge (see `bridge.rs`).

mod bridge;
mod engine;
mod sockets;
mod stream;
mod wake;

pub(crate) use engine::AsyncEngine;
pub(crate) use stream::AsyncRawStream;
