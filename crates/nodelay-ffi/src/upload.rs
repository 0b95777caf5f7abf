//! `nodelay_request_streamed`: a request whose body the host produces piece
//! by piece (a Perl or Ruby callback, a file being read), pulled by the
//! engine while it sends: `Content-Length` when the host knows the size,
//! else `Transfer-Encoding: chunked`, with trailer fields after the last
//! chunk when the host gives some. The engine's `BodySource` does the
//! framing; this file only calls the host.

use std::ffi::{c_char, c_void};

use nodelay_core::{BodySource, Error, StreamFraming};

use crate::abort::{nodelay_abort_fn, Abort};
use crate::client::nodelay_client;
use crate::code::{guard, invalid, nodelay_code};
use crate::request::{header_pairs, nodelay_header, request_args, send_into, Payload};
use crate::response::nodelay_response;

/// Gives the next piece of a streamed request body: sets `*data` and
/// `*len` (`*len` = 0: the body ended) and returns 0. The bytes stay the
/// host's and must stay valid until the next call of the source or the end
/// of the request call. A nonzero return stops the request, which fails
/// with `NODELAY_E_BODY_SOURCE` (the host keeps its own error to raise once
/// the call returned). Called on the thread that made the request call, at
/// most once per piece written; it must return normally (never `longjmp`).
pub type nodelay_body_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, data: *mut *const u8, len: *mut usize) -> i32>;

/// Gives the trailer fields sent after the body's last piece: sets
/// `*fields` and `*n` (0: none) and returns 0; nonzero stops the request as
/// for `nodelay_body_fn`. Called once, after the body ended; the array and
/// its strings stay valid until the request call returns.
pub type nodelay_trailers_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        fields: *mut *const nodelay_header,
        n: *mut usize,
    ) -> i32,
>;

/// A request body the host produces while the engine sends it.
#[repr(C)]
pub struct nodelay_body_source {
    /// The pieces, in order (required).
    pub next: nodelay_body_fn,
    /// Trailer fields after the last piece (NULL: none). Only a chunked body
    /// (unknown length) or HTTP/2 can carry them.
    pub trailers: nodelay_trailers_fn,
    /// Passed to both callbacks.
    pub ctx: *mut c_void,
    /// The body's size in bytes, sent as `Content-Length` (the pieces must
    /// add up to it); -1 when unknown: the body is sent chunked.
    pub length: i64,
}

/// Sends `method` to `url` as `nodelay_request` does, with the body pulled
/// from `body` while the request goes out (see `nodelay_body_source`), then
/// reads the response head. A request header `Content-Length` gives a body
/// of unknown length that size. The body is pulled once and never sent
/// again: a kept-alive connection found closed while the body goes out fails
/// the request instead of being replaced (the pool's check before reuse
/// catches most such connections before). A server that answers before the
/// body ended (a 413, a 401) stops the pulling, and its answer is the
/// response.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nodelay_request_streamed(
    client: *const nodelay_client,
    method: *const c_char,
    url: *const c_char,
    headers: *const nodelay_header,
    n_headers: usize,
    body: *const nodelay_body_source,
    abort: nodelay_abort_fn,
    abort_ctx: *mut c_void,
    out: *mut *mut nodelay_response,
) -> nodelay_code {
    guard(|| {
        // SAFETY: the documented pointer contracts of the arguments.
        let args = match unsafe { request_args(out, client, method, url, headers, n_headers) } {
            Ok(args) => args,
            Err(code) => return code,
        };
        // SAFETY: a body source for the call, as documented.
        let Some(body) = (unsafe { body.as_ref() }) else {
            return invalid("body is NULL");
        };
        let Some(next) = body.next else {
            return invalid("body->next is NULL");
        };
        let framing = match body.length {
            -1 => StreamFraming::Chunked,
            n => match u64::try_from(n) {
                Ok(n) => StreamFraming::Length(n),
                Err(_) => return invalid("body->length must be -1 or a size"),
            },
        };
        let mut source = HostBody {
            next,
            trailers: body.trailers,
            ctx: body.ctx,
        };
        let abort = Abort::of(abort, abort_ctx);
        let payload = Payload::Streamed(&mut source, framing);
        // SAFETY: `out` was checked by `request_args`.
        unsafe { send_into(out, args, payload, &abort) }
    })
}

/// The host's callbacks as the engine's `BodySource`.
struct HostBody {
    next: unsafe extern "C" fn(*mut c_void, *mut *const u8, *mut usize) -> i32,
    trailers: nodelay_trailers_fn,
    ctx: *mut c_void,
}

// SAFETY: the blocking driver pulls the source on the thread that made the
// request call (the HTTP/2 driver too: it runs the exchange with
// `block_on` on that thread); the host's context is never dereferenced by
// Rust.
unsafe impl Send for HostBody {}

fn stopped(what: &str) -> Error {
    Error::body_source(format!(
        "the request body's {what} callback stopped the request"
    ))
}

impl BodySource for HostBody {
    fn next_chunk<'a>(&'a mut self, _buf: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>, Error> {
        let (mut data, mut len) = (std::ptr::null(), 0usize);
        // SAFETY: the host's callback with its own context and two writable
        // out-pointers.
        if unsafe { (self.next)(self.ctx, &mut data, &mut len) } != 0 {
            return Err(stopped("next"));
        }
        if len == 0 {
            return Ok(None);
        }
        if data.is_null() {
            return Err(Error::body_source(
                "the request body's next callback gave a length without data",
            ));
        }
        // SAFETY: `len` bytes at `data`, valid until the next call of the
        // source (documented), which needs `&mut self`: after this borrow.
        Ok(Some(unsafe { std::slice::from_raw_parts(data, len) }))
    }

    fn rewind(&mut self) -> Result<bool, Error> {
        Ok(false)
    }

    fn trailers(&mut self) -> Result<Vec<(String, String)>, Error> {
        let Some(trailers) = self.trailers else {
            return Ok(Vec::new());
        };
        let (mut fields, mut n) = (std::ptr::null(), 0usize);
        // SAFETY: as for `next`.
        if unsafe { trailers(self.ctx, &mut fields, &mut n) } != 0 {
            return Err(stopped("trailers"));
        }
        // SAFETY: `n` fields at `fields`, valid for the call (documented).
        let pairs = unsafe { header_pairs(fields, n) }.map_err(|_| {
            Error::body_source("the request body's trailers callback gave invalid fields")
        })?;
        Ok(pairs
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect())
    }
}
