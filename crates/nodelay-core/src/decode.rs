//! Content-Encoding decoding (RFC 9110 §8.4) with the bounds of HOSTILE.md B:
//! at most `MAX_CONTENT_CODINGS` layers, a cap on the decoded size and a
//! ratio guard, checked while decoding so a bomb never fills memory.

use std::io::{self, Read};

use crate::error::{Error, ErrorKind};

/// Most content codings applied to one response (HOSTILE.md B15).
pub const MAX_CONTENT_CODINGS: usize = 5;

/// Default cap on a decoded body (HOSTILE.md defaults: 1 GiB).
pub const DEFAULT_MAX_DECODED_BYTES: u64 = 1 << 30;

/// Decoded/encoded ratio beyond which a large body counts as a bomb. Real
/// text compresses 5–20×; a run of zeros 1000×; bombs reach 10⁶×.
pub const MAX_DECODE_RATIO: u64 = 1000;

/// The ratio guard only applies past this decoded size, so small, very
/// compressible bodies (a page of spaces) always decode.
pub const RATIO_GUARD_FLOOR_BYTES: u64 = 16 * 1024 * 1024;

/// Decoder read size: big reads, few calls.
const DECODE_CHUNK_BYTES: usize = 64 * 1024;

/// What `Accept-Encoding` we send by default: everything we can decode.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

/// Parses the Content-Encoding values of a response, in the order they were
/// applied. `identity` is dropped; an unknown coding means we cannot decode,
/// and the body is handed over as received (like httpx and requests).
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

/// Undoes `codings` (listed in the order applied) over `body`.
/// The ratio guard compares against the body as received, so nested layers
/// (gzip of gzip: each ~1000×, together 10⁶×) cannot hide a bomb.
pub fn decode(codings: &[Coding], body: Vec<u8>, max_bytes: u64) -> Result<Vec<u8>, Error> {
    let received = body.len() as u64;
    let mut data = body;
    for &coding in codings.iter().rev() {
        data = decode_one(coding, &data, received, max_bytes)?;
    }
    Ok(data)
}

fn decode_one(
    coding: Coding,
    input: &[u8],
    received: u64,
    max_bytes: u64,
) -> Result<Vec<u8>, Error> {
    let reader: Box<dyn Read + '_> = match coding {
        Coding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(input)),
        // RFC 9110 "deflate" is zlib-wrapped; some servers send raw deflate.
        // The zlib header's check bits tell them apart (RFC 1950 §2.2).
        Coding::Deflate if is_zlib_header(input) => Box::new(flate2::read::ZlibDecoder::new(input)),
        Coding::Deflate => Box::new(flate2::read::DeflateDecoder::new(input)),
        Coding::Brotli => Box::new(brotli_decompressor::Decompressor::new(
            input,
            DECODE_CHUNK_BYTES,
        )),
        Coding::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(input).map_err(|e| corrupt(coding, e))?,
        ),
    };
    read_bounded(coding, reader, received, max_bytes)
}

/// RFC 9110 "deflate" is zlib-wrapped; some servers send raw deflate. The
/// zlib header's check bits (RFC 1950 §2.2) tell them apart.
pub(crate) fn is_zlib_header(input: &[u8]) -> bool {
    matches!(input, [cmf, flg, ..] if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0)
}

/// Reads the decoded stream up to its limit: the smaller of `max_bytes` and
/// what the ratio guard allows for `encoded` input bytes. One bound computed
/// up front, enforced by `take`, so a bomb stops at the limit.
fn read_bounded(
    coding: Coding,
    reader: Box<dyn Read + '_>,
    encoded: u64,
    max_bytes: u64,
) -> Result<Vec<u8>, Error> {
    let ratio_limit = encoded
        .saturating_mul(MAX_DECODE_RATIO)
        .max(RATIO_GUARD_FLOOR_BYTES);
    let limit = max_bytes.min(ratio_limit);
    let mut out = Vec::with_capacity(
        (encoded as usize)
            .saturating_mul(4)
            .min(DECODE_CHUNK_BYTES * 16),
    );
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| corrupt(coding, e))?;
    if out.len() as u64 > limit {
        let reason = if limit == max_bytes {
            format!("decoded body exceeds the limit of {max_bytes} bytes")
        } else {
            format!("decompression ratio above {MAX_DECODE_RATIO}:1 (a decompression bomb?)")
        };
        return Err(Error::new(ErrorKind::Decoding, reason));
    }
    Ok(out)
}

fn corrupt(coding: Coding, e: io::Error) -> Error {
    Error::new(ErrorKind::Decoding, format!("invalid {coding:?} body: {e}")).with_source(e)
}
