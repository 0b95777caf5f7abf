//! Sans-IO HTTP/1.1 for nodelay.
//!
//! This crate only transforms bytes: it encodes request heads, parses response
//! heads and decides/decodes body framing. It owns no sockets and no runtime;
//! the drivers in `nodelay-core` move bytes between it and the network.

mod chunked;
mod error;
mod framing;
pub mod limits;
mod request;
mod response;

pub use chunked::ChunkedDecoder;
pub use error::ProtoError;
pub use framing::{BodyFraming, Version};
pub use request::{
    encode_request_head, encode_request_head_with, validate_header_name, validate_header_value,
    EncodedHeaders, RequestHead,
};
pub use response::{parse_response_head, HeaderSpan, ResponseHead};
