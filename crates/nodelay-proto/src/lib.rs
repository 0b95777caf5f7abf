//! Sans-IO HTTP/1.1 for nodelay.
//!
//! This crate only transforms bytes and decides: it encodes request heads,
//! frames streamed request bodies, finds and parses response heads (interim
//! responses included), de-frames bodies, and gives the verdicts on a
//! connection's reuse and on a failed request's retry. It owns no sockets
//! and no runtime; the drivers in `nodelay-core` (one blocking, one tokio)
//! move bytes between it and the network and wait. `docs/http1.md` walks
//! through the phases of one exchange:
//!
//! | phase        | type                                                  |
//! |--------------|-------------------------------------------------------|
//! | send head    | [`encode_request_head`], [`encode_request_head_with`] |
//! | send body    | [`BodyWriter`] (streamed bodies), [`answer_may_follow`] |
//! | receive head | [`HeadReader`]                                        |
//! | receive body | [`BodyReader`]                                        |
//! | done         | [`BodyReader::verdict`] → [`Reuse`]                   |
//! | retry        | [`retry_on_fresh_connection`]                         |

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod body;
mod chunked;
mod error;
mod framing;
mod head;
pub mod limits;
mod read_buffer;
mod request;
mod response;
mod retry;
mod send;

pub use body::{BodyReader, CloseReason, Reuse};
pub use chunked::{trailer_fields, ChunkedDecoder};
pub use error::ProtoError;
pub use framing::{BodyFraming, Version};
pub use head::{find_head_end, HeadEvent, HeadReader, STATUS_LINE_PREFIX};
pub use read_buffer::ReadBuffer;
pub use request::{
    encode_request_head, encode_request_head_with, request_closes, validate_header_name,
    validate_header_value, EncodedHead, EncodedHeaders, RequestHead,
};
pub use response::{parse_response_head, HeaderSpan, ResponseHead};
pub use retry::{retry_on_fresh_connection, FailedAttempt};
pub use send::{
    answer_may_follow, chunk_size_line, BodyWriter, ChunkSizeLine, Frame, SendFailure,
    StreamFraming, CHUNK_SIZE_LINE_BYTES, LAST_CHUNK,
};
