//! Stable error codes: one per kind of failure, numbered once and never
//! renumbered, like libcurl's `CURLcode`. A C ABI returns them as they are;
//! the Python front maps each to its exception class.

use nodelay_core::{Error, ErrorKind};

/// The kind of a failed request, as a stable number. Codes are never
/// reused or renumbered; new kinds get new numbers at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorCode {
    /// No error.
    Ok = 0,
    /// The URL cannot be parsed or has no host.
    InvalidUrl = 1,
    /// The URL's scheme is not `http` or `https`.
    UnsupportedProtocol = 2,
    /// The request itself is invalid (a header name or value, a method).
    LocalProtocol = 3,
    /// Connecting (TCP, TLS, proxy CONNECT) took longer than allowed.
    ConnectTimeout = 4,
    /// Waiting for response bytes took longer than allowed.
    ReadTimeout = 5,
    /// Sending the request took longer than allowed.
    WriteTimeout = 6,
    /// No connection of the pool became free in time.
    PoolTimeout = 7,
    /// The connection could not be made (refused, unreachable, DNS).
    Connect = 8,
    /// The TLS handshake or the certificate check failed.
    Tls = 9,
    /// The proxy refused or broke the CONNECT exchange.
    Proxy = 10,
    /// Reading from the connection failed.
    Read = 11,
    /// Writing to the connection failed.
    Write = 12,
    /// The server broke HTTP (bad framing, truncated body).
    RemoteProtocol = 13,
    /// The response head is beyond the header limits.
    HeaderTooLarge = 14,
    /// The body cannot be decoded, or decodes beyond its size cap.
    Decoding = 15,
    /// The front's abort check asked to stop (a signal such as Ctrl-C).
    Interrupted = 16,
    /// The client was closed.
    Closed = 17,
    /// A streamed request body's source failed.
    BodySource = 18,
}

impl ErrorCode {
    /// The code of an engine error.
    pub fn of(error: &Error) -> ErrorCode {
        ErrorCode::from_kind(error.kind())
    }

    /// The code of an engine error kind.
    pub fn from_kind(kind: ErrorKind) -> ErrorCode {
        match kind {
            ErrorKind::InvalidUrl => ErrorCode::InvalidUrl,
            ErrorKind::UnsupportedProtocol => ErrorCode::UnsupportedProtocol,
            ErrorKind::LocalProtocol => ErrorCode::LocalProtocol,
            ErrorKind::ConnectTimeout => ErrorCode::ConnectTimeout,
            ErrorKind::ReadTimeout => ErrorCode::ReadTimeout,
            ErrorKind::WriteTimeout => ErrorCode::WriteTimeout,
            ErrorKind::PoolTimeout => ErrorCode::PoolTimeout,
            ErrorKind::Connect => ErrorCode::Connect,
            ErrorKind::Tls => ErrorCode::Tls,
            ErrorKind::Proxy => ErrorCode::Proxy,
            ErrorKind::Read => ErrorCode::Read,
            ErrorKind::Write => ErrorCode::Write,
            ErrorKind::RemoteProtocol => ErrorCode::RemoteProtocol,
            ErrorKind::HeaderTooLarge => ErrorCode::HeaderTooLarge,
            ErrorKind::Decoding => ErrorCode::Decoding,
            ErrorKind::Interrupted => ErrorCode::Interrupted,
            ErrorKind::Closed => ErrorCode::Closed,
            ErrorKind::BodySource => ErrorCode::BodySource,
        }
    }

    /// The number a C ABI returns.
    pub fn as_u32(self) -> u32 {
        self as u32
    }

    /// A timeout of any phase (connect, read, write, pool).
    pub fn is_timeout(self) -> bool {
        matches!(
            self,
            ErrorCode::ConnectTimeout
                | ErrorCode::ReadTimeout
                | ErrorCode::WriteTimeout
                | ErrorCode::PoolTimeout
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers are an ABI: this table may only grow.
    #[test]
    fn codes_are_frozen() {
        let frozen = [
            (ErrorCode::Ok, 0),
            (ErrorCode::InvalidUrl, 1),
            (ErrorCode::UnsupportedProtocol, 2),
            (ErrorCode::LocalProtocol, 3),
            (ErrorCode::ConnectTimeout, 4),
            (ErrorCode::ReadTimeout, 5),
            (ErrorCode::WriteTimeout, 6),
            (ErrorCode::PoolTimeout, 7),
            (ErrorCode::Connect, 8),
            (ErrorCode::Tls, 9),
            (ErrorCode::Proxy, 10),
            (ErrorCode::Read, 11),
            (ErrorCode::Write, 12),
            (ErrorCode::RemoteProtocol, 13),
            (ErrorCode::HeaderTooLarge, 14),
            (ErrorCode::Decoding, 15),
            (ErrorCode::Interrupted, 16),
            (ErrorCode::Closed, 17),
            (ErrorCode::BodySource, 18),
        ];
        for (code, number) in frozen {
            assert_eq!(code.as_u32(), number, "{code:?}");
        }
    }

    #[test]
    fn kinds_map_to_their_codes() {
        assert_eq!(
            ErrorCode::from_kind(ErrorKind::ReadTimeout),
            ErrorCode::ReadTimeout
        );
        assert!(ErrorCode::from_kind(ErrorKind::PoolTimeout).is_timeout());
        assert!(!ErrorCode::from_kind(ErrorKind::Connect).is_timeout());
    }
}
