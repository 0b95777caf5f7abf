//! The HTTP/2 driver on the process runtime (`crate::runtime`), on the `h2`
//! crate: one connection per origin shared by every request and thread
//! ([`pool`]), async send/receive ([`H2Pool::send_streamed`], [`H2Response::chunk`])
//! for async callers, and a blocking face ([`H2Exchange`], run by
//! `crate::executor`) for the sync client. Settings and bounds are in [`limits`].

mod conn;
mod error;
mod exchange;
mod goaway;
pub mod limits;
mod pool;
mod request;
mod response;
mod upload;

pub(crate) use exchange::head_of;
pub use exchange::H2Exchange;
pub(crate) use pool::H2Pool;
pub(crate) use pool::Sent;
pub use request::H2Request;
pub use response::H2Response;
pub(crate) use upload::StreamedBody;
