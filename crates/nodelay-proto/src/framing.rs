//! How the body of a response is delimited (RFC 9112 §6.3).

use crate::error::ProtoError;
use crate::limits::MAX_CONTENT_LENGTH_DIGITS;

/// HTTP/1.x minor version of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.0.
    Http10,
    /// HTTP/1.1.
    Http11,
    /// HTTP/2 (RFC 9113): never parsed here; the core's h2 driver reports it.
    Http2,
}

impl Version {
    /// The version as written in a status line (`HTTP/1.1`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
            Version::Http2 => "HTTP/2",
        }
    }
}

/// The body framing of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body: HEAD, 1xx, 204, 304 (whatever the headers claim).
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    CloseDelimited,
}

/// Collected framing header values of one head, before the decision.
#[derive(Default)]
pub(crate) struct FramingHeaders {
    pub content_length: Option<u64>,
    pub transfer_encoding_seen: bool,
    pub chunked_count: usize,
    pub other_coding: bool,
    pub connection_close: bool,
    pub connection_keep_alive: bool,
}

impl FramingHeaders {
    /// Every `Content-Length` field (and every element of a list in one) must
    /// be the same plain decimal number (RFC 9110 §8.6): `+5`, `-1`, `0x10`,
    /// `1e3`, 20 digits and two different values are all refused.
    pub fn add_content_length(&mut self, value: &[u8]) -> Result<(), ProtoError> {
        for part in value.split(|&b| b == b',') {
            let n = parse_decimal(trim_ows(part)).ok_or(ProtoError::InvalidContentLength)?;
            match self.content_length {
                Some(prev) if prev != n => return Err(ProtoError::InvalidContentLength),
                _ => self.content_length = Some(n),
            }
        }
        Ok(())
    }

    /// We accept exactly one coding, `chunked`, and it must be the only one:
    /// anything else (unknown, duplicated, misordered) is refused rather than
    /// guessed at (docs/hostile.md A3).
    pub fn add_transfer_encoding(&mut self, value: &[u8]) {
        self.transfer_encoding_seen = true;
        for part in value.split(|&b| b == b',') {
            let coding = trim_ows(part);
            if coding.is_empty() {
                continue;
            }
            if coding.eq_ignore_ascii_case(b"chunked") {
                self.chunked_count += 1;
            } else {
                self.other_coding = true;
            }
        }
    }

    pub fn add_connection(&mut self, value: &[u8]) {
        for token in connection_options(value) {
            self.connection_close |= token.eq_ignore_ascii_case(b"close");
            self.connection_keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
        }
    }

    /// Decides framing and whether the connection may be reused afterwards.
    pub fn decide(
        &self,
        version: Version,
        status: u16,
        request_was_head: bool,
    ) -> Result<(BodyFraming, bool), ProtoError> {
        let mut keep_alive = match version {
            Version::Http11 | Version::Http2 => !self.connection_close,
            Version::Http10 => self.connection_keep_alive && !self.connection_close,
        };
        if request_was_head || (100..200).contains(&status) || status == 204 || status == 304 {
            return Ok((BodyFraming::Empty, keep_alive));
        }
        if self.transfer_encoding_seen {
            if version == Version::Http10 || self.other_coding || self.chunked_count != 1 {
                return Err(ProtoError::InvalidTransferEncoding);
            }
            // Both headers present is a smuggling signature: decode chunked
            // (it wins per RFC 9112 §6.3) but never reuse the connection.
            if self.content_length.is_some() {
                keep_alive = false;
            }
            return Ok((BodyFraming::Chunked, keep_alive));
        }
        match self.content_length {
            Some(n) => Ok((BodyFraming::Length(n), keep_alive)),
            None => Ok((BodyFraming::CloseDelimited, false)),
        }
    }
}

/// The connection options of a `Connection` field value (RFC 9110 §7.6.1:
/// a comma-separated list of tokens), empty elements skipped.
pub(crate) fn connection_options(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim_ows)
        .filter(|token| !token.is_empty())
}

fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > MAX_CONTENT_LENGTH_DIGITS {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}
