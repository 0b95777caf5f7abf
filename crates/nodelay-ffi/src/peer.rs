//! `nodelay_client_kept_peer`: where the connection the latest request used
//! goes, while it is kept for the next request (HTTP::Tiny's `connected`).

use std::ffi::c_char;

use crate::client::nodelay_client;
use crate::code::{guard, invalid, nodelay_code};

/// Bytes `nodelay_client_kept_peer` needs at `host`: the longest text of an
/// IP address (an IPv6 one, as `INET6_ADDRSTRLEN` counts it) and its NUL.
pub const NODELAY_PEER_HOST_CAP: usize = 46;

/// The peer of the HTTP/1.1 connection the client's latest request used,
/// when that connection is kept for the next request (idle in the pool and
/// alive): its IP address as text, NUL-terminated, in `host` (`host_cap`
/// bytes, at least `NODELAY_PEER_HOST_CAP`), and its port in `*port`.
/// Through a proxy, the proxy's. When no connection is kept (it was closed:
/// `Connection: close`, an error, a body not read to its end; the request
/// went over HTTP/2; no request yet) `host` is `""` and `*port` 0. With
/// several threads sending on one client, the latest is whichever request
/// took its connection last. Walks the idle connections: not a call to make
/// per request.
#[no_mangle]
pub unsafe extern "C" fn nodelay_client_kept_peer(
    client: *const nodelay_client,
    host: *mut c_char,
    host_cap: usize,
    port: *mut u16,
) -> nodelay_code {
    guard(|| {
        // SAFETY: a live client or NULL.
        let Some(client) = (unsafe { client.as_ref() }) else {
            return invalid("client is NULL");
        };
        if host.is_null() || port.is_null() {
            return invalid("host or port is NULL");
        }
        if host_cap < NODELAY_PEER_HOST_CAP {
            return invalid("host needs NODELAY_PEER_HOST_CAP bytes");
        }
        let peer = client.client.kept_peer();
        let text = peer.map(|addr| addr.ip().to_string()).unwrap_or_default();
        // An IP address's text is ASCII and shorter than the cap.
        let bytes = &text.as_bytes()[..text.len().min(NODELAY_PEER_HOST_CAP - 1)];
        // SAFETY: `host_cap` writable bytes at `host`, `port` writable
        // (documented); `bytes` is shorter than `host_cap`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), host.cast::<u8>(), bytes.len());
            host.add(bytes.len()).write(0);
            port.write(peer.map_or(0, |addr| addr.port()));
        }
        nodelay_code::NODELAY_OK
    })
}
