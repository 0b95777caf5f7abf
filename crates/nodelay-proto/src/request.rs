//! Request head encoding: one buffer, header order kept, hostile bytes refused.

use crate::error::ProtoError;

/// Everything needed to encode a request head. Header names and values are
/// sent exactly as given, in order.
pub struct RequestHead<'a> {
    /// The method token (`GET`).
    pub method: &'a str,
    /// Origin-form target: path plus optional `?query`.
    pub target: &'a str,
    /// Value for the `Host` header when the caller did not give one.
    pub host: &'a str,
    /// Header fields, sent in this order.
    pub headers: &'a [(&'a str, &'a str)],
    /// Body length; `None` means no body at all.
    pub content_length: Option<u64>,
}

/// Methods whose semantics anticipate a body: they get `Content-Length: 0`
/// when sent without one, as curl and httpx do, so servers never wait for a body.
fn expects_body(method: &str) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH")
}

/// RFC 9110 §5.6.2 `tchar`.
const fn is_tchar(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'#'
            | b'$'
            | b'%'
            | b'&'
            | b'\''
            | b'*'
            | b'+'
            | b'-'
            | b'.'
            | b'^'
            | b'_'
            | b'`'
            | b'|'
            | b'~'
    ) || b.is_ascii_alphanumeric()
}

/// `is_tchar` for every byte value: one load per byte when validating names.
static TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_tchar(b as u8);
        b += 1;
    }
    table
};

/// Whether every byte is a `tchar`. Folds without an early exit: invalid
/// names are rare, and a branch-free loop is several times faster on the
/// short names every request carries.
fn all_tchar(s: &str) -> bool {
    s.bytes().fold(true, |ok, b| ok & TCHAR[usize::from(b)])
}

/// Whether any byte is CR, LF or NUL (branch-free, so the compiler vectorises it).
fn has_line_break_or_nul(s: &str) -> bool {
    s.bytes()
        .fold(false, |bad, b| bad | (b == b'\r') | (b == b'\n') | (b == 0))
}

/// A header name must be a non-empty token.
pub fn validate_header_name(name: &str) -> Result<(), ProtoError> {
    if name.is_empty() || !all_tchar(name) {
        return Err(ProtoError::InvalidHeaderName(name.to_owned()));
    }
    Ok(())
}

/// Whether a request's own fields ask to close the connection after its
/// response (`Connection: close`, RFC 9112 §9.6): the connection is then
/// not reused, whatever the response says (see [`crate::HeadReader::new`]).
/// Encoding a head finds the same in its one pass over the fields
/// ([`EncodedHead::closes`]).
pub fn request_closes(headers: &[(&str, &str)]) -> bool {
    headers
        .iter()
        .any(|(name, value)| asks_to_close(name, value))
}

/// Whether one field is a `Connection` field with the `close` option.
fn asks_to_close(name: &str, value: &str) -> bool {
    name.eq_ignore_ascii_case("connection")
        && crate::framing::connection_options(value.as_bytes())
            .any(|token| token.eq_ignore_ascii_case(b"close"))
}

/// CR, LF and NUL would let a value inject headers or requests (docs/hostile.md F25).
pub fn validate_header_value(name: &str, value: &str) -> Result<(), ProtoError> {
    if has_line_break_or_nul(value) {
        return Err(ProtoError::InvalidHeaderValue(name.to_owned()));
    }
    Ok(())
}

fn validate_target(target: &str) -> Result<(), ProtoError> {
    let bad = target
        .bytes()
        .fold(false, |bad, b| bad | (b <= b' ') | (b == 0x7f));
    if target.is_empty() || bad {
        return Err(ProtoError::InvalidTarget);
    }
    Ok(())
}

/// The header fields of a request, validated and encoded once
/// (`Name: value\r\n` lines), so a caller that sends the same list again and
/// again (a client's default headers) can reuse them with
/// [`encode_request_head_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedHeaders {
    lines: Vec<u8>,
    fields: Fields,
}

/// What a request head's encoding learnt of its header fields, in the same
/// pass that validated them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedHead {
    /// The fields ask to close the connection after the response
    /// (`Connection: close`, see [`request_closes`]).
    pub closes: bool,
}

/// What the one pass over the header fields finds besides their validity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Fields {
    /// The caller gave `Host`.
    has_host: bool,
    /// The caller gave `Content-Length` or `Transfer-Encoding`.
    has_framing: bool,
    /// A `Connection` field has the `close` option.
    closes: bool,
}

impl EncodedHeaders {
    /// Validates and encodes `headers` (names and values sent exactly as
    /// given, in order).
    pub fn new(headers: &[(&str, &str)]) -> Result<EncodedHeaders, ProtoError> {
        let fields = validate_headers(headers)?;
        let mut lines = Vec::with_capacity(lines_len(headers));
        write_lines(&mut lines, headers);
        Ok(EncodedHeaders { lines, fields })
    }
}

/// Validates every field, and finds the ones encoding and reuse depend on.
fn validate_headers(headers: &[(&str, &str)]) -> Result<Fields, ProtoError> {
    let mut fields = Fields::default();
    for (name, value) in headers {
        validate_header_name(name)?;
        validate_header_value(name, value)?;
        // Only names of these lengths can match: most names skip the compares.
        match name.len() {
            4 => fields.has_host |= name.eq_ignore_ascii_case("host"),
            10 => fields.closes |= asks_to_close(name, value),
            14 => fields.has_framing |= name.eq_ignore_ascii_case("content-length"),
            17 => fields.has_framing |= name.eq_ignore_ascii_case("transfer-encoding"),
            _ => {}
        }
    }
    Ok(fields)
}

fn lines_len(headers: &[(&str, &str)]) -> usize {
    headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum()
}

fn write_lines(out: &mut Vec<u8>, headers: &[(&str, &str)]) {
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// Appends the encoded head of `head` to `out` (callers pass a reused buffer and
/// may append a small body right after, so head and body leave in one write).
///
/// `Host` goes first unless the caller supplied one; `Content-Length` is added
/// when there is a body (or the method expects one) and the caller set neither
/// `Content-Length` nor `Transfer-Encoding`. Nothing is appended on error.
pub fn encode_request_head(
    out: &mut Vec<u8>,
    head: &RequestHead<'_>,
) -> Result<EncodedHead, ProtoError> {
    validate_start(head.method, head.target, head.host)?;
    let fields = validate_headers(head.headers)?;
    let lines = Lines {
        len: lines_len(head.headers),
        fields,
    };
    write_head(out, head, &lines, |out| write_lines(out, head.headers));
    Ok(EncodedHead {
        closes: fields.closes,
    })
}

/// [`encode_request_head`] with the header fields already encoded
/// (`head.headers` is ignored): the same bytes for the same fields.
pub fn encode_request_head_with(
    out: &mut Vec<u8>,
    head: &RequestHead<'_>,
    headers: &EncodedHeaders,
) -> Result<EncodedHead, ProtoError> {
    validate_start(head.method, head.target, head.host)?;
    let lines = Lines {
        len: headers.lines.len(),
        fields: headers.fields,
    };
    write_head(out, head, &lines, |out| {
        out.extend_from_slice(&headers.lines)
    });
    Ok(EncodedHead {
        closes: headers.fields.closes,
    })
}

fn validate_start(method: &str, target: &str, host: &str) -> Result<(), ProtoError> {
    if method.is_empty() || !all_tchar(method) {
        return Err(ProtoError::InvalidMethod);
    }
    validate_target(target)?;
    validate_header_value("Host", host)
}

/// What `write_head` needs to know about the (validated) header lines.
struct Lines {
    len: usize,
    fields: Fields,
}

fn write_head(
    out: &mut Vec<u8>,
    head: &RequestHead<'_>,
    lines: &Lines,
    write_lines: impl FnOnce(&mut Vec<u8>),
) {
    let estimate = head.method.len() + head.target.len() + head.host.len() + lines.len + 64;
    out.reserve(estimate);
    out.extend_from_slice(head.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(head.target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !lines.fields.has_host {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(head.host.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    write_lines(out);
    if !lines.fields.has_framing {
        let length = match head.content_length {
            Some(n) => Some(n),
            None if expects_body(head.method) => Some(0),
            None => None,
        };
        if let Some(n) = length {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(itoa_u64(n, &mut [0u8; 20]));
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// Formats `n` in decimal without allocating.
fn itoa_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}
