//! The language-neutral half of a nodelay binding.
//!
//! Every language front (the Python extension `nodelay-py`, and the C ABI the
//! Perl and Ruby fronts sit on) needs the same things between the engine and
//! its own objects: the one table of client defaults ([`defaults`]), the
//! assembly of a request's header fields ([`assembly`]), the glue between
//! requests and the cookie jar ([`cookies`]), the response head kept as
//! received bytes and looked up lazily ([`Head`]), one strategy to read a
//! whole body ([`body`]), many whole requests at once ([`batch`]), and a
//! stable code for each kind of failure ([`ErrorCode`]). They live here, written once,
//! without any language runtime: a front only converts these values into its
//! own objects.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assembly;
pub mod batch;
pub mod body;
pub mod cookies;
pub mod defaults;
mod error;
mod head;
pub mod json;

pub use error::ErrorCode;
pub use head::{text, Head};
