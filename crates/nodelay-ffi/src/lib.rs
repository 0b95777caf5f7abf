//! `libnodelay_ffi`: a small, versioned C ABI over the nodelay engine.
//!
//! The Perl and Ruby fronts (and any C program) call these functions; the
//! header `include/nodelay.h` is generated from this crate with cbindgen and
//! checked in. The work between the engine and a front's objects (lazy
//! response heads, the whole-body strategy, the cookie glue, the stable error
//! codes) is `nodelay-front`, the same layer the Python binding uses, so the
//! fronts cannot drift apart. See docs/ffi.md for the ownership rules.
//!
//! Every entry point catches panics (a panic must never unwind into C) and
//! answers `NODELAY_E_INTERNAL`; no entry point calls back into the host
//! except through the abort callback and a streamed body's callbacks, which
//! must not longjmp.

#![allow(non_camel_case_types)]
// Every `extern "C"` function checks its pointers for null; the rest of each
// pointer's contract is documented in the header (a C caller cannot be checked).
#![allow(clippy::missing_safety_doc)]

mod abort;
mod batch;
mod client;
mod code;
mod json;
mod options;
mod peer;
mod request;
mod response;
mod share;
mod stream;
mod upload;

pub use abort::nodelay_abort_fn;
pub use batch::{
    nodelay_batch, nodelay_batch_count, nodelay_batch_free, nodelay_batch_request,
    nodelay_batch_take, nodelay_request_many, NODELAY_MAX_BATCH_CONCURRENCY,
};
pub use client::{
    nodelay_client, nodelay_client_free, nodelay_client_new, nodelay_client_save_cookies,
};
pub use code::{nodelay_code, nodelay_code_name, nodelay_last_error};
pub use json::{
    nodelay_json, nodelay_json_free, nodelay_json_item, nodelay_json_items, nodelay_json_kind,
    nodelay_json_parse, nodelay_json_value,
};
pub use options::{nodelay_options, nodelay_options_init_sized};
pub use peer::{nodelay_client_kept_peer, NODELAY_PEER_HOST_CAP};
pub use request::{nodelay_header, nodelay_request};
pub use response::*;
pub use share::nodelay_client_dup;
pub use stream::nodelay_response_read_chunk;
pub use upload::{
    nodelay_body_fn, nodelay_body_source, nodelay_request_streamed, nodelay_trailers_fn,
};

/// The ABI version this library implements. It grows only when a change is
/// not backwards compatible (a function removed or its meaning changed);
/// additions (new functions, new fields at the end of `nodelay_options`, new
/// error codes) keep the number.
pub const NODELAY_ABI_VERSION: u32 = 1;

/// The ABI version of the loaded library: a front built against
/// `NODELAY_ABI_VERSION` refuses to run on a library that answers otherwise.
#[no_mangle]
pub extern "C" fn nodelay_abi_version() -> u32 {
    NODELAY_ABI_VERSION
}
