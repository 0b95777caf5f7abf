//! `nodelay_client`: the engine's `Client` with the options of one
//! `nodelay_options`, its cookie jar (and the jar's file), made once and
//! shared by any number of threads. A handle holds its client by reference
//! count, so `nodelay_client_dup` (share.rs) can give another handle over the
//! same pool and jar; the last handle freed closes them.

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::Arc;

use nodelay_core::cookies::CookieJar;
use nodelay_core::{Client, Timeouts};

use crate::code::{fail, guard, nodelay_code};
use crate::options::{nodelay_options, Settings};

/// A client handle: a connection pool, TLS settings, default timeouts and a
/// cookie jar, shared with the handles `nodelay_client_dup` made from it.
/// Thread-safe: one client may serve every thread of a program.
pub struct nodelay_client {
    pub(crate) shared: Arc<ClientState>,
}

impl Deref for nodelay_client {
    type Target = ClientState;

    fn deref(&self) -> &ClientState {
        &self.shared
    }
}

/// What every handle of one client shares.
pub struct ClientState {
    pub(crate) client: Client,
    pub(crate) timeouts: Timeouts,
    pub(crate) max_decoded_size: u64,
    pub(crate) user_agent: Option<String>,
    /// Sent as `Accept-Encoding` when a request has none.
    pub(crate) accept_encoding: Option<String>,
    pub(crate) jar: Option<CookieJar>,
    /// Where the jar is saved, and whether after every change.
    cookie_file: Option<PathBuf>,
    cookie_autosave: bool,
}

impl ClientState {
    /// Called when a response changed the jar: saves it when autosaving.
    /// A failed save does not fail the request that was answered; it is
    /// reported by the next `nodelay_client_save_cookies`.
    pub(crate) fn jar_changed(&self) {
        if let (Some(jar), Some(path), true) = (&self.jar, &self.cookie_file, self.cookie_autosave)
        {
            let _ = jar.save(path);
        }
    }

    /// The fields the client adds to a request that has none of that name
    /// (`nodelay_front::assembly::assemble`'s defaults): its `User-Agent`
    /// and `Accept-Encoding`.
    pub(crate) fn default_fields(&self) -> impl Iterator<Item = (&str, &str)> {
        [
            ("User-Agent", self.user_agent.as_deref()),
            ("Accept-Encoding", self.accept_encoding.as_deref()),
        ]
        .into_iter()
        .filter_map(|(name, value)| Some((name, value?)))
    }

    fn save(&self) -> nodelay_code {
        let (Some(jar), Some(path)) = (&self.jar, &self.cookie_file) else {
            return nodelay_code::NODELAY_OK;
        };
        match jar.save(path) {
            Ok(()) => nodelay_code::NODELAY_OK,
            Err(e) => fail(
                nodelay_code::NODELAY_E_COOKIE_FILE,
                &format!("cannot write cookie file {}: {e}", path.display()),
            ),
        }
    }
}

/// Makes a client from `options` (NULL: every default). On success `*out`
/// holds the client; free it with `nodelay_client_free`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_client_new(
    options: *const nodelay_options,
    out: *mut *mut nodelay_client,
) -> nodelay_code {
    guard(|| {
        if out.is_null() {
            return fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, "out is NULL");
        }
        // SAFETY: documented contract of `options`.
        let options = match unsafe { nodelay_options::read(options) } {
            Ok(options) => options,
            Err(code) => return code,
        };
        let settings = match Settings::of(&options) {
            Ok(settings) => settings,
            Err(code) => return code,
        };
        let client =
            match Client::with_dial(settings.pool, settings.tls, settings.http2, settings.dial)
                .proxied(&settings.proxies)
            {
                Ok(client) => client,
                Err(e) => return fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, &e.to_string()),
            };
        let jar = settings.cookies.then(CookieJar::new);
        if let (Some(jar), Some(path)) = (&jar, &settings.cookie_file) {
            match jar.load(path) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return fail(
                        nodelay_code::NODELAY_E_COOKIE_FILE,
                        &format!("cannot read cookie file {}: {e}", path.display()),
                    )
                }
            }
        }
        let client = ClientState {
            client,
            timeouts: settings.timeouts,
            max_decoded_size: settings.max_decoded_size,
            user_agent: settings.user_agent,
            accept_encoding: settings.accept_encoding,
            jar,
            cookie_file: settings.cookie_file,
            cookie_autosave: settings.cookie_autosave,
        };
        let handle = nodelay_client {
            shared: Arc::new(client),
        };
        // SAFETY: `out` is a valid, writable pointer (checked non-null).
        unsafe { out.write(Box::into_raw(Box::new(handle))) };
        nodelay_code::NODELAY_OK
    })
}

/// Writes the cookie jar to the options' `cookie_file` now (atomically:
/// a temporary file, then a rename). `NODELAY_OK` when there is no file.
#[no_mangle]
pub unsafe extern "C" fn nodelay_client_save_cookies(
    client: *const nodelay_client,
) -> nodelay_code {
    guard(|| {
        // SAFETY: a client from `nodelay_client_new`, not yet freed.
        match unsafe { client.as_ref() } {
            Some(client) => client.save(),
            None => fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, "client is NULL"),
        }
    })
}

/// Frees the handle. The last handle of a client (see `nodelay_client_dup`)
/// also closes its connections and saves the cookie file when autosaving.
/// Every response made through the handle must be freed first. NULL is
/// ignored.
#[no_mangle]
pub unsafe extern "C" fn nodelay_client_free(client: *mut nodelay_client) {
    if client.is_null() {
        return;
    }
    guard(|| {
        // SAFETY: a handle from `nodelay_client_new` or `nodelay_client_dup`,
        // freed only once.
        let handle = unsafe { Box::from_raw(client) };
        // Exactly one of several handles freed at once gets the state.
        if let Some(client) = Arc::into_inner(handle.shared) {
            if client.cookie_autosave {
                client.save();
            }
            client.client.close();
        }
        nodelay_code::NODELAY_OK
    });
}
