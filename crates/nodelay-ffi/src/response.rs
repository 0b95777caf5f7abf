//! `nodelay_response`: the head of a response (looked up lazily, nothing
//! decoded until asked) and the way to its body. Every pointer a getter
//! returns is owned by the response and valid until `nodelay_response_free`.

use std::ffi::{c_char, c_void};

use nodelay_core::decode::parse_codings;
use nodelay_core::{trailer_fields, Exchange};
use nodelay_front::body::{read_exact, read_grown, WholeBody};
use nodelay_front::Head;

use crate::abort::{nodelay_abort_fn, Abort};
use crate::code::{fail, fail_engine, guard, nodelay_code};
use crate::stream::Streaming;

/// A response: its head, and its body once read.
pub struct nodelay_response {
    pub(crate) head: Head,
    /// The connection's side of the exchange, until the body is read (it
    /// then returns to the pool), streamed (it moves into `stream`) or the
    /// response is freed (closed).
    pub(crate) exchange: Option<Exchange>,
    plan: WholeBody,
    /// The body read by `nodelay_response_read`.
    body: Vec<u8>,
    pub(crate) max_decoded_size: u64,
    /// The body being read by `nodelay_response_read_chunk`.
    pub(crate) stream: Option<Streaming>,
    /// The trailer lines that followed a body read whole (a streamed one's
    /// are its stream's).
    trailers: Vec<u8>,
}

impl nodelay_response {
    pub(crate) fn new(
        head: Head,
        exchange: Exchange,
        plan: WholeBody,
        max_decoded_size: u64,
    ) -> Self {
        nodelay_response {
            head,
            exchange: Some(exchange),
            plan,
            body: Vec::new(),
            max_decoded_size,
            stream: None,
            trailers: Vec::new(),
        }
    }

    /// A response read whole elsewhere (by a batch): the head and the
    /// decoded body, which `nodelay_response_body` gives; nothing is left to
    /// read.
    pub(crate) fn whole(head: Head, body: Vec<u8>, max_decoded_size: u64) -> Self {
        nodelay_response {
            head,
            exchange: None,
            plan: WholeBody::Exact {
                len: body.len(),
                buffered: true,
            },
            body,
            max_decoded_size,
            stream: None,
            // A batch reads bodies through core's whole-body read, which
            // keeps no trailer lines.
            trailers: Vec::new(),
        }
    }

    /// The trailer fields that followed the body (none before its end).
    fn trailer_fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let lines = match &self.stream {
            Some(streaming) => streaming.trailers(),
            None => &self.trailers,
        };
        trailer_fields(lines)
    }

    /// The exchange whose body is still to be read.
    fn unread(&mut self) -> Result<&mut Exchange, nodelay_code> {
        self.exchange.as_mut().ok_or_else(|| {
            fail(
                nodelay_code::NODELAY_E_INVALID_ARGUMENT,
                "the body was already read",
            )
        })
    }

    /// Ends the exchange after its body was read (a keep-alive connection
    /// goes back to the pool).
    fn finish(&mut self) {
        if let Some(mut exchange) = self.exchange.take() {
            self.trailers = exchange.take_trailers();
            exchange.finish();
        }
    }
}

/// The status code (200, 404, ...); 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_status(response: *const nodelay_response) -> u16 {
    // SAFETY: a live response or NULL.
    unsafe { response.as_ref() }.map_or(0, |r| r.head.status())
}

/// The protocol version as a static string: `"HTTP/1.1"`, `"HTTP/1.0"` or
/// `"HTTP/2"` (an empty string for NULL).
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_version(
    response: *const nodelay_response,
) -> *const c_char {
    // SAFETY: a live response or NULL.
    let version = unsafe { response.as_ref() }.map_or("", |r| r.head.version());
    match version {
        "HTTP/1.1" => c"HTTP/1.1",
        "HTTP/1.0" => c"HTTP/1.0",
        "HTTP/2" => c"HTTP/2",
        _ => c"",
    }
    .as_ptr()
}

/// The reason phrase as received (`*len` bytes, not NUL-terminated; empty
/// for HTTP/2).
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_reason(
    response: *const nodelay_response,
    len: *mut usize,
) -> *const u8 {
    // SAFETY: a live response or NULL.
    let reason = unsafe { response.as_ref() }.map_or(&[][..], |r| r.head.reason());
    // SAFETY: `len` is NULL or writable.
    unsafe { out_slice(reason, len) }
}

/// The `nth` (from 0) value of the header `name` (`name_len` bytes, ASCII
/// case-insensitive), in received order: 1 and `*value`/`*value_len` set
/// when there is one, else 0. Nothing is decoded or copied.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_header(
    response: *const nodelay_response,
    name: *const c_char,
    name_len: usize,
    nth: usize,
    value: *mut *const u8,
    value_len: *mut usize,
) -> i32 {
    // SAFETY: a live response or NULL.
    let Some(response) = (unsafe { response.as_ref() }) else {
        return 0;
    };
    if name.is_null() && name_len > 0 {
        return 0;
    }
    let name = if name_len == 0 {
        &[][..]
    } else {
        // SAFETY: `name_len` readable bytes at `name`.
        unsafe { std::slice::from_raw_parts(name.cast::<u8>(), name_len) }
    };
    let found = response
        .head
        .fields()
        .filter(|(field, _)| field.eq_ignore_ascii_case(name))
        .nth(nth);
    match found {
        Some((_, found)) => {
            // SAFETY: `value` and `value_len` are NULL or writable.
            unsafe {
                let ptr = out_slice(found, value_len);
                if !value.is_null() {
                    value.write(ptr);
                }
            }
            1
        }
        None => 0,
    }
}

/// 1 when the engine undoes the response's content codings (there is at
/// least one, and every one is a coding it decodes), so the body it hands out
/// is not the one `Content-Encoding` and `Content-Length` describe; else 0
/// (also for NULL, and for a head with more codings than the engine takes,
/// whose body fails to read).
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_decoded(response: *const nodelay_response) -> i32 {
    // SAFETY: a live response or NULL.
    let Some(response) = (unsafe { response.as_ref() }) else {
        return 0;
    };
    match parse_codings(response.head.values("content-encoding")) {
        Ok(Some(codings)) => i32::from(!codings.is_empty()),
        Ok(None) | Err(_) => 0,
    }
}

/// How many header fields the response has.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_header_count(response: *const nodelay_response) -> usize {
    // SAFETY: a live response or NULL.
    unsafe { response.as_ref() }.map_or(0, |r| r.head.fields().len())
}

/// The header field at `index` (received order, names spelt as received):
/// 1 and the four outputs set, or 0 when `index` is out of range.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_header_at(
    response: *const nodelay_response,
    index: usize,
    name: *mut *const u8,
    name_len: *mut usize,
    value: *mut *const u8,
    value_len: *mut usize,
) -> i32 {
    // SAFETY: a live response or NULL.
    let Some((n, v)) = (unsafe { response.as_ref() }).and_then(|r| r.head.fields().nth(index))
    else {
        return 0;
    };
    // SAFETY: every output is NULL or writable.
    unsafe { write_field(n, v, name, name_len, value, value_len) };
    1
}

/// A field's name and value through the four outputs of
/// `nodelay_response_header_at` (each NULL or writable).
unsafe fn write_field(
    n: &[u8],
    v: &[u8],
    name: *mut *const u8,
    name_len: *mut usize,
    value: *mut *const u8,
    value_len: *mut usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let n = out_slice(n, name_len);
        let v = out_slice(v, value_len);
        if !name.is_null() {
            name.write(n);
        }
        if !value.is_null() {
            value.write(v);
        }
    }
}

/// How many trailer fields followed the body: 0 until the body was read to
/// its end (whole, or by `nodelay_response_read_chunk` until it gave 0), and
/// for a body without trailers. HTTP/1.1 chunked bodies only (an HTTP/2
/// response's trailers are not kept); a trailer line that is not a field is
/// left out.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_trailer_count(
    response: *const nodelay_response,
) -> usize {
    // SAFETY: a live response or NULL.
    unsafe { response.as_ref() }.map_or(0, |r| r.trailer_fields().count())
}

/// The trailer field at `index` (received order, names spelt as received),
/// as `nodelay_response_header_at` gives a header field: 1 and the four
/// outputs set, or 0 when `index` is out of range. The pointers belong to
/// the response.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_trailer_at(
    response: *const nodelay_response,
    index: usize,
    name: *mut *const u8,
    name_len: *mut usize,
    value: *mut *const u8,
    value_len: *mut usize,
) -> i32 {
    // SAFETY: a live response or NULL.
    let Some((n, v)) = (unsafe { response.as_ref() }).and_then(|r| r.trailer_fields().nth(index))
    else {
        return 0;
    };
    // SAFETY: every output is NULL or writable.
    unsafe { write_field(n, v, name, name_len, value, value_len) };
    1
}

/// The body's length when the server announced it and it needs no decoding,
/// before it is read: the caller may then allocate its own buffer of exactly
/// that size and call `nodelay_response_read_into`. -1 otherwise (unknown
/// length, content codings, or already read): use `nodelay_response_read`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_body_length(response: *const nodelay_response) -> i64 {
    // SAFETY: a live response or NULL.
    match unsafe { response.as_ref() } {
        Some(r) if r.exchange.is_some() => match r.plan {
            WholeBody::Exact { len, .. } => len as i64,
            WholeBody::Grown { .. } => -1,
        },
        _ => -1,
    }
}

/// Reads the body into the caller's buffer `dst` of exactly
/// `nodelay_response_body_length()` bytes (`len`). The connection then goes
/// back to the pool. `abort` as for `nodelay_request`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_read_into(
    response: *mut nodelay_response,
    dst: *mut u8,
    len: usize,
    abort: nodelay_abort_fn,
    abort_ctx: *mut c_void,
) -> nodelay_code {
    guard(|| {
        // SAFETY: a live response or NULL.
        let Some(response) = (unsafe { response.as_mut() }) else {
            return fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, "response is NULL");
        };
        let expected = match response.plan {
            WholeBody::Exact { len, .. } => len,
            WholeBody::Grown { .. } => usize::MAX,
        };
        if expected != len || (dst.is_null() && len > 0) {
            return fail(
                nodelay_code::NODELAY_E_INVALID_ARGUMENT,
                "nodelay_response_read_into needs a buffer of nodelay_response_body_length() bytes",
            );
        }
        let abort = Abort::of(abort, abort_ctx);
        let exchange = match response.unread() {
            Ok(exchange) => exchange,
            Err(code) => return code,
        };
        let dst = if len == 0 {
            &mut [][..]
        } else {
            // SAFETY: `len` writable bytes at `dst`, not aliased during the call.
            unsafe { std::slice::from_raw_parts_mut(dst, len) }
        };
        if let Err(e) = read_exact(exchange, dst, &abort) {
            response.exchange = None;
            return fail_engine(&e);
        }
        response.finish();
        nodelay_code::NODELAY_OK
    })
}

/// Reads the whole body into the response (decoding its content codings,
/// under the client's size cap); `nodelay_response_body` then gives it. The
/// connection then goes back to the pool. `abort` as for `nodelay_request`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_read(
    response: *mut nodelay_response,
    abort: nodelay_abort_fn,
    abort_ctx: *mut c_void,
) -> nodelay_code {
    guard(|| {
        // SAFETY: a live response or NULL.
        let Some(response) = (unsafe { response.as_mut() }) else {
            return fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, "response is NULL");
        };
        let abort = Abort::of(abort, abort_ctx);
        let max_decoded = response.max_decoded_size;
        let read = match &response.plan {
            WholeBody::Exact { len, .. } => {
                let mut body = vec![0; *len];
                let exchange = match response.unread() {
                    Ok(exchange) => exchange,
                    Err(code) => return code,
                };
                read_exact(exchange, &mut body, &abort).map(|()| body)
            }
            WholeBody::Grown { body } => {
                let body = body.clone();
                let exchange = match response.unread() {
                    Ok(exchange) => exchange,
                    Err(code) => return code,
                };
                read_grown(exchange, &body, max_decoded, &abort)
            }
        };
        match read {
            Ok(body) => {
                response.body = body;
                response.finish();
                nodelay_code::NODELAY_OK
            }
            Err(e) => {
                response.exchange = None;
                fail_engine(&e)
            }
        }
    })
}

/// The body read by `nodelay_response_read` (`*len` bytes; empty before).
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_body(
    response: *const nodelay_response,
    len: *mut usize,
) -> *const u8 {
    // SAFETY: a live response or NULL.
    let body = unsafe { response.as_ref() }.map_or(&[][..], |r| &r.body[..]);
    // SAFETY: `len` is NULL or writable.
    unsafe { out_slice(body, len) }
}

/// Frees a response. A body not read to its end closes its connection.
/// NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_free(response: *mut nodelay_response) {
    if !response.is_null() {
        guard(|| {
            // SAFETY: a response from `nodelay_request`, freed only once.
            drop(unsafe { Box::from_raw(response) });
            nodelay_code::NODELAY_OK
        });
    }
}

/// `bytes` as a pointer, with its length written to `len` (when not NULL).
unsafe fn out_slice(bytes: &[u8], len: *mut usize) -> *const u8 {
    if !len.is_null() {
        // SAFETY: the caller checked `len` is writable.
        unsafe { len.write(bytes.len()) };
    }
    bytes.as_ptr()
}
