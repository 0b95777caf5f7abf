//! Error codes as the ABI returns them, and the thread's last error message.
//!
//! The engine's codes are `nodelay_front::ErrorCode`, numbered once and never
//! renumbered (like libcurl's `CURLcode`); this enum repeats them for the
//! header (cbindgen reads this crate only) and a test proves both tables
//! agree. Codes that only the ABI can produce start at 1000, so the engine's
//! table can grow without meeting them.

use std::cell::RefCell;
use std::ffi::{c_char, CString};

use nodelay_core::Error;
use nodelay_front::ErrorCode;

/// The result of every fallible call: `NODELAY_OK` (0) or the kind of
/// failure. `nodelay_last_error()` gives the message.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum nodelay_code {
    NODELAY_OK = 0,
    NODELAY_E_INVALID_URL = 1,
    NODELAY_E_UNSUPPORTED_PROTOCOL = 2,
    NODELAY_E_LOCAL_PROTOCOL = 3,
    NODELAY_E_CONNECT_TIMEOUT = 4,
    NODELAY_E_READ_TIMEOUT = 5,
    NODELAY_E_WRITE_TIMEOUT = 6,
    NODELAY_E_POOL_TIMEOUT = 7,
    NODELAY_E_CONNECT = 8,
    NODELAY_E_TLS = 9,
    NODELAY_E_PROXY = 10,
    NODELAY_E_READ = 11,
    NODELAY_E_WRITE = 12,
    NODELAY_E_REMOTE_PROTOCOL = 13,
    NODELAY_E_HEADER_TOO_LARGE = 14,
    NODELAY_E_DECODING = 15,
    NODELAY_E_INTERRUPTED = 16,
    NODELAY_E_CLOSED = 17,
    NODELAY_E_BODY_SOURCE = 18,
    /// A null pointer, a string that is not UTF-8, an option out of range,
    /// or a call out of order (reading a body twice).
    NODELAY_E_INVALID_ARGUMENT = 1000,
    /// The cookie file could not be read or written.
    NODELAY_E_COOKIE_FILE = 1001,
    /// A bug in the library (a Rust panic, caught at the ABI boundary).
    NODELAY_E_INTERNAL = 1002,
    /// `nodelay_json_parse` leaves this document to the language's own JSON
    /// parser (not valid JSON, or outside what the fast path takes).
    NODELAY_E_JSON_UNSUPPORTED = 1003,
}

use nodelay_code::*;

impl nodelay_code {
    /// The ABI code of an engine error code (same number).
    pub(crate) fn of_front(code: ErrorCode) -> nodelay_code {
        match code {
            ErrorCode::Ok => NODELAY_OK,
            ErrorCode::InvalidUrl => NODELAY_E_INVALID_URL,
            ErrorCode::UnsupportedProtocol => NODELAY_E_UNSUPPORTED_PROTOCOL,
            ErrorCode::LocalProtocol => NODELAY_E_LOCAL_PROTOCOL,
            ErrorCode::ConnectTimeout => NODELAY_E_CONNECT_TIMEOUT,
            ErrorCode::ReadTimeout => NODELAY_E_READ_TIMEOUT,
            ErrorCode::WriteTimeout => NODELAY_E_WRITE_TIMEOUT,
            ErrorCode::PoolTimeout => NODELAY_E_POOL_TIMEOUT,
            ErrorCode::Connect => NODELAY_E_CONNECT,
            ErrorCode::Tls => NODELAY_E_TLS,
            ErrorCode::Proxy => NODELAY_E_PROXY,
            ErrorCode::Read => NODELAY_E_READ,
            ErrorCode::Write => NODELAY_E_WRITE,
            ErrorCode::RemoteProtocol => NODELAY_E_REMOTE_PROTOCOL,
            ErrorCode::HeaderTooLarge => NODELAY_E_HEADER_TOO_LARGE,
            ErrorCode::Decoding => NODELAY_E_DECODING,
            ErrorCode::Interrupted => NODELAY_E_INTERRUPTED,
            ErrorCode::Closed => NODELAY_E_CLOSED,
            ErrorCode::BodySource => NODELAY_E_BODY_SOURCE,
        }
    }

    /// A short stable name for the code (what `nodelay_code_name` returns).
    fn name(self) -> &'static std::ffi::CStr {
        match self {
            NODELAY_OK => c"ok",
            NODELAY_E_INVALID_URL => c"invalid URL",
            NODELAY_E_UNSUPPORTED_PROTOCOL => c"unsupported protocol",
            NODELAY_E_LOCAL_PROTOCOL => c"invalid request",
            NODELAY_E_CONNECT_TIMEOUT => c"connect timeout",
            NODELAY_E_READ_TIMEOUT => c"read timeout",
            NODELAY_E_WRITE_TIMEOUT => c"write timeout",
            NODELAY_E_POOL_TIMEOUT => c"pool timeout",
            NODELAY_E_CONNECT => c"connection failed",
            NODELAY_E_TLS => c"TLS error",
            NODELAY_E_PROXY => c"proxy error",
            NODELAY_E_READ => c"read error",
            NODELAY_E_WRITE => c"write error",
            NODELAY_E_REMOTE_PROTOCOL => c"server broke HTTP",
            NODELAY_E_HEADER_TOO_LARGE => c"response head too large",
            NODELAY_E_DECODING => c"body decoding failed",
            NODELAY_E_INTERRUPTED => c"interrupted",
            NODELAY_E_CLOSED => c"client closed",
            NODELAY_E_BODY_SOURCE => c"request body source failed",
            NODELAY_E_INVALID_ARGUMENT => c"invalid argument",
            NODELAY_E_COOKIE_FILE => c"cookie file error",
            NODELAY_E_INTERNAL => c"internal error",
            NODELAY_E_JSON_UNSUPPORTED => c"JSON left to the language's parser",
        }
    }
}

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error and returns `code`.
pub(crate) fn fail(code: nodelay_code, message: &str) -> nodelay_code {
    // A message with a NUL byte keeps its text up to the NUL.
    let text = message.split('\0').next().unwrap_or_default();
    let message = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
    code
}

/// A caller's argument broke its contract: `NODELAY_E_INVALID_ARGUMENT`
/// with `message` as the last error.
pub(crate) fn invalid(message: &str) -> nodelay_code {
    fail(nodelay_code::NODELAY_E_INVALID_ARGUMENT, message)
}

/// Records an engine error and returns its code.
pub(crate) fn fail_engine(error: &Error) -> nodelay_code {
    fail(
        nodelay_code::of_front(ErrorCode::of(error)),
        &error.to_string(),
    )
}

/// The message of the last call on this thread that did not return
/// `NODELAY_OK` (empty when none failed yet). Owned by the library: valid
/// until the next failing call on the same thread; never free it.
#[no_mangle]
pub extern "C" fn nodelay_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// A short, static, English name for a code (`"read timeout"`); unknown
/// numbers get `"unknown error"`. Never free it.
#[no_mangle]
pub extern "C" fn nodelay_code_name(code: u32) -> *const c_char {
    let all = [
        NODELAY_OK,
        NODELAY_E_INVALID_URL,
        NODELAY_E_UNSUPPORTED_PROTOCOL,
        NODELAY_E_LOCAL_PROTOCOL,
        NODELAY_E_CONNECT_TIMEOUT,
        NODELAY_E_READ_TIMEOUT,
        NODELAY_E_WRITE_TIMEOUT,
        NODELAY_E_POOL_TIMEOUT,
        NODELAY_E_CONNECT,
        NODELAY_E_TLS,
        NODELAY_E_PROXY,
        NODELAY_E_READ,
        NODELAY_E_WRITE,
        NODELAY_E_REMOTE_PROTOCOL,
        NODELAY_E_HEADER_TOO_LARGE,
        NODELAY_E_DECODING,
        NODELAY_E_INTERRUPTED,
        NODELAY_E_CLOSED,
        NODELAY_E_BODY_SOURCE,
        NODELAY_E_INVALID_ARGUMENT,
        NODELAY_E_COOKIE_FILE,
        NODELAY_E_INTERNAL,
        NODELAY_E_JSON_UNSUPPORTED,
    ];
    all.into_iter()
        .find(|c| *c as u32 == code)
        .map_or(c"unknown error", nodelay_code::name)
        .as_ptr()
}

/// Runs an entry point's body, turning a panic into `NODELAY_E_INTERNAL`
/// (a panic must never unwind into C).
pub(crate) fn guard(body: impl FnOnce() -> nodelay_code) -> nodelay_code {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        fail(NODELAY_E_INTERNAL, &format!("internal error: {what}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine code keeps its number in the ABI, and the ABI-only codes
    /// are frozen too: this table may only grow.
    #[test]
    fn codes_match_the_engine_and_are_frozen() {
        for n in 0..=18u32 {
            let abi = nodelay_code::of_front(front_code(n));
            assert_eq!(abi as u32, n);
            assert_eq!(front_code(n).as_u32(), n);
        }
        assert_eq!(NODELAY_E_INVALID_ARGUMENT as u32, 1000);
        assert_eq!(NODELAY_E_COOKIE_FILE as u32, 1001);
        assert_eq!(NODELAY_E_INTERNAL as u32, 1002);
        assert_eq!(NODELAY_E_JSON_UNSUPPORTED as u32, 1003);
    }

    fn front_code(n: u32) -> ErrorCode {
        use ErrorCode::*;
        [
            Ok,
            InvalidUrl,
            UnsupportedProtocol,
            LocalProtocol,
            ConnectTimeout,
            ReadTimeout,
            WriteTimeout,
            PoolTimeout,
            Connect,
            Tls,
            Proxy,
            Read,
            Write,
            RemoteProtocol,
            HeaderTooLarge,
            Decoding,
            Interrupted,
            Closed,
            BodySource,
        ][n as usize]
    }

    #[test]
    fn names_and_messages() {
        let name = |c: u32| unsafe { std::ffi::CStr::from_ptr(nodelay_code_name(c)) };
        assert_eq!(name(5).to_str().unwrap(), "read timeout");
        assert_eq!(name(999).to_str().unwrap(), "unknown error");
        assert_eq!(fail(NODELAY_E_CONNECT, "refused\0tail"), NODELAY_E_CONNECT);
        let last = unsafe { std::ffi::CStr::from_ptr(nodelay_last_error()) };
        assert_eq!(last.to_str().unwrap(), "refused");
        let code = guard(|| panic!("boom"));
        assert_eq!(code, NODELAY_E_INTERNAL);
    }
}
