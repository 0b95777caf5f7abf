//! The send phases: how a streamed request body is framed behind its head
//! (exact `Content-Length`, or chunked coding when its size is unknown), and
//! which failed sends may still have an answer worth reading.

use crate::error::ProtoError;
use crate::request::{validate_header_name, validate_header_value};

/// How a streamed request body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFraming {
    /// Exactly this many bytes, announced with `Content-Length`.
    Length(u64),
    /// Unknown size: `Transfer-Encoding: chunked`, encoded by [`BodyWriter`].
    Chunked,
}

impl StreamFraming {
    /// The body's size, when known.
    pub fn length(self) -> Option<u64> {
        match self {
            StreamFraming::Length(n) => Some(n),
            StreamFraming::Chunked => None,
        }
    }
}

/// The chunked-coding terminator: the last (empty) chunk and no trailers.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// The line end after a chunk's data.
const CRLF: &[u8] = b"\r\n";

/// Bytes of the longest chunk-size line: 16 hex digits (a `u64`) and CRLF.
pub const CHUNK_SIZE_LINE_BYTES: usize = 18;

/// Scratch space for one chunk-size line, owned by the driver so a
/// [`Frame`] can borrow it without allocating.
pub type ChunkSizeLine = [u8; CHUNK_SIZE_LINE_BYTES];

/// One piece of a streamed body as it goes on the wire: `prefix`, `data`
/// and `suffix`, in order, in one vectored write (any of them may be empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Framing before the data (a chunk-size line).
    pub prefix: &'a [u8],
    /// The piece of the body.
    pub data: &'a [u8],
    /// Framing after the data (a chunk's CRLF, or the last chunk).
    pub suffix: &'a [u8],
    /// True for the body's end: nothing follows this frame.
    pub last: bool,
}

impl Frame<'_> {
    /// Total bytes of the frame.
    pub fn len(&self) -> usize {
        self.prefix.len() + self.data.len() + self.suffix.len()
    }

    /// True when the frame has no bytes to send.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The send-body phase of a streamed request: frames each piece the body's
/// source gives and checks an announced length is kept.
#[derive(Debug, Clone)]
pub struct BodyWriter {
    framing: StreamFraming,
    sent: u64,
}

impl BodyWriter {
    /// The send-body phase for a body framed as `framing`.
    pub fn new(framing: StreamFraming) -> Self {
        BodyWriter { framing, sent: 0 }
    }

    /// Body bytes framed so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Whether the request is complete once what was framed is written: a
    /// body of announced length with every byte framed (its end frames
    /// nothing more). An answer read after that is no early answer. A
    /// chunked body still owes its last chunk.
    pub fn is_complete(&self) -> bool {
        matches!(self.framing, StreamFraming::Length(n) if self.sent == n)
    }

    /// Frames the next piece of the body (`None`: the source ended).
    /// Empty pieces give empty frames. A source that gives more or fewer
    /// bytes than the length announced is refused before the frame is sent.
    pub fn frame<'a>(
        &mut self,
        piece: Option<&'a [u8]>,
        size_line: &'a mut ChunkSizeLine,
    ) -> Result<Frame<'a>, ProtoError> {
        let empty = Frame {
            prefix: &[],
            data: &[],
            suffix: &[],
            last: false,
        };
        match (self.framing, piece) {
            (StreamFraming::Length(announced), Some(data)) => {
                self.sent += data.len() as u64;
                if self.sent > announced {
                    return Err(ProtoError::BodyLengthMismatch {
                        announced,
                        given: None,
                    });
                }
                Ok(Frame { data, ..empty })
            }
            (StreamFraming::Length(announced), None) => {
                if self.sent != announced {
                    return Err(ProtoError::BodyLengthMismatch {
                        announced,
                        given: Some(self.sent),
                    });
                }
                Ok(Frame {
                    last: true,
                    ..empty
                })
            }
            (StreamFraming::Chunked, Some([])) => Ok(empty),
            (StreamFraming::Chunked, Some(data)) => {
                self.sent += data.len() as u64;
                Ok(Frame {
                    prefix: chunk_size_line(data.len(), size_line),
                    data,
                    suffix: CRLF,
                    last: false,
                })
            }
            (StreamFraming::Chunked, None) => Ok(Frame {
                suffix: LAST_CHUNK,
                last: true,
                ..empty
            }),
        }
    }
}

impl BodyWriter {
    /// The body's end with trailer fields (RFC 9112 §7.1.2): the last chunk,
    /// each field as `Name: value` CRLF in the order given, and the empty
    /// line, written into `out` and returned as the final frame. Without
    /// fields this is [`BodyWriter::frame`]'s end. Names and values are
    /// checked as request header fields are; a body of announced length has
    /// no place for trailers and refuses them.
    pub fn finish_with_trailers<'a>(
        &mut self,
        trailers: &[(&str, &str)],
        out: &'a mut Vec<u8>,
        size_line: &'a mut ChunkSizeLine,
    ) -> Result<Frame<'a>, ProtoError> {
        if trailers.is_empty() {
            return self.frame(None, size_line);
        }
        if self.framing != StreamFraming::Chunked {
            return Err(ProtoError::TrailersNeedChunked);
        }
        for (name, value) in trailers {
            validate_header_name(name)?;
            validate_header_value(name, value)?;
        }
        out.clear();
        out.extend_from_slice(LAST_CHUNK_LINE);
        for (name, value) in trailers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(CRLF);
        }
        out.extend_from_slice(CRLF);
        Ok(Frame {
            prefix: &[],
            data: &[],
            suffix: out,
            last: true,
        })
    }
}

/// The last chunk's size line, before the trailer section.
const LAST_CHUNK_LINE: &[u8] = b"0\r\n";

/// `{size in lowercase hex}\r\n` into `out`.
pub fn chunk_size_line(len: usize, out: &mut ChunkSizeLine) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits_end = CHUNK_SIZE_LINE_BYTES - CRLF.len();
    let mut i = digits_end;
    let mut n = len;
    loop {
        i -= 1;
        out[i] = HEX[n & 0xf];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out[digits_end..].copy_from_slice(CRLF);
    &out[i..]
}

/// How sending a request failed, as far as an early answer is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendFailure {
    /// The write failed: the server closed or reset the connection (its
    /// answer may be queued before the reset).
    Broken,
    /// The write waited past its deadline: the server stopped reading.
    TimedOut,
    /// Anything else (the body's source failed, a signal): not the server.
    Other,
}

/// Whether a request whose send failed should still read the server's
/// answer (a 413 sent while the body was going out is the response, not the
/// write error). `answer_waiting` is asked only for a timed-out write (it
/// may cost a syscall): a server that stopped reading and said nothing is a
/// timeout, one that answered is that answer.
pub fn answer_may_follow(failure: SendFailure, answer_waiting: impl FnOnce() -> bool) -> bool {
    match failure {
        SendFailure::Broken => true,
        SendFailure::TimedOut => answer_waiting(),
        SendFailure::Other => false,
    }
}
