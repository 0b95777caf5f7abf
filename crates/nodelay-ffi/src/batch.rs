//! `nodelay_request_many`: many requests at once, each read whole, over the
//! front's batch runner (`nodelay_front::batch`, the one Python's
//! `Client.get_many` runs). The calling thread waits for the runners and
//! asks the host's abort callback between slices of the engine's
//! signal-check interval; the requests themselves run on the engine's
//! runtime (or, for a client with proxies, on worker threads), so the host's
//! lock (Ruby's GVL) is released by the host around the whole call.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;
use std::time::Duration;

use nodelay_core::cookies::CookieJar;
use nodelay_core::Interrupt;
use nodelay_core::{Client, SIGNAL_CHECK_INTERVAL};
use nodelay_front::assembly::{assemble, has_field};
use nodelay_front::batch::{Batch, HeaderSet, Host, Job, MAX_BATCH_CONCURRENCY};
use nodelay_front::defaults::BATCH_CONCURRENCY;
use nodelay_front::ErrorCode;

use crate::abort::{nodelay_abort_fn, Abort};
use crate::client::{nodelay_client, ClientState};
use crate::code::{fail, guard, invalid, nodelay_code};
use crate::request::{c_text, header_pairs, nodelay_header};
use crate::response::nodelay_response;

/// The most requests `nodelay_request_many` keeps in flight at once.
pub const NODELAY_MAX_BATCH_CONCURRENCY: usize = 1024;

// The header's number is the runner's limit (cbindgen reads literals only).
const _: () = assert!(NODELAY_MAX_BATCH_CONCURRENCY == MAX_BATCH_CONCURRENCY);

/// One request of a batch: as the arguments of `nodelay_request` (`method`
/// and `url` NUL-terminated UTF-8, `n_headers` headers at `headers`, a body
/// of `body_len` bytes at `body`, NULL: none). Borrowed for the call only.
/// Requests that share a method, URL or header array (the same pointers)
/// are converted once.
#[repr(C)]
pub struct nodelay_batch_request {
    pub method: *const c_char,
    pub url: *const c_char,
    pub headers: *const nodelay_header,
    pub n_headers: usize,
    pub body: *const u8,
    pub body_len: usize,
}

/// The outcomes of a batch, in the order of its requests: take each with
/// `nodelay_batch_take`, free the batch with `nodelay_batch_free`.
pub struct nodelay_batch {
    outcomes: Vec<Outcome>,
}

enum Outcome {
    /// The response, until taken.
    Response(Option<Box<nodelay_response>>),
    /// The request failed: its code and message.
    Failed(nodelay_code, CString),
}

/// The client state a batch holds while its runners use it.
struct AbiHost(Arc<ClientState>);

impl Host for AbiHost {
    fn client(&self) -> &Client {
        &self.0.client
    }

    fn max_decoded_size(&self) -> u64 {
        self.0.max_decoded_size
    }

    fn jar(&self) -> Option<&CookieJar> {
        self.0.jar.as_ref()
    }
}

/// Sends the `n` requests at `requests` with at most `concurrency` in flight
/// (0: the default, 32; at most `NODELAY_MAX_BATCH_CONCURRENCY`) and reads
/// each response whole, as `nodelay_request` then `nodelay_response_read`
/// would: the client's `User-Agent`, `Accept-Encoding` and jar `Cookie`
/// added (each unless the request has its own), Set-Cookie fields stored as
/// each response arrives, the client's timeouts, pool, per-host connection
/// limit and rate limit applying to every request. HTTP/1.1 requests go over
/// the client's pool, HTTP/2 ones as streams of its one connection per
/// origin.
///
/// `deadline` (seconds; negative: none) bounds the whole batch: a request
/// still running then, or starting after it, fails with a timeout code whose
/// message names the deadline. Every request is sent whatever the others'
/// outcome; each has its own.
///
/// `abort` (may be NULL) is asked on the calling thread every 50 ms while
/// the batch runs (see `nodelay_abort_fn`); a nonzero answer stops every
/// request (connections in use are closed) and the call returns
/// `NODELAY_E_INTERRUPTED` with no batch. On success `*out` holds the
/// outcomes (`nodelay_batch_take`); free it with `nodelay_batch_free`.
/// A malformed argument (a NULL pointer, text that is not UTF-8) fails the
/// whole call with `NODELAY_E_INVALID_ARGUMENT` before anything is sent.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nodelay_request_many(
    client: *const nodelay_client,
    requests: *const nodelay_batch_request,
    n: usize,
    concurrency: usize,
    deadline: f64,
    abort: nodelay_abort_fn,
    abort_ctx: *mut c_void,
    out: *mut *mut nodelay_batch,
) -> nodelay_code {
    guard(|| {
        if out.is_null() {
            return invalid("out is NULL");
        }
        // SAFETY: `out` is writable (checked non-null).
        unsafe { out.write(std::ptr::null_mut()) };
        // SAFETY: a client from `nodelay_client_new`, not yet freed.
        let Some(client) = (unsafe { client.as_ref() }) else {
            return invalid("client is NULL");
        };
        let concurrency = match concurrency {
            0 => BATCH_CONCURRENCY as usize,
            n if n > MAX_BATCH_CONCURRENCY => {
                return invalid(&format!(
                    "concurrency must be between 1 and {MAX_BATCH_CONCURRENCY} (0: the default), got {n}"
                ))
            }
            n => n,
        };
        let deadline = match deadline {
            d if d.is_nan() || d.is_infinite() => {
                return invalid("deadline must be a finite number of seconds (negative: none)")
            }
            d if d < 0.0 => None,
            d => Some(Duration::from_secs_f64(d)),
        };
        let given = if n == 0 {
            &[][..]
        } else if requests.is_null() {
            return invalid("requests is NULL");
        } else {
            // SAFETY: `n` requests at `requests`, alive for the call.
            unsafe { std::slice::from_raw_parts(requests, n) }
        };
        // SAFETY: each request's pointers follow their documented contract.
        let jobs = match unsafe { jobs(client, given) } {
            Ok(jobs) => jobs,
            Err(code) => return code,
        };
        let host = AbiHost(Arc::clone(&client.shared));
        let batch = Batch::new(host, jobs, client.timeouts, deadline, false);
        let mut started = batch.start(concurrency);
        let abort = Abort::of(abort, abort_ctx);
        let finished = started.wait_unless(SIGNAL_CHECK_INTERVAL, || abort.should_abort());
        if batch.cookies_changed() {
            client.jar_changed();
        }
        if !finished {
            return fail(
                nodelay_code::NODELAY_E_INTERRUPTED,
                "interrupted: the abort callback stopped the batch",
            );
        }
        if let Some(e) = started.spawn_error() {
            return fail(
                nodelay_code::NODELAY_E_INTERNAL,
                &format!("cannot start a thread: {e}"),
            );
        }
        let max_decoded_size = client.max_decoded_size;
        let outcomes = batch
            .take_outcomes()
            .into_iter()
            .map(|outcome| match outcome {
                Some(Ok(done)) => Outcome::Response(Some(Box::new(nodelay_response::whole(
                    done.head,
                    done.body,
                    max_decoded_size,
                )))),
                Some(Err(e)) => Outcome::Failed(
                    nodelay_code::of_front(ErrorCode::of(&e)),
                    message(&e.to_string()),
                ),
                // Every request runs unless the batch is aborted (above).
                None => Outcome::Failed(
                    nodelay_code::NODELAY_E_INTERNAL,
                    message("the request was not sent"),
                ),
            })
            .collect();
        let batch = nodelay_batch { outcomes };
        // SAFETY: `out` is writable (checked non-null).
        unsafe { out.write(Box::into_raw(Box::new(batch))) };
        nodelay_code::NODELAY_OK
    })
}

/// A message as the C string a failed outcome keeps (up to a NUL byte).
fn message(text: &str) -> CString {
    CString::new(text.split('\0').next().unwrap_or_default()).unwrap_or_default()
}

/// The owned jobs of the caller's requests. A method, URL or header array
/// given by the same pointer as the request before is converted once (and
/// shared, so a runner reuses the request it prepared for the last one).
///
/// # Safety
/// Every pointer of every request follows its documented contract.
unsafe fn jobs(
    client: &nodelay_client,
    given: &[nodelay_batch_request],
) -> Result<Vec<Job>, nodelay_code> {
    let encode = Batch::<AbiHost>::encodes_headers(&client.client);
    let mut jobs: Vec<Job> = Vec::with_capacity(given.len());
    let mut previous: Option<&nodelay_batch_request> = None;
    for request in given {
        let same = |field: fn(&nodelay_batch_request) -> *const c_char| {
            previous.is_some_and(|p| field(p) == field(request))
        };
        let last = jobs.last();
        let method = match last {
            Some(job) if same(|r| r.method) => Arc::clone(&job.method),
            // SAFETY: NUL-terminated, alive for the call (documented).
            _ => unsafe { c_text("method", request.method)? }.into(),
        };
        let url = match last {
            Some(job) if same(|r| r.url) => Arc::clone(&job.url),
            // SAFETY: as above.
            _ => unsafe { c_text("url", request.url)? }.into(),
        };
        let same_headers = previous
            .is_some_and(|p| p.headers == request.headers && p.n_headers == request.n_headers);
        let headers = match last {
            Some(job) if same_headers => Arc::clone(&job.headers),
            // SAFETY: `n_headers` headers at `headers` (documented).
            _ => Arc::new(unsafe { header_set(client, request, encode)? }),
        };
        let body = (!request.body.is_null()).then(|| {
            // SAFETY: `body_len` readable bytes at `body`, for the call.
            unsafe { std::slice::from_raw_parts(request.body, request.body_len) }.to_vec()
        });
        jobs.push(Job {
            method,
            url,
            headers,
            body,
        });
        previous = Some(request);
    }
    Ok(jobs)
}

/// A request's own header fields with the client's defaults assembled in
/// (the jar's `Cookie` is added as each request starts).
///
/// # Safety
/// `request.headers` holds `request.n_headers` readable headers.
unsafe fn header_set(
    client: &nodelay_client,
    request: &nodelay_batch_request,
    encode: bool,
) -> Result<HeaderSet, nodelay_code> {
    // SAFETY: the caller's contract.
    let mut pairs = unsafe { header_pairs(request.headers, request.n_headers)? };
    // Header names are ASCII on the wire; the front's rule for a non-ASCII
    // one is "not Cookie" (core refuses it anyway).
    let has_cookie = has_field(&pairs, "Cookie");
    assemble(&mut pairs, None, client.default_fields());
    let owned = pairs
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    Ok(HeaderSet::new(owned, has_cookie, encode))
}

/// How many outcomes `batch` holds (the number of requests given).
#[no_mangle]
pub unsafe extern "C" fn nodelay_batch_count(batch: *const nodelay_batch) -> usize {
    // SAFETY: a live batch or NULL.
    unsafe { batch.as_ref() }.map_or(0, |b| b.outcomes.len())
}

/// The outcome of request `index`: `NODELAY_OK` with `*response` its
/// response, whose body is already read (`nodelay_response_body` gives it;
/// it is now the caller's, free it with `nodelay_response_free`; taking it
/// again gives `NODELAY_E_INVALID_ARGUMENT`), or the request's error code
/// with `*message` its message (owned by the batch, valid until it is
/// freed; also the thread's `nodelay_last_error()`). `message` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn nodelay_batch_take(
    batch: *mut nodelay_batch,
    index: usize,
    response: *mut *mut nodelay_response,
    message: *mut *const c_char,
) -> nodelay_code {
    guard(|| {
        if response.is_null() {
            return invalid("response is NULL");
        }
        // SAFETY: `response` is writable (checked non-null).
        unsafe { response.write(std::ptr::null_mut()) };
        // SAFETY: `message` is NULL or writable.
        let set_message = |text: *const c_char| unsafe {
            if !message.is_null() {
                message.write(text);
            }
        };
        set_message(c"".as_ptr());
        // SAFETY: a live batch or NULL.
        let Some(batch) = (unsafe { batch.as_mut() }) else {
            return invalid("batch is NULL");
        };
        let Some(outcome) = batch.outcomes.get_mut(index) else {
            return invalid(&format!(
                "index {index} is beyond the batch's {} requests",
                batch.outcomes.len()
            ));
        };
        match outcome {
            Outcome::Response(taken) => match taken.take() {
                Some(taken) => {
                    // SAFETY: as above.
                    unsafe { response.write(Box::into_raw(taken)) };
                    nodelay_code::NODELAY_OK
                }
                None => invalid(&format!(
                    "the response of request {index} was already taken"
                )),
            },
            Outcome::Failed(code, text) => {
                set_message(text.as_ptr());
                fail(*code, text.to_str().unwrap_or_default())
            }
        }
    })
}

/// Frees a batch and the responses not taken from it. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn nodelay_batch_free(batch: *mut nodelay_batch) {
    if !batch.is_null() {
        guard(|| {
            // SAFETY: a batch from `nodelay_request_many`, freed only once.
            drop(unsafe { Box::from_raw(batch) });
            nodelay_code::NODELAY_OK
        });
    }
}
