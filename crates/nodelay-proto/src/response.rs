//! Response head parsing with httparse, into offsets over the caller's buffer so
//! headers stay raw (and cheap) until someone asks for them.

use crate::error::{
    ProtoError, INVALID_STATUS, INVALID_VERSION, MISSING_STATUS, STATUS_OUT_OF_RANGE,
    UNSUPPORTED_VERSION,
};
use crate::framing::{BodyFraming, FramingHeaders, Version};
use crate::limits::{MAX_HEADERS, MAX_HEADER_LINE_BYTES, MAX_HEAD_BYTES};

/// Byte range `start..end` of a header name and value inside the head buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderSpan {
    /// The field name's range.
    pub name: (u32, u32),
    /// The field value's range (without surrounding whitespace).
    pub value: (u32, u32),
}

/// A parsed response head. Offsets refer to the buffer given to
/// [`parse_response_head`]; `head_len` bytes of it belong to this head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// The response's HTTP version.
    pub version: Version,
    /// The status code (100 to 999).
    pub status: u16,
    /// The reason phrase's range (empty when there is none).
    pub reason: (u32, u32),
    /// Every header field, in order, as ranges of the buffer.
    pub headers: Vec<HeaderSpan>,
    /// Bytes of the head, blank line included; the body starts after them.
    pub head_len: usize,
    /// How the body is delimited.
    pub framing: BodyFraming,
    /// Whether the connection may carry another request after this body.
    pub keep_alive: bool,
}

impl ResponseHead {
    /// 1xx responses other than 101 are skipped by the caller (RFC 9110 §15.2).
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}

/// Parses one response head from the start of `buf`.
///
/// Returns `Ok(None)` when more bytes are needed. The caller must stop feeding
/// once the buffer holds `MAX_HEAD_BYTES` without a complete head: this
/// function reports `HeadTooLarge` itself in that case.
pub fn parse_response_head(
    buf: &[u8],
    request_was_head: bool,
) -> Result<Option<ResponseHead>, ProtoError> {
    // httparse wants initialised slots: a first try with a few saves writing
    // MAX_HEADERS of them (4 KiB) for every ordinary response.
    let mut few = [httparse::EMPTY_HEADER; FIRST_TRY_HEADERS];
    match parse_with_slots(buf, request_was_head, &mut few) {
        Err(ProtoError::TooManyHeaders) => {
            let mut all = [httparse::EMPTY_HEADER; MAX_HEADERS];
            parse_with_slots(buf, request_was_head, &mut all)
        }
        other => other,
    }
}

/// Header slots of the first parse attempt; a head with more fields is
/// parsed again with `MAX_HEADERS` slots (the limit stays `MAX_HEADERS`).
const FIRST_TRY_HEADERS: usize = 24;

fn parse_with_slots<'b>(
    buf: &'b [u8],
    request_was_head: bool,
    fields: &mut [httparse::Header<'b>],
) -> Result<Option<ResponseHead>, ProtoError> {
    let mut response = httparse::Response::new(fields);
    let head_len = match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            if buf.len() >= MAX_HEAD_BYTES {
                return Err(ProtoError::HeadTooLarge);
            }
            check_partial_line_length(buf)?;
            return Ok(None);
        }
        Err(e) => return Err(map_httparse_error(e)),
    };
    if head_len > MAX_HEAD_BYTES {
        return Err(ProtoError::HeadTooLarge);
    }
    check_line_lengths(&buf[..head_len])?;
    let version = match response.version {
        Some(0) => Version::Http10,
        Some(1) => Version::Http11,
        _ => return Err(ProtoError::InvalidHead(UNSUPPORTED_VERSION)),
    };
    let status = response
        .code
        .ok_or(ProtoError::InvalidHead(MISSING_STATUS))?;
    if !(100..=999).contains(&status) {
        return Err(ProtoError::InvalidHead(STATUS_OUT_OF_RANGE));
    }
    let base = buf.as_ptr() as usize;
    let span = |s: &[u8]| {
        let start = (s.as_ptr() as usize).saturating_sub(base) as u32;
        (start, start + s.len() as u32)
    };
    // httparse hands back a `""` that is not part of `buf` when the reason is
    // missing or holds obs-text; a span computed from that pointer could lie
    // outside the head, so an empty reason is located in the status line itself.
    let reason = match response.reason {
        Some(r) if !r.is_empty() => span(r.as_bytes()),
        _ => raw_reason_span(&buf[..head_len]),
    };

    let mut framing = FramingHeaders::default();
    let mut headers = Vec::with_capacity(response.headers.len());
    for field in response.headers.iter() {
        let name = field.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            framing.add_content_length(field.value)?;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            framing.add_transfer_encoding(field.value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            framing.add_connection(field.value);
        }
        headers.push(HeaderSpan {
            name: span(name),
            value: span(field.value),
        });
    }
    if status == 101 {
        return Err(ProtoError::UnexpectedUpgrade);
    }
    let (body, keep_alive) = framing.decide(version, status, request_was_head)?;
    Ok(Some(ResponseHead {
        version,
        status,
        reason,
        headers,
        head_len,
        framing: body,
        keep_alive,
    }))
}

/// Length of a line without its line end (`\n` already split off; a `\r`
/// before it is not part of the line either).
fn line_len(line: &[u8]) -> usize {
    line.len() - usize::from(line.last() == Some(&b'\r'))
}

/// httparse only sees a line as too long once the head completes; refuse a
/// single unterminated line beyond `MAX_HEADER_LINE_BYTES` as soon as we see it.
fn check_partial_line_length(buf: &[u8]) -> Result<(), ProtoError> {
    let last_line_start = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if line_len(&buf[last_line_start..]) > MAX_HEADER_LINE_BYTES {
        return Err(ProtoError::HeadTooLarge);
    }
    Ok(())
}

/// Every line of a complete head (status line and fields, whitespace around
/// values included) must fit `MAX_HEADER_LINE_BYTES`, the same rule the
/// partial check applies. A head shorter than the limit cannot break it, so
/// ordinary heads skip the scan.
fn check_line_lengths(head: &[u8]) -> Result<(), ProtoError> {
    if head.len() <= MAX_HEADER_LINE_BYTES {
        return Ok(());
    }
    if head
        .split(|&b| b == b'\n')
        .any(|line| line_len(line) > MAX_HEADER_LINE_BYTES)
    {
        return Err(ProtoError::HeadTooLarge);
    }
    Ok(())
}

/// The reason phrase as raw bytes of the status line, for the cases where
/// httparse returns no slice of the buffer (missing reason, obs-text). The
/// head was validated: optional empty lines, then `HTTP/1.x NNN`, then either
/// the line end or a space and the reason.
fn raw_reason_span(head: &[u8]) -> (u32, u32) {
    let start = head
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(0);
    let line = &head[start..];
    let end =
        start + line_len(&line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())]);
    let code_end = start + "HTTP/1.1 200".len();
    let reason_start = (code_end + 1).min(end);
    (reason_start as u32, end as u32)
}

fn map_httparse_error(e: httparse::Error) -> ProtoError {
    use httparse::Error as E;
    match e {
        E::TooManyHeaders => ProtoError::TooManyHeaders,
        E::Version => ProtoError::InvalidHead(INVALID_VERSION),
        E::Status => ProtoError::InvalidHead(INVALID_STATUS),
        E::HeaderName => ProtoError::InvalidHead("invalid header name"),
        E::HeaderValue => ProtoError::InvalidHead("invalid header value"),
        E::NewLine => ProtoError::InvalidHead("invalid line ending"),
        E::Token => ProtoError::InvalidHead("invalid token"),
    }
}
