//! `nodelay_request`: send one request and read its response head. The body
//! is read afterwards, into the caller's buffer when its length is known
//! (`nodelay_response_read_into`), else by the library (`nodelay_response_read`).

use std::ffi::{c_char, c_void, CStr};

use nodelay_core::{BodySource, RequestParts, StreamFraming};
use nodelay_front::assembly::assemble;
use nodelay_front::body::WholeBody;
use nodelay_front::cookies::{is_cookie_name, request_cookie, store_response};
use nodelay_front::Head;

use crate::abort::{nodelay_abort_fn, Abort};
use crate::client::nodelay_client;
use crate::code::{fail_engine, guard, invalid, nodelay_code};
use crate::response::nodelay_response;

/// One request header: `name_len` bytes at `name`, `value_len` bytes at
/// `value` (UTF-8, no NUL needed). Borrowed for the call only.
#[repr(C)]
pub struct nodelay_header {
    pub name: *const c_char,
    pub name_len: usize,
    pub value: *const c_char,
    pub value_len: usize,
}

/// Sends `method` to `url` (NUL-terminated UTF-8) with `n_headers` headers
/// and a body of `body_len` bytes at `body` (NULL: no body; a non-NULL
/// pointer with length 0 is an empty body), then reads the response head.
/// The client adds its `User-Agent`, its `Accept-Encoding` and its cookie
/// jar's `Cookie` header (each unless the request has its own) and stores
/// the response's Set-Cookie fields.
///
/// `abort` (may be NULL) is polled while the request waits (see
/// `nodelay_abort_fn`). On success `*out` holds the response: read its body
/// with `nodelay_response_read_into` or `nodelay_response_read`, then free it
/// with `nodelay_response_free`. On failure `*out` is NULL and
/// `nodelay_last_error()` says why.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nodelay_request(
    client: *const nodelay_client,
    method: *const c_char,
    url: *const c_char,
    headers: *const nodelay_header,
    n_headers: usize,
    body: *const u8,
    body_len: usize,
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
        let body = (!body.is_null()).then(|| {
            // SAFETY: `body_len` readable bytes at `body`, for the call.
            unsafe { std::slice::from_raw_parts(body, body_len) }
        });
        let abort = Abort::of(abort, abort_ctx);
        // SAFETY: `out` was checked by `request_args`.
        unsafe { send_into(out, args, Payload::Whole(body), &abort) }
    })
}

/// The arguments every request call shares, checked in this order: `out`
/// (cleared first, so a failed call leaves NULL there), the client, the
/// method and URL, the header fields.
pub(crate) struct RequestArgs<'a> {
    client: &'a nodelay_client,
    method: &'a str,
    url: &'a str,
    pairs: Vec<(&'a str, &'a str)>,
}

/// Reads and checks the arguments of a request call.
///
/// # Safety
/// Each pointer follows its documented contract (`out` writable, `client`
/// from `nodelay_client_new` and not freed, NUL-terminated texts,
/// `n_headers` readable header structs).
pub(crate) unsafe fn request_args<'a>(
    out: *mut *mut nodelay_response,
    client: *const nodelay_client,
    method: *const c_char,
    url: *const c_char,
    headers: *const nodelay_header,
    n_headers: usize,
) -> Result<RequestArgs<'a>, nodelay_code> {
    if out.is_null() {
        return Err(invalid("out is NULL"));
    }
    // SAFETY: `out` is writable (checked non-null).
    unsafe { out.write(std::ptr::null_mut()) };
    // SAFETY: a client from `nodelay_client_new`, not yet freed.
    let Some(client) = (unsafe { client.as_ref() }) else {
        return Err(invalid("client is NULL"));
    };
    // SAFETY (all three): the documented pointer contracts.
    let (method, url) = unsafe { (c_text("method", method)?, c_text("url", url)?) };
    let pairs = unsafe { header_pairs(headers, n_headers)? };
    Ok(RequestArgs {
        client,
        method,
        url,
        pairs,
    })
}

/// Sends the request and hands its response to the caller through `out`.
///
/// # Safety
/// `out` is writable (as `request_args` checked).
pub(crate) unsafe fn send_into(
    out: *mut *mut nodelay_response,
    args: RequestArgs<'_>,
    payload: Payload<'_>,
    abort: &Abort,
) -> nodelay_code {
    match send(
        args.client,
        args.method,
        args.url,
        args.pairs,
        payload,
        abort,
    ) {
        Ok(response) => {
            // SAFETY: the caller's contract.
            unsafe { out.write(Box::into_raw(Box::new(response))) };
            nodelay_code::NODELAY_OK
        }
        Err(code) => code,
    }
}

/// A request's body: held whole by the caller (`None`: no body), or pulled
/// from a source while the request goes out (`nodelay_request_streamed`).
pub(crate) enum Payload<'a> {
    Whole(Option<&'a [u8]>),
    Streamed(&'a mut dyn BodySource, StreamFraming),
}

/// Adds the client's own headers, sends, and keeps the head (cookies stored).
pub(crate) fn send<'a>(
    client: &nodelay_client,
    method: &'a str,
    url: &'a str,
    given: Vec<(&'a str, &'a str)>,
    body: Payload<'_>,
    abort: &Abort,
) -> Result<nodelay_response, nodelay_code> {
    let cookie = match &client.jar {
        Some(jar) => request_cookie(jar, url, || {
            // Header names are ASCII on the wire; the front's rule for a
            // non-ASCII one is "not Cookie" (core refuses it anyway).
            Ok::<_, nodelay_code>(
                given
                    .iter()
                    .any(|(name, _)| is_cookie_name(name) == Some(true)),
            )
        })?,
        None => None,
    };
    let mut pairs: Vec<(&str, &str)> = given;
    assemble(&mut pairs, cookie.as_deref(), client.default_fields());
    let engine = &client.client;
    let mut exchange = match body {
        Payload::Whole(body) => {
            let parts = RequestParts {
                method,
                url,
                headers: &pairs,
                body,
            };
            let prepared = engine.prepare(&parts).map_err(|e| fail_engine(&e))?;
            engine.send(&prepared, body, client.timeouts, abort)
        }
        Payload::Streamed(source, framing) => {
            let parts = RequestParts {
                method,
                url,
                headers: &pairs,
                body: None,
            };
            let prepared = engine
                .prepare_streamed(&parts, framing)
                .map_err(|e| fail_engine(&e))?;
            engine.send_streamed(&prepared, source, client.timeouts, abort)
        }
    }
    .map_err(|e| fail_engine(&e))?;
    let plan = WholeBody::of(&exchange).map_err(|e| fail_engine(&e))?;
    let head = Head::take(&mut exchange);
    if let Some(jar) = &client.jar {
        if store_response(jar, &head, url) {
            client.jar_changed();
        }
    }
    Ok(nodelay_response::new(
        head,
        exchange,
        plan,
        client.max_decoded_size,
    ))
}

/// A NUL-terminated UTF-8 argument, borrowed for the call.
pub(crate) unsafe fn c_text<'a>(name: &str, ptr: *const c_char) -> Result<&'a str, nodelay_code> {
    if ptr.is_null() {
        return Err(invalid(&format!("{name} is NULL")));
    }
    // SAFETY: NUL-terminated, alive for the call (documented).
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| invalid(&format!("{name} is not UTF-8")))
}

/// Headers the client may add to a request's own: Cookie, User-Agent and
/// Accept-Encoding.
const CLIENT_HEADERS: usize = 3;

/// The caller's header array as borrowed `(name, value)` pairs, with room
/// for the ones the client may add without a regrowth.
pub(crate) unsafe fn header_pairs<'a>(
    headers: *const nodelay_header,
    n: usize,
) -> Result<Vec<(&'a str, &'a str)>, nodelay_code> {
    if n == 0 {
        return Ok(Vec::with_capacity(CLIENT_HEADERS));
    }
    if headers.is_null() {
        return Err(invalid("headers is NULL"));
    }
    // SAFETY: `n` headers at `headers`, alive for the call (documented).
    let given = unsafe { std::slice::from_raw_parts(headers, n) };
    let mut pairs = Vec::with_capacity(n + CLIENT_HEADERS);
    for header in given {
        // SAFETY: each field points to `len` readable bytes.
        let name = unsafe { bytes_text("header name", header.name, header.name_len)? };
        let value = unsafe { bytes_text("header value", header.value, header.value_len)? };
        pairs.push((name, value));
    }
    Ok(pairs)
}

unsafe fn bytes_text<'a>(
    what: &str,
    ptr: *const c_char,
    len: usize,
) -> Result<&'a str, nodelay_code> {
    if len == 0 {
        return Ok("");
    }
    if ptr.is_null() {
        return Err(invalid(&format!("{what} is NULL")));
    }
    // SAFETY: `len` readable bytes at `ptr` (documented).
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|_| invalid(&format!("{what} is not UTF-8")))
}
