//! `nodelay_client_dup`: another handle over the same client, for a host
//! whose threads each free what they hold (Perl ithreads copy every object
//! into a new thread, and each copy is destroyed on its own).

use std::sync::Arc;

use crate::client::nodelay_client;
use crate::code::{fail, guard, nodelay_code};

/// A new handle `*out` over the same client as `client`: the same connection
/// pool, cookie jar (and its file), timeouts and settings, shared by
/// reference count. Each handle is freed with `nodelay_client_free`; the
/// client closes its connections (and saves its cookie file) when its last
/// handle is freed. Handles may be used and freed on any thread.
#[no_mangle]
pub unsafe extern "C" fn nodelay_client_dup(
    client: *const nodelay_client,
    out: *mut *mut nodelay_client,
) -> nodelay_code {
    guard(|| {
        if out.is_null() {
            return fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, "out is NULL");
        }
        // SAFETY: a live handle from `nodelay_client_new` or
        // `nodelay_client_dup`, or NULL.
        let Some(client) = (unsafe { client.as_ref() }) else {
            return fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, "client is NULL");
        };
        let handle = nodelay_client {
            shared: Arc::clone(&client.shared),
        };
        // SAFETY: `out` is a valid, writable pointer (checked non-null).
        unsafe { out.write(Box::into_raw(Box::new(handle))) };
        nodelay_code::NODELAY_OK
    })
}
