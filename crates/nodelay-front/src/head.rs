//! A response head as received: the raw bytes plus spans into them. Nothing
//! is decoded or copied until a front asks for one field.

use std::borrow::Cow;

use nodelay_core::batch::Fetched;
use nodelay_core::{Exchange, HeaderSpan};

/// A response head: status, version, reason and header fields, kept as the
/// received bytes plus spans (moved out of the exchange, never copied).
pub struct Head {
    status: u16,
    version: &'static str,
    bytes: Box<[u8]>,
    spans: Vec<HeaderSpan>,
    reason: (u32, u32),
}

impl Head {
    /// Moves the head out of a blocking exchange (no copy).
    pub fn take(exchange: &mut Exchange) -> Head {
        let status = exchange.status();
        let version = exchange.version().as_str();
        let reason = exchange.reason_span();
        let (bytes, spans) = exchange.take_head();
        Head {
            status,
            version,
            bytes,
            spans,
            reason,
        }
    }

    /// Moves the head out of an async exchange (no copy).
    pub fn take_async(exchange: &mut nodelay_core::aio::AsyncExchange) -> Head {
        let status = exchange.status();
        let version = exchange.version().as_str();
        let reason = exchange.reason_span();
        let (bytes, spans) = exchange.take_head();
        Head {
            status,
            version,
            bytes,
            spans,
            reason,
        }
    }

    /// Moves the head out of a response the batch driver read whole (no copy).
    pub fn fetched(fetched: &mut Fetched) -> Head {
        Head {
            status: fetched.status,
            version: fetched.version.as_str(),
            bytes: std::mem::take(&mut fetched.head_bytes),
            spans: std::mem::take(&mut fetched.headers),
            reason: fetched.reason,
        }
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The protocol version, as `"HTTP/1.1"`, `"HTTP/1.0"` or `"HTTP/2"`.
    pub fn version(&self) -> &'static str {
        self.version
    }

    /// The reason phrase as received (empty for HTTP/2).
    pub fn reason(&self) -> &[u8] {
        self.slice(self.reason)
    }

    /// Every header field as `(name, value)` bytes, in received order, names
    /// spelt as received.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = (&[u8], &[u8])> + '_ {
        self.spans
            .iter()
            .map(|span| (self.slice(span.name), self.slice(span.value)))
    }

    /// Every value of the named header (ASCII case-insensitive), in received
    /// order.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields()
            .filter(move |(field, _)| field.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, value)| value)
    }

    /// The first value of the named header (ASCII case-insensitive).
    pub fn value(&self, name: &str) -> Option<&[u8]> {
        self.fields()
            .find(|(field, _)| field.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, value)| value)
    }

    fn slice(&self, span: (u32, u32)) -> &[u8] {
        &self.bytes[span.0 as usize..span.1 as usize]
    }
}

/// Header bytes as text: UTF-8 when valid (borrowed), else Latin-1 (what
/// RFC 9110 §5.5 calls obs-text: every byte maps to one code point, so
/// nothing is lost and the bytes can be recovered).
pub fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| b as char).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head parsed from raw bytes, as a connection would deliver it.
    fn head(raw: &[u8]) -> Head {
        let parsed = nodelay_proto::parse_response_head(raw, false)
            .expect("valid head")
            .expect("complete head");
        Head {
            status: parsed.status,
            version: parsed.version.as_str(),
            bytes: raw.into(),
            spans: parsed.headers,
            reason: parsed.reason,
        }
    }

    const RAW: &[u8] = b"HTTP/1.1 404 Not Here\r\nContent-Type: text/plain\r\n\
        Set-Cookie: a=1\r\nX-Caf: caf\xe9\r\nset-cookie: b=2\r\n\r\n";

    #[test]
    fn status_version_reason() {
        let head = head(RAW);
        assert_eq!(head.status(), 404);
        assert_eq!(head.version(), "HTTP/1.1");
        assert_eq!(head.reason(), b"Not Here");
    }

    #[test]
    fn fields_keep_order_and_spelling() {
        let head = head(RAW);
        let names: Vec<&[u8]> = head.fields().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            [&b"Content-Type"[..], b"Set-Cookie", b"X-Caf", b"set-cookie"]
        );
    }

    #[test]
    fn lookup_is_case_insensitive_and_ordered() {
        let head = head(RAW);
        assert_eq!(head.value("content-type"), Some(&b"text/plain"[..]));
        assert_eq!(head.value("absent"), None);
        let cookies: Vec<&[u8]> = head.values("SET-COOKIE").collect();
        assert_eq!(cookies, [&b"a=1"[..], b"b=2"]);
    }

    #[test]
    fn text_is_utf8_or_latin1() {
        assert_eq!(text(b"caf\xc3\xa9"), "café");
        assert_eq!(text(b"caf\xe9"), "café");
        assert!(matches!(text(b"plain"), Cow::Borrowed("plain")));
        assert_eq!(text(head(RAW).value("x-caf").unwrap()), "café");
    }
}
