//! The receive-body phase: de-framing a response body (exact length,
//! chunked, or until the server closes) from bytes the driver read, and the
//! verdict on the connection once the exchange is done.

use crate::chunked::ChunkedDecoder;
use crate::error::ProtoError;
use crate::framing::BodyFraming;
use crate::response::ResponseHead;

#[derive(Debug, Clone)]
enum State {
    Length { remaining: u64 },
    Chunked(ChunkedDecoder),
    UntilClose,
    Done,
}

/// The receive-body phase of one exchange. The driver hands it the bytes it
/// buffered ([`BodyReader::read_buffered`], [`BodyReader::read_buffered_into`]),
/// or reads straight into the caller's memory when the framing allows it
/// ([`BodyReader::direct_read_len`], then [`BodyReader::direct_read`]), and
/// reports the server's close ([`BodyReader::end_of_input`]).
#[derive(Debug, Clone)]
pub struct BodyReader {
    state: State,
    /// Body bytes delivered so far (after de-framing).
    received: u64,
    /// A chunked body's trailer lines, once it is done (empty without).
    trailers: Vec<u8>,
}

impl BodyReader {
    /// The body phase for a response head's framing.
    pub fn new(framing: BodyFraming) -> Self {
        let state = match framing {
            BodyFraming::Empty | BodyFraming::Length(0) => State::Done,
            BodyFraming::Length(n) => State::Length { remaining: n },
            BodyFraming::Chunked => State::Chunked(ChunkedDecoder::new()),
            BodyFraming::CloseDelimited => State::UntilClose,
        };
        BodyReader {
            state,
            received: 0,
            trailers: Vec::new(),
        }
    }

    /// Takes the trailer section of a chunked body read to its end: its
    /// lines, each ended by CRLF (`chunked::trailer_fields` gives the
    /// fields); empty for a body without trailers, and before the end.
    pub fn take_trailers(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.trailers)
    }

    /// The body bytes still to come when the server announced them (0 once
    /// the body is complete); `None` for chunked and close-delimited bodies.
    pub fn content_length(&self) -> Option<u64> {
        match self.state {
            State::Length { remaining } => Some(remaining),
            State::Done => Some(0),
            _ => None,
        }
    }

    /// True once the whole body was delivered.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Body bytes delivered so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Whether `buffered` bytes hold the whole rest of the body (so reading
    /// it needs no wait). Only an announced length can tell.
    pub fn is_within(&self, buffered: usize) -> bool {
        match self.state {
            State::Done => true,
            State::Length { remaining } => buffered as u64 >= remaining,
            _ => false,
        }
    }

    /// De-frames body bytes from `input` (the driver's buffered bytes) into
    /// `sink`; returns how many bytes of `input` were used (the driver
    /// consumes them). Fewer than all only once the body is complete: the
    /// rest is not part of this response.
    pub fn read_buffered(
        &mut self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, ProtoError> {
        let used = match &mut self.state {
            State::Done => return Ok(0),
            State::Length { remaining } => {
                let take = (*remaining).min(input.len() as u64) as usize;
                sink(&input[..take]);
                *remaining -= take as u64;
                self.received += take as u64;
                if *remaining == 0 {
                    self.state = State::Done;
                }
                take
            }
            State::Chunked(decoder) => {
                let mut delivered = 0u64;
                let used = decoder.decode(input, &mut |data| {
                    delivered += data.len() as u64;
                    sink(data);
                })?;
                self.received += delivered;
                if decoder.is_done() {
                    self.trailers = decoder.take_trailers();
                    self.state = State::Done;
                }
                used
            }
            State::UntilClose => {
                sink(input);
                self.received += input.len() as u64;
                input.len()
            }
        };
        Ok(used)
    }

    /// [`BodyReader::read_buffered`] into `dst`, delivering at most
    /// `dst.len()` body bytes. Returns `(used, written)`: bytes of `input`
    /// used and body bytes written to `dst`.
    pub fn read_buffered_into(
        &mut self,
        input: &[u8],
        dst: &mut [u8],
    ) -> Result<(usize, usize), ProtoError> {
        // Body data is never longer than the input that carries it, so
        // feeding at most dst.len() bytes bounds the output.
        let input = &input[..input.len().min(dst.len())];
        let mut written = 0;
        let used = self.read_buffered(input, &mut |data| {
            dst[written..written + data.len()].copy_from_slice(data);
            written += data.len();
        })?;
        Ok((used, written))
    }

    /// How many bytes a read may put straight into the caller's `dst_len`
    /// bytes, bypassing the buffer, once nothing is buffered: bodies whose
    /// bytes are all data (announced length, close-delimited). `None`:
    /// chunked, the driver fills its buffer and calls `read_buffered`; also
    /// `None` once the body is done.
    pub fn direct_read_len(&self, dst_len: usize) -> Option<usize> {
        match self.state {
            State::Length { remaining } => Some(remaining.min(dst_len as u64) as usize),
            State::UntilClose => Some(dst_len),
            State::Chunked(_) | State::Done => None,
        }
    }

    /// Records a read of `n` bytes straight into the caller's memory (see
    /// [`BodyReader::direct_read_len`]); `n == 0` is the server's close.
    pub fn direct_read(&mut self, n: usize) -> Result<(), ProtoError> {
        if n == 0 {
            return self.end_of_input();
        }
        self.received += n as u64;
        if let State::Length { remaining } = &mut self.state {
            *remaining -= n as u64;
            if *remaining == 0 {
                self.state = State::Done;
            }
        }
        Ok(())
    }

    /// The server closed the connection (a read returned 0) with no body
    /// bytes left unread: the end of a close-delimited body, for any other
    /// framing a body cut short.
    pub fn end_of_input(&mut self) -> Result<(), ProtoError> {
        match self.state {
            State::Done => Ok(()),
            State::UntilClose => {
                self.state = State::Done;
                Ok(())
            }
            State::Length { remaining } => Err(ProtoError::IncompleteBody {
                received: self.received,
                expected: self.received + remaining,
            }),
            State::Chunked(_) => Err(ProtoError::ChunkedBodyCut {
                received: self.received,
            }),
        }
    }

    /// The done phase: whether the connection may carry another request.
    /// `leftover` is how many bytes are buffered beyond this body.
    pub fn verdict(&self, head: &ResponseHead, leftover: usize) -> Reuse {
        if !self.is_done() {
            Reuse::Close(CloseReason::BodyNotRead)
        } else if head.framing == BodyFraming::CloseDelimited {
            Reuse::Close(CloseReason::CloseDelimited)
        } else if !head.keep_alive {
            Reuse::Close(CloseReason::NotKeepAlive)
        } else if leftover > 0 {
            // Bytes after a complete body are a second response nobody asked
            // for (docs/hostile.md A10): never read as the next response.
            Reuse::Close(CloseReason::UnrequestedBytes)
        } else {
            Reuse::Keep
        }
    }
}

/// The done phase's verdict on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// The connection may carry the next request (back to the pool).
    Keep,
    /// The connection must be closed.
    Close(CloseReason),
}

/// Why a connection cannot be reused after an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// The body was not read to its end (what is left would be read as the
    /// next response).
    BodyNotRead,
    /// The body ended with the connection.
    CloseDelimited,
    /// `Connection: close`, HTTP/1.0 without keep-alive, both framing
    /// headers, or an answer to a request whose body was cut short.
    NotKeepAlive,
    /// Bytes arrived after the body that no request asked for.
    UnrequestedBytes,
}
