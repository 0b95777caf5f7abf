//! Incremental, strict decoder for `Transfer-Encoding: chunked` (RFC 9112 §7.1).
//!
//! It accepts input in slices of any size, hands body data to a sink without
//! copying, and bounds everything a server could inflate: size digits,
//! extensions and trailers. Line ends must be CRLF; bare LF is refused because
//! lenient parsers disagreeing on it is how request smuggling starts.

use crate::error::ProtoError;
use crate::limits::{MAX_CHUNK_EXTENSION_BYTES, MAX_CHUNK_SIZE_DIGITS, MAX_TRAILER_BYTES};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the hex size; `digits` read so far.
    Size {
        digits: usize,
    },
    /// Whitespace after the size: only `;` may follow (BWS before an extension).
    SizeWhitespace,
    /// Inside a chunk extension, up to CR.
    Extension,
    /// Expecting LF after the size line's CR.
    SizeLf,
    /// Reading chunk data; bytes still to come.
    Data {
        remaining: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    /// Inside a non-empty trailer line.
    TrailerLine,
    TrailerLineLf,
    FinalLf,
    Done,
}

/// Decoder state for one chunked message.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    size: u64,
    extension_bytes: usize,
    trailer_bytes: usize,
    /// The trailer section's lines as received, each ended by CRLF (see
    /// [`trailer_fields`]); empty, and never allocated, for a body without
    /// trailers. Bounded by `MAX_TRAILER_BYTES` plus the line ends.
    trailers: Vec<u8>,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedDecoder {
    /// A decoder at the start of a chunked body.
    pub fn new() -> Self {
        Self {
            state: State::Size { digits: 0 },
            size: 0,
            extension_bytes: 0,
            trailer_bytes: 0,
            trailers: Vec::new(),
        }
    }

    /// Takes the trailer section's lines (see [`trailer_fields`]), once the
    /// message is done; empty when it had none.
    pub fn take_trailers(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.trailers)
    }

    /// True once the last chunk and the trailer section were read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes bytes from `input`, passing body data to `sink`. Returns how many
    /// bytes were consumed: all of `input`, or fewer once the message is done
    /// (the rest belongs to the next response).
    pub fn decode(
        &mut self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, ProtoError> {
        let mut i = 0;
        while i < input.len() {
            if let State::Data { remaining } = self.state {
                let take = remaining.min((input.len() - i) as u64) as usize;
                sink(&input[i..i + take]);
                i += take;
                let remaining = remaining - take as u64;
                self.state = if remaining == 0 {
                    State::DataCr
                } else {
                    State::Data { remaining }
                };
                continue;
            }
            if self.state == State::Done {
                return Ok(i);
            }
            self.step(input[i])?;
            i += 1;
        }
        Ok(i)
    }

    /// Advances the state machine over one framing byte (anything but data).
    fn step(&mut self, b: u8) -> Result<(), ProtoError> {
        self.state = match self.state {
            State::Size { digits } => match b {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if digits == MAX_CHUNK_SIZE_DIGITS {
                        return Err(ProtoError::InvalidChunk("chunk size overflows"));
                    }
                    let v = (b as char).to_digit(16).unwrap_or(0) as u64;
                    self.size = (self.size << 4) | v;
                    State::Size { digits: digits + 1 }
                }
                _ if digits == 0 => return Err(ProtoError::InvalidChunk("missing chunk size")),
                b'\r' => State::SizeLf,
                b';' => State::Extension,
                b' ' | b'\t' => State::SizeWhitespace,
                b'\n' => return Err(ProtoError::InvalidChunk("bare LF after chunk size")),
                _ => return Err(ProtoError::InvalidChunk("invalid chunk size")),
            },
            State::SizeWhitespace => match b {
                b' ' | b'\t' => State::SizeWhitespace,
                b';' => State::Extension,
                _ => return Err(ProtoError::InvalidChunk("invalid chunk size")),
            },
            State::Extension => match b {
                b'\r' => State::SizeLf,
                b'\n' | 0 => return Err(ProtoError::InvalidChunk("invalid chunk extension")),
                _ => {
                    self.extension_bytes += 1;
                    if self.extension_bytes > MAX_CHUNK_EXTENSION_BYTES {
                        return Err(ProtoError::ChunkExtensionsTooLarge);
                    }
                    State::Extension
                }
            },
            State::SizeLf => {
                if b != b'\n' {
                    return Err(ProtoError::InvalidChunk("expected LF after chunk size"));
                }
                let size = std::mem::take(&mut self.size);
                if size == 0 {
                    State::TrailerStart
                } else {
                    State::Data { remaining: size }
                }
            }
            State::DataCr => match b {
                b'\r' => State::DataLf,
                _ => return Err(ProtoError::InvalidChunk("chunk data longer than its size")),
            },
            State::DataLf => match b {
                b'\n' => State::Size { digits: 0 },
                _ => return Err(ProtoError::InvalidChunk("expected LF after chunk data")),
            },
            State::TrailerStart => match b {
                b'\r' => State::FinalLf,
                b'\n' => return Err(ProtoError::InvalidChunk("bare LF in trailers")),
                _ => {
                    self.count_trailer_byte()?;
                    self.trailers.push(b);
                    State::TrailerLine
                }
            },
            State::TrailerLine => match b {
                b'\r' => State::TrailerLineLf,
                b'\n' | 0 => return Err(ProtoError::InvalidChunk("invalid trailer line")),
                _ => {
                    self.count_trailer_byte()?;
                    self.trailers.push(b);
                    State::TrailerLine
                }
            },
            State::TrailerLineLf => match b {
                b'\n' => {
                    self.trailers.extend_from_slice(b"\r\n");
                    State::TrailerStart
                }
                _ => return Err(ProtoError::InvalidChunk("expected LF in trailers")),
            },
            State::FinalLf => match b {
                b'\n' => State::Done,
                _ => return Err(ProtoError::InvalidChunk("expected final LF")),
            },
            State::Data { .. } | State::Done => unreachable!("handled in decode"),
        };
        Ok(())
    }

    fn count_trailer_byte(&mut self) -> Result<(), ProtoError> {
        self.trailer_bytes += 1;
        if self.trailer_bytes > MAX_TRAILER_BYTES {
            return Err(ProtoError::TrailersTooLarge);
        }
        Ok(())
    }
}

/// The fields of a trailer section kept by [`ChunkedDecoder::take_trailers`]:
/// each line's name and value (optional whitespace around the value
/// removed), in received order. A line that is not a field (no colon, an
/// empty name, whitespace before the colon, a folded continuation) is left
/// out: trailers are information a recipient may drop (RFC 9110 §6.5.1),
/// and the body they follow is complete.
pub fn trailer_fields(trailers: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    trailers.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r")?;
        let colon = line.iter().position(|&b| b == b':')?;
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let is_name = !name.is_empty()
            && name
                .iter()
                .all(|&b| b.is_ascii_graphic() && !b"\"(),/:;<=>?@[\\]{}".contains(&b));
        is_name.then(|| (name, value.trim_ascii()))
    })
}
