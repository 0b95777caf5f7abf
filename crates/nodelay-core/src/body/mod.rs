//! The response-body pipeline: content codings, the bomb guards and the push
//! decoder that every decoded body goes through, and the whole-response type
//! the sync, async and batch paths produce. See docs/decoding.md.
//!
//! - [`coding`]: which codings we undo, `Content-Encoding` parsing, the layer
//!   cap (docs/hostile.md B15).
//! - [`guard`]: the decoded-size cap and the ratio guard (docs/hostile.md B14).
//! - [`decoder`]: [`Decoder`], raw pieces in, decoded bytes out, no I/O.
//! - [`pieces`]: the piece-by-piece reading shared by the sync and async
//!   streams ("a piece is what has arrived").
//! - [`whole`]: reading a whole body, and [`WholeResponse`].

pub mod coding;
pub mod decoder;
pub mod guard;
pub(crate) mod pieces;
pub mod whole;

pub use coding::{parse_codings, Coding, ACCEPT_ENCODING, MAX_CONTENT_CODINGS};
pub use decoder::{decode, Decoder, FEED_SLICE_BYTES};
pub use guard::{DEFAULT_MAX_DECODED_BYTES, MAX_DECODE_RATIO, RATIO_GUARD_FLOOR_BYTES};
pub use whole::WholeResponse;

#[cfg(test)]
mod tests;
