use std::fmt;

/// What went wrong while encoding or parsing HTTP/1.1. Small and comparable so
/// tests can assert the exact failure; `nodelay-core` maps it to its own error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtoError {
    /// A request method that is not an RFC 9110 token.
    InvalidMethod,
    /// A request target with a control character or space.
    InvalidTarget,
    /// A header name that is not a token (request side).
    InvalidHeaderName(String),
    /// CR, LF or NUL in a request header value.
    InvalidHeaderValue(String),
    /// The status line or a header line could not be parsed.
    InvalidHead(&'static str),
    /// The header block grew beyond `limits::MAX_HEAD_BYTES`.
    HeadTooLarge,
    /// More than `limits::MAX_HEADERS` header fields.
    TooManyHeaders,
    /// A Content-Length that is malformed or conflicts with another.
    InvalidContentLength,
    /// A Transfer-Encoding we must not guess at.
    InvalidTransferEncoding,
    /// More than `limits::MAX_INTERIM_RESPONSES` 1xx responses.
    TooManyInterimResponses,
    /// A 101 response to a request that asked for no upgrade.
    UnexpectedUpgrade,
    /// A malformed chunk size line or chunk delimiter.
    InvalidChunk(&'static str),
    /// Chunk extensions beyond `limits::MAX_CHUNK_EXTENSION_BYTES`.
    ChunkExtensionsTooLarge,
    /// Trailers beyond `limits::MAX_TRAILER_BYTES`.
    TrailersTooLarge,
    /// The server closed the connection before any byte of a response.
    NoResponse,
    /// The server closed the connection in the middle of a response head.
    HeadCut,
    /// The server closed the connection before the end of a body of
    /// announced length.
    IncompleteBody {
        /// Body bytes received.
        received: u64,
        /// Body bytes announced.
        expected: u64,
    },
    /// The server closed the connection before the last chunk of a chunked body.
    ChunkedBodyCut {
        /// Body bytes received.
        received: u64,
    },
    /// A streamed request body gave more or fewer bytes than the
    /// `Content-Length` announced for it.
    BodyLengthMismatch {
        /// Bytes announced.
        announced: u64,
        /// Bytes the body gave; `None`: more than announced.
        given: Option<u64>,
    },
    /// Trailer fields for a request body framed by `Content-Length`: only a
    /// chunked body can carry them.
    TrailersNeedChunked,
}

/// `InvalidHead` reasons that are about the status line itself (its version
/// or its status code), which [`ProtoError::is_status_line`] recognises.
pub(crate) const NOT_HTTP1: &str = "not an HTTP/1.x status line";
pub(crate) const INVALID_VERSION: &str = "invalid HTTP version";
pub(crate) const UNSUPPORTED_VERSION: &str = "unsupported HTTP version";
pub(crate) const INVALID_STATUS: &str = "invalid status code";
pub(crate) const MISSING_STATUS: &str = "missing status code";
pub(crate) const STATUS_OUT_OF_RANGE: &str = "status code out of range";
const STATUS_LINE_FAULTS: [&str; 6] = [
    NOT_HTTP1,
    INVALID_VERSION,
    UNSUPPORTED_VERSION,
    INVALID_STATUS,
    MISSING_STATUS,
    STATUS_OUT_OF_RANGE,
];

impl ProtoError {
    /// Whether the response's status line was refused (not HTTP/1.x, its
    /// version, its status code: docs/hostile.md A7), so a driver's error
    /// may show the line received.
    pub fn is_status_line(&self) -> bool {
        matches!(self, Self::InvalidHead(what) if STATUS_LINE_FAULTS.contains(what))
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::limits::*;
        match self {
            Self::InvalidMethod => f.write_str("invalid request method"),
            Self::InvalidTarget => f.write_str("invalid character in request URL"),
            Self::InvalidHeaderName(n) => write!(f, "invalid header name {n:?}"),
            Self::InvalidHeaderValue(n) => {
                write!(f, "invalid header value for {n:?} (CR, LF or NUL)")
            }
            Self::InvalidHead(what) => write!(f, "malformed response head: {what}"),
            Self::HeadTooLarge => write!(f, "response head exceeds {MAX_HEAD_BYTES} bytes"),
            Self::TooManyHeaders => write!(f, "response has more than {MAX_HEADERS} header fields"),
            Self::InvalidContentLength => f.write_str("invalid or conflicting Content-Length"),
            Self::InvalidTransferEncoding => {
                f.write_str("unsupported or malformed Transfer-Encoding")
            }
            Self::TooManyInterimResponses => {
                write!(
                    f,
                    "more than {MAX_INTERIM_RESPONSES} interim (1xx) responses"
                )
            }
            Self::UnexpectedUpgrade => f.write_str("unexpected 101 Switching Protocols"),
            Self::InvalidChunk(what) => write!(f, "malformed chunked body: {what}"),
            Self::ChunkExtensionsTooLarge => {
                write!(
                    f,
                    "chunk extensions exceed {MAX_CHUNK_EXTENSION_BYTES} bytes"
                )
            }
            Self::TrailersTooLarge => write!(f, "trailers exceed {MAX_TRAILER_BYTES} bytes"),
            Self::NoResponse => f.write_str("server disconnected without sending a response"),
            Self::HeadCut => {
                f.write_str("server closed the connection in the middle of the response head")
            }
            Self::IncompleteBody { received, expected } => write!(
                f,
                "peer closed connection without sending complete message body: received {received} of {expected} bytes"
            ),
            Self::ChunkedBodyCut { received } => write!(
                f,
                "peer closed connection without sending complete message body: chunked body cut after {received} bytes"
            ),
            Self::BodyLengthMismatch { announced, given } => {
                write!(
                    f,
                    "the request body did not match its Content-Length: {announced} bytes announced, "
                )?;
                match given {
                    Some(n) => write!(f, "{n} given")?,
                    None => f.write_str("more given")?,
                }
                f.write_str(" (a file changed size during the upload?)")
            }
            Self::TrailersNeedChunked => f.write_str(
                "trailer fields need a chunked request body (this one has a Content-Length)",
            ),
        }
    }
}

impl std::error::Error for ProtoError {}
