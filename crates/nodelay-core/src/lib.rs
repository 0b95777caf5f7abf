//! nodelay's engine: URL targets, connecting, the keep-alive pool, the
//! blocking HTTP/1.1 driver that runs on the caller's thread, and on the
//! process's tokio runtime the async HTTP/1.1 driver (`aio`) and the HTTP/2
//! driver (`h2`).
//!
//! No Python here: `nodelay-py` wraps it. The sync path never hops threads:
//! each request is written and read on the calling thread with blocking
//! sockets whose timeouts are recomputed from deadlines (see `deadline`).

#![warn(missing_docs)]

mod aconnect;
pub mod aio;
mod any_exchange;
pub mod batch;
pub mod body;
mod client;
mod conn;
mod connect;
pub mod cookies;
mod deadline;
mod dial;
mod error;
mod exchange;
mod executor;
mod fork;
pub mod form;
pub mod h2;
mod interrupt;
pub mod limits;
mod pool;
mod reaper;
mod request;
mod resolve;
pub mod runtime;
mod sequence;
mod stream;
mod target;
pub mod timing;
mod tls;
mod transport;
mod upload;

// Proxies: settings and routing, NO_PROXY matching, CONNECT tunnels, the
// SOCKS handshake.
mod no_proxy;
mod proxy;
mod socks;
mod tunnel;

pub use aconnect::AsyncTransport;
pub use any_exchange::Exchange;
/// The body pipeline under the name the binding imports it by.
pub use body as decode;
pub use body::whole::WholeBody;
pub use body::WholeResponse;
pub use client::{Client, PoolConfig};
pub use deadline::Timeouts;
pub use dial::Dial;
pub use error::{Error, ErrorKind};
pub use interrupt::{Interrupt, NeverInterrupt, SIGNAL_CHECK_INTERVAL};
pub use no_proxy::NoProxy;
pub use nodelay_proto::{trailer_fields, BodyFraming, EncodedHeaders, HeaderSpan, Version};
pub use pool::RateLimit;
pub use proxy::ProxySettings;
pub use request::{prepare, Http2Mode, Prepared, RequestParts};
pub use stream::BodyStream;
pub use target::{Origin, Target};
pub use tls::TlsOptions;
pub use upload::{BodySource, StreamFraming};
