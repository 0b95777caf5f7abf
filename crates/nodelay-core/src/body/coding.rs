//! The content codings of a response (RFC 9110 §8.4): which ones we undo,
//! how `Content-Encoding` is read, and the layer cap (docs/hostile.md B15).

use crate::error::{Error, ErrorKind};

/// Most content codings applied to one response (docs/hostile.md B15).
pub const MAX_CONTENT_CODINGS: usize = 5;

/// What `Accept-Encoding` we send by default: everything we can decode.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";

/// A content coding we can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// RFC 9110 §8.4.1.3; `x-gzip` too. Every member of a multi-member stream.
    Gzip,
    /// RFC 9110 §8.4.1.2: zlib-wrapped (RFC 1950), or raw deflate (RFC 1951)
    /// as some servers send it.
    Deflate,
    /// RFC 7932.
    Brotli,
    /// RFC 8878.
    Zstd,
}

/// Parses the Content-Encoding values of a response, in the order they were
/// applied. `identity` is dropped; an unknown coding means we cannot decode,
/// and the body is handed over as received (like httpx and requests): `None`.
/// More than [`MAX_CONTENT_CODINGS`] layers is a `Decoding` error.
pub fn parse_codings<'a>(
    values: impl Iterator<Item = &'a [u8]>,
) -> Result<Option<Vec<Coding>>, Error> {
    let mut codings = Vec::new();
    for value in values {
        for token in value.split(|&b| b == b',') {
            let token = trim(token);
            let coding = if token.is_empty() || token.eq_ignore_ascii_case(b"identity") {
                continue;
            } else if token.eq_ignore_ascii_case(b"gzip") || token.eq_ignore_ascii_case(b"x-gzip") {
                Coding::Gzip
            } else if token.eq_ignore_ascii_case(b"deflate") {
                Coding::Deflate
            } else if token.eq_ignore_ascii_case(b"br") {
                Coding::Brotli
            } else if token.eq_ignore_ascii_case(b"zstd") {
                Coding::Zstd
            } else {
                return Ok(None);
            };
            codings.push(coding);
            if codings.len() > MAX_CONTENT_CODINGS {
                return Err(Error::new(
                    ErrorKind::Decoding,
                    format!("more than {MAX_CONTENT_CODINGS} content codings"),
                ));
            }
        }
    }
    Ok(Some(codings))
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// RFC 9110 "deflate" is zlib-wrapped; some servers send raw deflate. The
/// zlib header's check bits (RFC 1950 §2.2) tell them apart.
pub(crate) fn is_zlib_header(input: &[u8]) -> bool {
    matches!(input, [cmf, flg, ..] if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0)
}
