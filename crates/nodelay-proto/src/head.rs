//! The receive-head phase: finding the end of a response head in bytes that
//! arrive in any segmentation, skipping interim (1xx) responses, and knowing
//! whether anything of a response arrived at all.

use crate::error::{ProtoError, NOT_HTTP1};
use crate::limits::{MAX_HEAD_BYTES, MAX_INTERIM_RESPONSES};
use crate::response::{parse_response_head, ResponseHead};

/// Every HTTP/1.x status line starts with these bytes.
pub const STATUS_LINE_PREFIX: &[u8] = b"HTTP/1.";

/// What [`HeadReader::advance`] found in the buffered bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum HeadEvent {
    /// No complete head yet: read more (into a buffer of at most
    /// [`MAX_HEAD_BYTES`] bytes) and call `advance` again.
    NeedMore,
    /// An interim (1xx) response of this many bytes: consume them and call
    /// `advance` again (the final response follows).
    Interim(usize),
    /// The final response head; its `head_len` first bytes of the buffer are
    /// the head, the rest is the start of the body.
    Final(ResponseHead),
}

/// The receive-head phase of one exchange. The driver reads into its buffer
/// and calls [`HeadReader::advance`] with all unconsumed bytes after every
/// read (and once before the first, for bytes already buffered).
#[derive(Debug, Clone)]
pub struct HeadReader {
    request_was_head: bool,
    /// Where to resume looking for the blank line that ends the head, so a
    /// slowly dripped head costs linear, not quadratic, work.
    scanned: usize,
    interim: usize,
    received_any: bool,
    /// The request's body was not sent whole (the server answered early):
    /// the connection is out of step with the framing it announced.
    request_cut_short: bool,
    /// The request carried `Connection: close`: its sender closes the
    /// connection after the response (RFC 9112 §9.6).
    request_closes: bool,
}

impl HeadReader {
    /// The head phase for a request; `request_was_head`: it was a `HEAD`
    /// request (its response has no body whatever its headers say).
    pub fn new(request_was_head: bool) -> Self {
        HeadReader {
            request_was_head,
            scanned: 0,
            interim: 0,
            received_any: false,
            request_cut_short: false,
            request_closes: false,
        }
    }

    /// The head phase for a request whose own fields asked to close the
    /// connection (`Connection: close`, see [`crate::request_closes`]): the
    /// final head never allows reuse, even when the server offers it.
    pub fn after_closing_request(request_was_head: bool) -> Self {
        HeadReader {
            request_closes: true,
            ..HeadReader::new(request_was_head)
        }
    }

    /// The head phase for an answer that arrived before the request's body
    /// was sent whole (a 413, a 401 to an upload): the final head it gives
    /// never allows reuse of the connection.
    pub fn after_cut_request(request_was_head: bool) -> Self {
        HeadReader {
            request_cut_short: true,
            ..HeadReader::new(request_was_head)
        }
    }

    /// True while no byte of a response has arrived: a failure now (a reset,
    /// an EOF) happened before the server answered, the mark the retry rule
    /// ([`crate::retry_on_fresh_connection`]) asks for.
    pub fn nothing_received(&self) -> bool {
        !self.received_any
    }

    /// Looks at the unconsumed bytes `buffered` (all of them, from the
    /// start of the response).
    pub fn advance(&mut self, buffered: &[u8]) -> Result<HeadEvent, ProtoError> {
        if buffered.is_empty() {
            // The call before the first read of an exchange (nothing
            // buffered yet): no parse attempt to pay for.
            return Ok(HeadEvent::NeedMore);
        }
        self.received_any = true;
        // A response that is not HTTP/1.x (HTTP/0.9, garbage, a leading empty
        // line) is refused as soon as its first bytes show it, however they
        // were segmented, instead of waiting for a blank line.
        let prefix = buffered.len().min(STATUS_LINE_PREFIX.len());
        if buffered[..prefix] != STATUS_LINE_PREFIX[..prefix] {
            return Err(ProtoError::InvalidHead(NOT_HTTP1));
        }
        // A head that arrived whole (the usual case) is parsed at once:
        // httparse finds its end while parsing, so the byte-by-byte search
        // for the blank line is only paid by heads that arrive in pieces.
        let whole = if self.scanned == 0 {
            parse_response_head(buffered, self.request_was_head)
                .ok()
                .flatten()
        } else {
            None
        };
        let head = match whole {
            Some(head) => Some(head),
            None => match find_head_end(buffered, self.scanned) {
                Some(end) => Some(
                    parse_response_head(&buffered[..end], self.request_was_head)?
                        .ok_or(ProtoError::InvalidHead("incomplete head"))?,
                ),
                None => None,
            },
        };
        match head {
            Some(head) if head.is_interim() => {
                self.interim += 1;
                if self.interim > MAX_INTERIM_RESPONSES {
                    return Err(ProtoError::TooManyInterimResponses);
                }
                self.scanned = 0;
                Ok(HeadEvent::Interim(head.head_len))
            }
            Some(mut head) => {
                if self.request_cut_short || self.request_closes {
                    head.keep_alive = false;
                }
                Ok(HeadEvent::Final(head))
            }
            None if buffered.len() >= MAX_HEAD_BYTES => Err(ProtoError::HeadTooLarge),
            None => {
                // The blank line may straddle this read and the next.
                self.scanned = buffered.len().saturating_sub(3);
                Ok(HeadEvent::NeedMore)
            }
        }
    }

    /// The error for an end of input (the server closed) before the final
    /// head was complete.
    pub fn end_of_input(&self) -> ProtoError {
        if self.received_any {
            ProtoError::HeadCut
        } else {
            ProtoError::NoResponse
        }
    }
}

/// End of the head (index just past the blank line), searching from `from`.
/// Bare-LF line ends are accepted here as httparse does; it validates the rest.
pub fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        let nl = i + buf[i..].iter().position(|&b| b == b'\n')?;
        if buf.get(nl + 1) == Some(&b'\n') {
            return Some(nl + 2);
        }
        if buf.get(nl + 1) == Some(&b'\r') && buf.get(nl + 2) == Some(&b'\n') {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
}
