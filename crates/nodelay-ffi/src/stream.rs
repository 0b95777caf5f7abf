//! `nodelay_response_read_chunk`: a response body handed out piece by piece,
//! decoded on the fly (the engine's `BodyStream`), for a front that streams
//! to its caller (a Ruby block, a Perl callback) instead of holding the whole
//! body. The engine keeps one interrupt for a stream's lifetime, while the
//! ABI takes an abort callback per call: [`CallAbort`] is that one interrupt,
//! pointed at each call's callback for the call's duration.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

use nodelay_core::decode::parse_codings;
use nodelay_core::{BodyStream, Interrupt};

use crate::abort::nodelay_abort_fn;
use crate::code::{fail_engine, guard, invalid, nodelay_code};
use crate::response::nodelay_response;

/// The abort callback of the `nodelay_response_read_chunk` call in progress
/// (none between calls). Atomics only to be `Sync` as the engine requires: a
/// response belongs to one thread at a time, and the callback is set and
/// polled on that thread.
#[derive(Default)]
pub(crate) struct CallAbort {
    /// The callback as an address; 0: none.
    callback: AtomicUsize,
    ctx: AtomicPtr<c_void>,
}

impl CallAbort {
    fn set(&self, callback: nodelay_abort_fn, ctx: *mut c_void) {
        self.callback
            .store(callback.map_or(0, |f| f as usize), Ordering::Relaxed);
        self.ctx.store(ctx, Ordering::Relaxed);
    }

    fn callback(&self) -> nodelay_abort_fn {
        match self.callback.load(Ordering::Relaxed) {
            0 => None,
            // SAFETY: a nonzero value was stored from a function pointer of
            // exactly this type by `set`.
            address => Some(unsafe {
                std::mem::transmute::<usize, unsafe extern "C" fn(*mut c_void) -> i32>(address)
            }),
        }
    }
}

impl Interrupt for CallAbort {
    fn should_abort(&self) -> bool {
        match self.callback() {
            // SAFETY: the caller of `nodelay_response_read_chunk` gave a valid
            // function and context for the call, and `set` clears both when
            // the call returns.
            Some(callback) => unsafe { callback(self.ctx.load(Ordering::Relaxed)) != 0 },
            None => false,
        }
    }

    fn needs_polling(&self) -> bool {
        self.callback.load(Ordering::Relaxed) != 0
    }
}

/// A body being streamed: the engine's stream and the interrupt it polls.
pub(crate) struct Streaming {
    stream: BodyStream,
    abort: Arc<CallAbort>,
}

impl Streaming {
    /// The trailer lines that followed the body, once it ended.
    pub(crate) fn trailers(&self) -> &[u8] {
        self.stream.trailers()
    }
}

/// Reads the next piece of the body, its content codings undone, into the
/// caller's buffer `dst` of `cap` bytes (`cap` > 0): `*n` is set to the
/// number of bytes written, 0 once the body has ended (the connection then
/// goes back to the pool). Waits only for the first bytes of a piece, so a
/// body that trickles is handed out as it arrives. The decoded size is capped
/// as for `nodelay_response_read`. A body read this way cannot also be read
/// whole (`nodelay_response_read`, `nodelay_response_read_into`), and one
/// read whole has no pieces left. On failure the connection is closed and
/// later calls give 0 bytes. `abort` as for `nodelay_request`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_response_read_chunk(
    response: *mut nodelay_response,
    dst: *mut u8,
    cap: usize,
    n: *mut usize,
    abort: nodelay_abort_fn,
    abort_ctx: *mut c_void,
) -> nodelay_code {
    guard(|| {
        // SAFETY: a live response or NULL.
        let Some(response) = (unsafe { response.as_mut() }) else {
            return invalid("response is NULL");
        };
        if n.is_null() || dst.is_null() || cap == 0 {
            return invalid(
                "nodelay_response_read_chunk needs a buffer and a place for its length",
            );
        }
        // SAFETY: `n` is writable (checked non-null).
        unsafe { n.write(0) };
        let streaming = match start(response) {
            Ok(Some(streaming)) => streaming,
            Ok(None) => return nodelay_code::NODELAY_OK,
            Err(code) => return code,
        };
        // SAFETY: `cap` writable bytes at `dst`, not aliased during the call.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst, cap) };
        streaming.abort.set(abort, abort_ctx);
        let read = streaming.stream.read(dst, cap);
        streaming.abort.set(None, std::ptr::null_mut());
        match read {
            // SAFETY: as above.
            Ok(filled) => unsafe { n.write(filled) },
            Err(e) => return fail_engine(&e),
        }
        nodelay_code::NODELAY_OK
    })
}

/// The response's stream, made from its exchange on the first call; `None`
/// when the body was already read whole.
fn start(response: &mut nodelay_response) -> Result<Option<&mut Streaming>, nodelay_code> {
    if response.stream.is_none() {
        let Some(exchange) = response.exchange.take() else {
            return Ok(None);
        };
        let codings = parse_codings(response.head.values("content-encoding"))
            .map_err(|e| fail_engine(&e))?
            .unwrap_or_default();
        let abort = Arc::new(CallAbort::default());
        let stream = BodyStream::new(exchange, abort.clone(), &codings, response.max_decoded_size)
            .map_err(|e| fail_engine(&e))?;
        response.stream = Some(Streaming { stream, abort });
    }
    Ok(response.stream.as_mut())
}
