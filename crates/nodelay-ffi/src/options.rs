//! `nodelay_options`: what a client is made with. The struct starts with its
//! own size, so a program built against an older header (fewer fields) still
//! works with a newer library: fields beyond the caller's `size` keep their
//! defaults. Fields are only ever added at the end.

use std::ffi::{c_char, c_int, CStr, CString};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use nodelay_core::{Dial, Http2Mode, PoolConfig, ProxySettings, RateLimit, Timeouts, TlsOptions};
use nodelay_front::defaults::{self, ACCEPT_ENCODING, MAX_DECODED_SIZE};

use crate::code::{fail, invalid, nodelay_code};

/// HTTP/1.1 only.
pub const NODELAY_HTTP2_OFF: u32 = 0;
/// `https`: offer h2 by ALPN; `http`: HTTP/1.1.
pub const NODELAY_HTTP2_NEGOTIATE: u32 = 1;
/// `http`: h2c with prior knowledge; `https`: as negotiate.
pub const NODELAY_HTTP2_PRIOR_KNOWLEDGE: u32 = 2;

/// Client options. Call `nodelay_options_init` first (it sets `size` and
/// every default: nodelay-front's one table of client defaults, which the
/// Python package reads too), then change fields. Strings are NUL-terminated
/// UTF-8 (or NULL for "not set") and are copied by `nodelay_client_new`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nodelay_options {
    /// `sizeof(struct nodelay_options)` as the caller knows it.
    pub size: usize,
    /// Timeouts in seconds; a negative number means none. `total_timeout`
    /// bounds a whole request (connect to last body byte).
    pub connect_timeout: f64,
    pub read_timeout: f64,
    pub write_timeout: f64,
    pub pool_timeout: f64,
    pub total_timeout: f64,
    /// Nonzero: verify TLS certificates (the default).
    pub verify: c_int,
    /// A PEM bundle of trusted CAs instead of the system store, or NULL.
    pub ca_file: *const c_char,
    /// A proxy URL for both `http` and `https` requests (`http://`, `https://`,
    /// `socks5://`, `socks5h://`, `socks4://` or `socks4a://`), or NULL.
    pub proxy: *const c_char,
    /// Hosts that bypass the proxy (curl's `NO_PROXY` syntax), or NULL.
    pub no_proxy: *const c_char,
    /// One of the `NODELAY_HTTP2_*` values.
    pub http2: u32,
    /// The `User-Agent` sent when a request has none; NULL: `nodelay/<version>`;
    /// an empty string: none.
    pub user_agent: *const c_char,
    /// A Netscape `cookies.txt` file: loaded by `nodelay_client_new` when it
    /// exists, written when the jar changes if `cookie_autosave` is nonzero,
    /// and by `nodelay_client_save_cookies`. NULL: cookies are kept in memory.
    pub cookie_file: *const c_char,
    /// Nonzero: write `cookie_file` after every response that changed the jar.
    pub cookie_autosave: c_int,
    /// Nonzero: the client keeps cookies (in memory when `cookie_file` is NULL).
    pub cookies: c_int,
    /// Cap on a decoded (decompressed) body in bytes; 0: the default.
    pub max_decoded_size: u64,
    /// Connections this client may hold open; 0: the default.
    pub max_connections: u32,
    /// Connections this client may hold open to one origin (scheme, host,
    /// port), busy, idle and being opened; 0: no such bound.
    pub max_connections_per_host: u32,
    /// Requests started per second (per origin when `rate_per_host` is
    /// nonzero, else for the whole client); 0: no rate limit. A request
    /// waits for its turn within the pool timeout (`NODELAY_E_POOL_TIMEOUT`
    /// when its turn comes later).
    pub rate_per_second: f64,
    /// Requests that may start at once after a quiet spell; 0: a fifth of a
    /// second's worth of `rate_per_second`, at least 1.
    pub rate_burst: u32,
    /// Nonzero (the default): each origin has its own rate budget.
    pub rate_per_host: c_int,
    /// The `Accept-Encoding` sent when a request has none; NULL: every
    /// coding the engine decodes (`gzip, deflate, br, zstd`, the Python
    /// front's default too); an empty string: none (for an adapter whose
    /// library sends exactly the headers its caller gave).
    pub accept_encoding: *const c_char,
    /// An IP address (v4 or v6) outgoing connections are bound to before
    /// they connect (the port is the kernel's choice), or NULL.
    pub local_address: *const c_char,
}

impl nodelay_options {
    fn defaults() -> nodelay_options {
        nodelay_options {
            size: std::mem::size_of::<nodelay_options>(),
            connect_timeout: defaults::CONNECT_TIMEOUT_SECS,
            read_timeout: defaults::READ_TIMEOUT_SECS,
            write_timeout: defaults::WRITE_TIMEOUT_SECS,
            pool_timeout: defaults::POOL_TIMEOUT_SECS,
            total_timeout: -1.0,
            verify: 1,
            ca_file: std::ptr::null(),
            proxy: std::ptr::null(),
            no_proxy: std::ptr::null(),
            http2: NODELAY_HTTP2_OFF,
            user_agent: std::ptr::null(),
            cookie_file: std::ptr::null(),
            cookie_autosave: 1,
            cookies: 1,
            max_decoded_size: 0,
            max_connections: 0,
            max_connections_per_host: 0,
            rate_per_second: 0.0,
            rate_burst: 0,
            rate_per_host: 1,
            accept_encoding: std::ptr::null(),
            local_address: std::ptr::null(),
        }
    }

    /// The caller's options over the defaults: only the first `size` bytes
    /// of the caller's struct are read.
    ///
    /// # Safety
    /// `given` points to at least `given.size` readable bytes.
    pub(crate) unsafe fn read(
        given: *const nodelay_options,
    ) -> Result<nodelay_options, nodelay_code> {
        let mut options = nodelay_options::defaults();
        if given.is_null() {
            return Ok(options);
        }
        // SAFETY: `size` is the struct's first field, present in every version.
        let size = unsafe { given.cast::<usize>().read() };
        let head = std::mem::size_of::<usize>();
        if size < head {
            return Err(fail(
                nodelay_code::NODELAY_E_INVALID_ARGUMENT,
                "nodelay_options.size is not set (call nodelay_options_init)",
            ));
        }
        let known = size.min(std::mem::size_of::<nodelay_options>());
        // SAFETY: the caller's struct has `size` readable bytes; ours has
        // `known` <= its own size; a prefix of a repr(C) struct lays out the
        // same fields in every version (fields are only appended).
        unsafe {
            std::ptr::copy_nonoverlapping(
                given.cast::<u8>(),
                (&mut options as *mut nodelay_options).cast::<u8>(),
                known,
            );
        }
        Ok(options)
    }
}

/// The `Accept-Encoding` a client sends when its `accept_encoding` is NULL
/// and a request has none: every coding the engine decodes. A static
/// NUL-terminated string, for a front that shows what will be sent (a test
/// double's view of a request, say).
#[no_mangle]
pub extern "C" fn nodelay_default_accept_encoding() -> *const c_char {
    static DEFAULT: OnceLock<CString> = OnceLock::new();
    DEFAULT
        .get_or_init(|| CString::new(ACCEPT_ENCODING).expect("no NUL in ACCEPT_ENCODING"))
        .as_ptr()
}

/// Fills the first `size` bytes of `options` with the defaults and sets its
/// `size` field to `size` (capped at this library's own size). Call it as
/// `nodelay_options_init(&o)`, the header's macro, which passes
/// `sizeof o`: a program built against an older, shorter header then gets
/// only the fields it knows written, never past the end of its struct.
#[no_mangle]
pub unsafe extern "C" fn nodelay_options_init_sized(options: *mut nodelay_options, size: usize) {
    let head = std::mem::size_of::<usize>();
    if options.is_null() || size < head {
        return;
    }
    let mut defaults = nodelay_options::defaults();
    let known = size.min(std::mem::size_of::<nodelay_options>());
    defaults.size = known;
    // SAFETY: the caller's struct has `size` writable bytes and `known` <=
    // `size`; a prefix of a repr(C) struct lays out the same fields in every
    // version (fields are only appended).
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&defaults as *const nodelay_options).cast::<u8>(),
            options.cast::<u8>(),
            known,
        );
    }
}

/// The options checked and converted into the engine's settings.
pub(crate) struct Settings {
    pub pool: PoolConfig,
    pub tls: TlsOptions,
    pub http2: Http2Mode,
    pub proxies: ProxySettings,
    pub timeouts: Timeouts,
    pub max_decoded_size: u64,
    pub user_agent: Option<String>,
    pub accept_encoding: Option<String>,
    pub cookies: bool,
    pub cookie_file: Option<PathBuf>,
    pub cookie_autosave: bool,
    pub dial: Dial,
}

impl Settings {
    pub(crate) fn of(o: &nodelay_options) -> Result<Settings, nodelay_code> {
        let http2 = match o.http2 {
            NODELAY_HTTP2_OFF => Http2Mode::Off,
            NODELAY_HTTP2_NEGOTIATE => Http2Mode::Negotiate,
            NODELAY_HTTP2_PRIOR_KNOWLEDGE => Http2Mode::PriorKnowledge,
            other => return Err(invalid(&format!("http2 must be 0, 1 or 2, got {other}"))),
        };
        let max_connections = match o.max_connections {
            0 => defaults::MAX_CONNECTIONS,
            n => n,
        } as usize;
        let rate = match o.rate_per_second {
            0.0 => None,
            per_second => Some(
                RateLimit::new(
                    per_second,
                    (o.rate_burst != 0).then_some(o.rate_burst),
                    o.rate_per_host != 0,
                )
                .map_err(|message| invalid(&format!("rate_{message}")))?,
            ),
        };
        let proxy = string("proxy", o.proxy)?;
        let user_agent = match string("user_agent", o.user_agent)? {
            None => Some(defaults::USER_AGENT.to_owned()),
            Some(ua) if ua.is_empty() => None,
            Some(ua) => Some(ua),
        };
        let accept_encoding = match string("accept_encoding", o.accept_encoding)? {
            None => Some(ACCEPT_ENCODING.to_owned()),
            Some(codings) if codings.is_empty() => None,
            Some(codings) => Some(codings),
        };
        Ok(Settings {
            pool: PoolConfig {
                max_connections: Some(max_connections),
                // A C client keeps as many idle connections as it may open:
                // it has no keep-alive option of its own.
                max_keepalive: Some(max_connections),
                keepalive_expiry: Some(Duration::from_secs_f64(defaults::KEEPALIVE_EXPIRY_SECS)),
                max_per_host: (o.max_connections_per_host != 0)
                    .then_some(o.max_connections_per_host as usize),
                rate,
            },
            tls: TlsOptions {
                verify: o.verify != 0,
                ca_file: string("ca_file", o.ca_file)?.map(PathBuf::from),
                ..TlsOptions::default()
            },
            http2,
            proxies: ProxySettings {
                http: proxy.clone(),
                https: proxy,
                no_proxy: string("no_proxy", o.no_proxy)?,
            },
            timeouts: Timeouts {
                connect: seconds("connect_timeout", o.connect_timeout)?,
                read: seconds("read_timeout", o.read_timeout)?,
                write: seconds("write_timeout", o.write_timeout)?,
                pool: seconds("pool_timeout", o.pool_timeout)?,
                total: seconds("total_timeout", o.total_timeout)?,
                total_configured: None,
            },
            max_decoded_size: match o.max_decoded_size {
                0 => MAX_DECODED_SIZE,
                n => n,
            },
            user_agent,
            accept_encoding,
            cookies: o.cookies != 0 || !o.cookie_file.is_null(),
            cookie_file: string("cookie_file", o.cookie_file)?.map(PathBuf::from),
            cookie_autosave: o.cookie_autosave != 0,
            dial: Dial {
                local_address: string("local_address", o.local_address)?
                    .map(|address| {
                        address.parse::<IpAddr>().map_err(|_| {
                            invalid(&format!(
                                "local_address must be an IP address, not {address:?}"
                            ))
                        })
                    })
                    .transpose()?,
                ..Dial::default()
            },
        })
    }
}

/// A negative number is "no timeout"; NaN and infinities are refused.
fn seconds(name: &str, value: f64) -> Result<Option<Duration>, nodelay_code> {
    if value < 0.0 {
        return Ok(None);
    }
    Duration::try_from_secs_f64(value)
        .map(Some)
        .map_err(|_| invalid(&format!("{name} must be a number of seconds, got {value}")))
}

/// A NUL-terminated UTF-8 string option, copied; NULL is `None`.
fn string(name: &str, ptr: *const c_char) -> Result<Option<String>, nodelay_code> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller passes NUL-terminated strings (documented).
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str()
        .map(|s| Some(s.to_owned()))
        .map_err(|_| invalid(&format!("{name} is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values a C caller gets are the front's table, the one the Python
    /// package reads.
    #[test]
    fn the_defaults_are_the_fronts_table() {
        let o = nodelay_options::defaults();
        let timeouts = [
            o.connect_timeout,
            o.read_timeout,
            o.write_timeout,
            o.pool_timeout,
        ];
        assert_eq!(
            timeouts,
            [
                defaults::CONNECT_TIMEOUT_SECS,
                defaults::READ_TIMEOUT_SECS,
                defaults::WRITE_TIMEOUT_SECS,
                defaults::POOL_TIMEOUT_SECS
            ]
        );
        let s = Settings::of(&o).unwrap();
        assert_eq!(
            s.pool.max_connections,
            Some(defaults::MAX_CONNECTIONS as usize)
        );
        assert_eq!(
            s.pool.keepalive_expiry,
            Some(Duration::from_secs_f64(defaults::KEEPALIVE_EXPIRY_SECS))
        );
        assert_eq!(s.user_agent.as_deref(), Some(defaults::USER_AGENT));
        assert_eq!(s.max_decoded_size, defaults::MAX_DECODED_SIZE);
    }

    /// A caller built against an older, shorter struct: fields past its
    /// `size` keep their defaults, whatever bytes follow in memory.
    #[test]
    fn fields_past_the_callers_size_keep_their_defaults() {
        let mut given = nodelay_options::defaults();
        given.connect_timeout = 1.5;
        given.max_connections = 7;
        given.size = std::mem::offset_of!(nodelay_options, max_connections);
        let read = unsafe { nodelay_options::read(&given) }.unwrap();
        assert_eq!(read.connect_timeout, 1.5);
        assert_eq!(read.max_connections, 0);
        given.size = 0;
        assert!(unsafe { nodelay_options::read(&given) }.is_err());
    }

    #[test]
    fn the_default_accept_encoding_is_the_engines() {
        let text = unsafe { CStr::from_ptr(nodelay_default_accept_encoding()) };
        assert_eq!(text.to_str(), Ok(ACCEPT_ENCODING));
    }

    #[test]
    fn settings_are_checked() {
        let mut o = nodelay_options::defaults();
        o.http2 = 9;
        assert!(Settings::of(&o).is_err());
        o.http2 = NODELAY_HTTP2_OFF;
        o.read_timeout = f64::NAN;
        assert!(Settings::of(&o).is_err());
        o.read_timeout = -1.0;
        let s = Settings::of(&o).unwrap();
        assert_eq!(s.timeouts.read, None);
        assert_eq!(s.timeouts.connect, Some(Duration::from_secs(10)));
        assert!(s.user_agent.unwrap().starts_with("nodelay/"));
        assert!(s.pool.max_per_host.is_none() && s.pool.rate.is_none());
        assert_eq!(s.accept_encoding.as_deref(), Some(ACCEPT_ENCODING));
        o.accept_encoding = c"".as_ptr();
        assert_eq!(Settings::of(&o).unwrap().accept_encoding, None);
        o.accept_encoding = c"gzip".as_ptr();
        assert_eq!(
            Settings::of(&o).unwrap().accept_encoding.as_deref(),
            Some("gzip")
        );
    }

    #[test]
    fn per_host_limits_and_the_rate_are_read_and_checked() {
        let mut o = nodelay_options::defaults();
        o.max_connections_per_host = 4;
        o.rate_per_second = 50.0;
        let s = Settings::of(&o).unwrap();
        assert_eq!(s.pool.max_per_host, Some(4));
        let rate = s.pool.rate.unwrap();
        assert_eq!(
            (rate.per_second(), rate.burst(), rate.per_host()),
            (50.0, 10, true)
        );
        o.rate_burst = 3;
        o.rate_per_host = 0;
        let rate = Settings::of(&o).unwrap().pool.rate.unwrap();
        assert_eq!((rate.burst(), rate.per_host()), (3, false));
        o.rate_per_second = f64::NAN;
        assert!(Settings::of(&o).is_err());
        o.rate_per_second = -2.0;
        assert!(Settings::of(&o).is_err());
    }
}
