//! Response head parsing: the framing decision of RFC 9112 §6.3, keep-alive,
//! spans, limits, and every head-level case of docs/hostile.md section A.

use nodelay_proto::limits::{MAX_HEADERS, MAX_HEADER_LINE_BYTES, MAX_HEAD_BYTES};
use nodelay_proto::{parse_response_head, BodyFraming, ProtoError, ResponseHead, Version};

fn parse(buf: &[u8]) -> Result<Option<ResponseHead>, ProtoError> {
    parse_response_head(buf, false)
}

/// At most 120 bytes of `buf`, for failure messages about huge heads.
fn show(buf: &[u8]) -> String {
    let text = String::from_utf8_lossy(&buf[..buf.len().min(120)]).into_owned();
    if buf.len() > 120 {
        format!("{text:?}... ({} bytes)", buf.len())
    } else {
        format!("{text:?}")
    }
}

#[track_caller]
fn head(buf: &[u8]) -> ResponseHead {
    match parse(buf) {
        Ok(Some(head)) => head,
        Ok(None) => panic!("expected a complete head for {}, got Ok(None)", show(buf)),
        Err(e) => panic!("expected a complete head for {}, got {e:?}", show(buf)),
    }
}

#[track_caller]
fn refused(buf: &[u8]) -> ProtoError {
    match parse(buf) {
        Err(e) => e,
        Ok(other) => panic!(
            "expected an error for {}, got {:?}",
            show(buf),
            other.map(|h| (h.status, h.head_len, h.framing))
        ),
    }
}

/// `HTTP/1.1 200 OK` with the given header lines.
fn ok_with(headers: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\n{headers}\r\n").into_bytes()
}

#[track_caller]
fn framing(buf: &[u8]) -> (BodyFraming, bool) {
    let h = head(buf);
    (h.framing, h.keep_alive)
}

/// The bytes a span covers.
fn at(buf: &[u8], span: (u32, u32)) -> &[u8] {
    &buf[span.0 as usize..span.1 as usize]
}

// ---------------------------------------------------------------- framing

#[test]
fn content_length_framing() {
    assert_eq!(
        framing(&ok_with("Content-Length: 5\r\n")),
        (BodyFraming::Length(5), true)
    );
    assert_eq!(
        framing(&ok_with("content-length: 0\r\n")),
        (BodyFraming::Length(0), true)
    );
    assert_eq!(
        framing(&ok_with("CONTENT-LENGTH:\t 42 \t\r\n")),
        (BodyFraming::Length(42), true)
    );
    assert_eq!(
        framing(&ok_with("Content-Length: 9999999999999999999\r\n")),
        (BodyFraming::Length(9_999_999_999_999_999_999), true),
        "19 digits always fit a u64"
    );
    assert_eq!(
        framing(&ok_with("Content-Length: 0000000000000000042\r\n")),
        (BodyFraming::Length(42), true),
        "leading zeros are still decimal"
    );
}

#[test]
fn chunked_framing() {
    assert_eq!(
        framing(&ok_with("Transfer-Encoding: chunked\r\n")),
        (BodyFraming::Chunked, true)
    );
    assert_eq!(
        framing(&ok_with("transfer-encoding: CHUNKED\r\n")),
        (BodyFraming::Chunked, true)
    );
    // Empty list elements are allowed by the RFC 9110 §5.6.1 list syntax.
    assert_eq!(
        framing(&ok_with("Transfer-Encoding: , chunked ,\r\n")),
        (BodyFraming::Chunked, true)
    );
}

#[test]
fn close_delimited_framing_never_keeps_alive() {
    assert_eq!(framing(&ok_with("")), (BodyFraming::CloseDelimited, false));
    assert_eq!(
        framing(&ok_with("Connection: keep-alive\r\n")),
        (BodyFraming::CloseDelimited, false)
    );
    assert_eq!(
        framing(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n"),
        (BodyFraming::CloseDelimited, false)
    );
}

#[test]
fn head_204_304_are_empty_whatever_the_headers_say() {
    let with_cl = ok_with("Content-Length: 100\r\n");
    assert_eq!(
        parse_response_head(&with_cl, true)
            .unwrap()
            .unwrap()
            .framing,
        BodyFraming::Empty
    );
    let with_te = ok_with("Transfer-Encoding: chunked\r\n");
    let h = parse_response_head(&with_te, true).unwrap().unwrap();
    assert_eq!((h.framing, h.keep_alive), (BodyFraming::Empty, true));
    // Not even a coding we would refuse on a GET is looked at: there is no body.
    let with_gzip = ok_with("Transfer-Encoding: gzip\r\n");
    assert_eq!(
        parse_response_head(&with_gzip, true)
            .unwrap()
            .unwrap()
            .framing,
        BodyFraming::Empty
    );
    // Nor the missing length that would make a GET response close-delimited.
    let bare = ok_with("");
    let h = parse_response_head(&bare, true).unwrap().unwrap();
    assert_eq!((h.framing, h.keep_alive), (BodyFraming::Empty, true));

    for status in ["204 No Content", "304 Not Modified"] {
        for headers in [
            "Content-Length: 100\r\n",
            "Transfer-Encoding: chunked\r\n",
            "",
        ] {
            let buf = format!("HTTP/1.1 {status}\r\n{headers}\r\n");
            assert_eq!(
                framing(buf.as_bytes()),
                (BodyFraming::Empty, true),
                "{buf:?} has no body and keeps the connection"
            );
        }
    }
}

#[test]
fn interim_responses() {
    let h = head(b"HTTP/1.1 100 Continue\r\n\r\n");
    assert!(h.is_interim());
    assert_eq!(h.framing, BodyFraming::Empty);
    let h = head(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n");
    assert!(h.is_interim());
    assert_eq!(h.headers.len(), 1);
    assert!(head(b"HTTP/1.1 199 Whatever\r\n\r\n").is_interim());
    assert!(!head(&ok_with("Content-Length: 0\r\n")).is_interim());
    assert!(!head(b"HTTP/1.1 204 No Content\r\n\r\n").is_interim());
}

#[test]
fn switching_protocols_is_unexpected() {
    assert_eq!(
        refused(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"),
        ProtoError::UnexpectedUpgrade
    );
}

// ---------------------------------------------------------------- keep-alive

#[test]
fn keep_alive_rules() {
    let cases: &[(&[u8], bool)] = &[
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", false),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: Close\r\n\r\n", false),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nconnection: keep-alive, close\r\n\r\n", false),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: upgrade\r\nConnection: close\r\n\r\n", false),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n", true),
        // Tokens match whole: `closed` and `x-close` are not `close`.
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: closed, x-close\r\n\r\n", true),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n", true),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: Keep-Alive\r\n\r\n", true),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive, close\r\n\r\n", false),
        (b"HTTP/1.0 204 No Content\r\n\r\n", false),
    ];
    for (buf, keep_alive) in cases {
        assert_eq!(
            head(buf).keep_alive,
            *keep_alive,
            "{:?}",
            String::from_utf8_lossy(buf)
        );
    }
}

#[test]
fn version_is_reported() {
    assert_eq!(head(b"HTTP/1.0 200 OK\r\n\r\n").version, Version::Http10);
    assert_eq!(head(b"HTTP/1.1 200 OK\r\n\r\n").version, Version::Http11);
    assert_eq!(Version::Http10.as_str(), "HTTP/1.0");
    assert_eq!(Version::Http11.as_str(), "HTTP/1.1");
}

// ---------------------------------------------------------------- A1: TE + CL

#[test]
fn a1_transfer_encoding_and_content_length_decode_chunked_then_close() {
    for headers in [
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "Content-Length: 0\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n",
    ] {
        assert_eq!(
            framing(&ok_with(headers)),
            (BodyFraming::Chunked, false),
            "{headers:?}"
        );
    }
}

// ---------------------------------------------------------------- A2: Content-Length

#[test]
fn a2_malformed_or_conflicting_content_length_is_refused() {
    for headers in [
        "Content-Length: 5\r\nContent-Length: 6\r\n",
        "Content-Length: 5, 6\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: +5\r\n",
        "Content-Length: 0x10\r\n",
        "Content-Length: 1e3\r\n",
        "Content-Length: 1.0\r\n",
        "Content-Length: 12345678901234567890\r\n",
        "Content-Length: 00000000000000000001\r\n",
        "Content-Length: 99999999999999999999999\r\n",
        "Content-Length: \r\n",
        "Content-Length: 5,\r\n",
        "Content-Length: 5 5\r\n",
        "Content-Length: five\r\n",
        "Content-Length: \u{ff15}\r\n",
    ] {
        assert_eq!(
            refused(&ok_with(headers)),
            ProtoError::InvalidContentLength,
            "{headers:?}"
        );
    }
}

#[test]
fn a2_identical_duplicate_content_lengths_are_accepted() {
    for headers in [
        "Content-Length: 5\r\nContent-Length: 5\r\n",
        "Content-Length: 5, 5\r\n",
        "Content-Length: 5,5,5\r\n",
        "Content-Length: 5\r\nContent-Length: 5, 5\r\n",
    ] {
        assert_eq!(
            framing(&ok_with(headers)),
            (BodyFraming::Length(5), true),
            "{headers:?}"
        );
    }
}

// ---------------------------------------------------------------- A3: Transfer-Encoding

#[test]
fn a3_unknown_duplicated_or_misordered_codings_are_refused() {
    for headers in [
        "Transfer-Encoding: chunked, chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked, gzip\r\n",
        "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: identity\r\n",
        "Transfer-Encoding: \r\n",
        "Transfer-Encoding: chunked;q=1\r\n",
        "Transfer-Encoding: xchunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\nTransfer-Encoding: gzip\r\n",
    ] {
        assert_eq!(
            refused(&ok_with(headers)),
            ProtoError::InvalidTransferEncoding,
            "{headers:?}"
        );
    }
}

#[test]
fn a3_transfer_encoding_on_http10_is_refused() {
    assert_eq!(
        refused(b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ProtoError::InvalidTransferEncoding
    );
    assert_eq!(
        refused(b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"),
        ProtoError::InvalidTransferEncoding
    );
}

// ---------------------------------------------------------------- A6: malformed lines

#[test]
fn a6_malformed_header_lines_are_refused() {
    for headers in [
        "Content-Length : 5\r\n",
        "Content-Length\t: 5\r\n",
        "Transfer-Encoding : chunked\r\n",
        "NoColonHere\r\n",
        "X-A: 1\r\nNoColonHere\r\n",
        ": no-name\r\n",
        " Content-Length: 5\r\n",
        "X-A: 1\r\n folded\r\n",
        "X-A: a\0b\r\n",
        "X-A: a\rb\r\n",
        "Content-Length: 5\rX-Smuggled: 1\r\n",
        "X(A): 1\r\n",
        "X\0: 1\r\n",
    ] {
        let e = refused(&ok_with(headers));
        assert!(
            matches!(e, ProtoError::InvalidHead(_)),
            "{headers:?} gave {e:?}"
        );
    }
}

// ---------------------------------------------------------------- A7: status lines

#[test]
fn a7_bad_status_lines_are_refused() {
    for buf in [
        &b"HTTP/1.1 20\r\n\r\n"[..],
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 200OK\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1  200 OK\r\n\r\n",
        b"HTTP/1.1 099 Low\r\n\r\n",
        b"HTTP/1.1 000 Zero\r\n\r\n",
        b"HTTP/2.0 200 OK\r\n\r\n",
        b"HTTP/2 200\r\n\r\n",
        b"HTTP/1.2 200 OK\r\n\r\n",
        b"HTTP/0.9 200 OK\r\n\r\n",
        b"http/1.1 200 OK\r\n\r\n",
        b"ICY 200 OK\r\n\r\n",
        // HTTP/0.9: the body comes straight away, without any status line.
        b"<html><body>hello</body></html>\r\n\r\n",
        b"hello\n\n",
    ] {
        let e = refused(buf);
        assert!(
            matches!(e, ProtoError::InvalidHead(_)),
            "{:?} gave {e:?}",
            String::from_utf8_lossy(buf)
        );
    }
}

#[test]
fn status_line_without_reason_is_accepted() {
    let buf = b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n";
    let h = head(buf);
    assert_eq!(h.status, 200);
    assert_eq!(at(buf, h.reason), b"");
    assert!(
        h.reason.1 as usize <= buf.len(),
        "reason span {:?} out of the buffer",
        h.reason
    );
    assert_eq!(at(buf, h.headers[0].name), b"Content-Length");
}

#[test]
fn reason_span_is_inside_the_buffer_for_every_shape_of_status_line() {
    // Spans are used to slice the head later; one outside the buffer panics there.
    for buf in [
        &b"HTTP/1.1 200\r\n\r\n"[..],
        b"HTTP/1.1 200 \r\n\r\n",
        b"HTTP/1.1 200\n\n",
        b"\r\nHTTP/1.1 204\r\n\r\n",
        b"HTTP/1.1 200 Caf\xe9\r\n\r\n",
    ] {
        let heap = buf.to_vec();
        let stack = {
            let mut a = [0u8; 64];
            a[..buf.len()].copy_from_slice(buf);
            a
        };
        for copy in [&heap[..], &stack[..buf.len()], buf] {
            let h = head(copy);
            assert!(
                h.reason.0 <= h.reason.1 && h.reason.1 as usize <= copy.len(),
                "reason span {:?} outside a {}-byte buffer for {:?}",
                h.reason,
                copy.len(),
                String::from_utf8_lossy(buf)
            );
            assert_eq!(
                at(copy, h.reason)
                    .iter()
                    .filter(|b| b.is_ascii_digit())
                    .count(),
                0
            );
        }
    }
}

#[test]
fn obs_text_reason_phrase_is_kept_raw() {
    // RFC 9110 §15 allows obs-text in a reason phrase; it must not vanish.
    let buf = b"HTTP/1.1 200 Caf\xe9 ok\r\n\r\n";
    let h = head(buf);
    assert_eq!(at(buf, h.reason), b"Caf\xe9 ok");
}

// ---------------------------------------------------------------- A8: size limits

#[test]
fn a8_huge_header_line_is_refused_complete_or_partial() {
    let big = "a".repeat(200 * 1024);
    let complete = ok_with(&format!("X-Big: {big}\r\n"));
    assert!(
        complete.len() < MAX_HEAD_BYTES,
        "within the block limit, so only the line limit applies"
    );
    assert_eq!(refused(&complete), ProtoError::HeadTooLarge);
    // Still arriving: refused as soon as the unterminated line passes the limit.
    let partial = format!("HTTP/1.1 200 OK\r\nX-Big: {big}");
    assert_eq!(refused(partial.as_bytes()), ProtoError::HeadTooLarge);
    let just_over = format!(
        "HTTP/1.1 200 OK\r\nX: {}",
        "a".repeat(MAX_HEADER_LINE_BYTES)
    );
    assert_eq!(refused(just_over.as_bytes()), ProtoError::HeadTooLarge);
}

#[test]
fn a8_header_line_limit_is_exact() {
    // A line of exactly the limit (without its CRLF) is fine; one byte more is not.
    let at_limit = format!("X: {}\r\n", "v".repeat(MAX_HEADER_LINE_BYTES - 3));
    assert_eq!(at_limit.len(), MAX_HEADER_LINE_BYTES + 2);
    assert_eq!(head(&ok_with(&at_limit)).headers.len(), 1);
    let over = format!("X: {}\r\n", "v".repeat(MAX_HEADER_LINE_BYTES - 2));
    assert_eq!(refused(&ok_with(&over)), ProtoError::HeadTooLarge);
}

#[test]
fn a8_line_limit_cannot_be_dodged_with_whitespace_or_the_status_line() {
    let pad = " ".repeat(100 * 1024);
    // Whitespace around a value is not part of the value httparse returns.
    assert_eq!(
        refused(&ok_with(&format!("X-Pad:{pad}v\r\n"))),
        ProtoError::HeadTooLarge
    );
    assert_eq!(
        refused(&ok_with(&format!("X-Pad: v{pad}\r\n"))),
        ProtoError::HeadTooLarge
    );
    // The status line is a line of the head too.
    let long_reason = format!("HTTP/1.1 200 {}\r\n\r\n", "r".repeat(100 * 1024));
    assert_eq!(refused(long_reason.as_bytes()), ProtoError::HeadTooLarge);
}

#[test]
fn a8_head_block_limit_is_exact() {
    // Five header lines well under the line limit, padded to an exact total.
    fn block(total: usize) -> Vec<u8> {
        let mut buf = b"HTTP/1.1 200 OK\r\n".to_vec();
        let line_budget = (total - buf.len() - 2) / 5;
        for i in 0..5 {
            let filler = if i < 4 {
                line_budget
            } else {
                total - buf.len() - 2
            };
            let value = "x".repeat(filler - "X-0: \r\n".len());
            buf.extend_from_slice(format!("X-{i}: {value}\r\n").as_bytes());
        }
        buf.extend_from_slice(b"\r\n");
        assert_eq!(buf.len(), total);
        buf
    }
    let ok = block(MAX_HEAD_BYTES);
    assert_eq!(head(&ok).head_len, MAX_HEAD_BYTES);
    assert_eq!(
        refused(&block(MAX_HEAD_BYTES + 1)),
        ProtoError::HeadTooLarge
    );
    // An incomplete head that already fills the limit is refused, not waited on.
    let mut unfinished = ok.clone();
    unfinished.truncate(MAX_HEAD_BYTES - 2);
    unfinished.extend_from_slice(b"X-More: y");
    assert_eq!(refused(&unfinished), ProtoError::HeadTooLarge);
}

#[test]
fn a8_header_count_limit_is_exact() {
    let fields = |n: usize| {
        (0..n)
            .map(|i| format!("X-{i}: {i}\r\n"))
            .collect::<String>()
    };
    // Every count up to the limit, across the parser's first try with fewer
    // header slots and its second one with all of them.
    for n in 0..=MAX_HEADERS {
        let parsed = head(&ok_with(&fields(n)));
        assert_eq!(parsed.headers.len(), n);
    }
    let at_limit = ok_with(&fields(MAX_HEADERS));
    assert_eq!(head(&at_limit).headers.len(), MAX_HEADERS);
    assert_eq!(
        refused(&ok_with(&fields(MAX_HEADERS + 1))),
        ProtoError::TooManyHeaders
    );
    // 100,000 tiny headers: refused for one limit or the other, never accepted.
    let flood = ok_with(&"a: b\r\n".repeat(100_000));
    let e = refused(&flood);
    assert!(
        matches!(e, ProtoError::TooManyHeaders | ProtoError::HeadTooLarge),
        "{e:?}"
    );
    // Also while the flood is still arriving.
    let e = refused(&flood[..flood.len() / 2]);
    assert!(
        matches!(e, ProtoError::TooManyHeaders | ProtoError::HeadTooLarge),
        "{e:?}"
    );
}

// ---------------------------------------------------------------- partial heads

#[test]
fn every_proper_prefix_is_partial() {
    let full = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n";
    for n in 0..full.len() {
        assert_eq!(parse(&full[..n]), Ok(None), "prefix of {n} bytes");
    }
    assert_eq!(head(full).head_len, full.len());
}

#[test]
fn head_len_stops_before_the_body() {
    let buf = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\n\r\n";
    let h = head(buf);
    assert_eq!(&buf[h.head_len..h.head_len + 5], b"hello");
    assert_eq!(h.framing, BodyFraming::Length(5));
}

// ---------------------------------------------------------------- spans

#[test]
fn spans_point_at_the_right_bytes() {
    let buf = b"HTTP/1.1 404 Not Found\r\nContent-Type:text/html; charset=utf-8\r\nX-Empty:\r\n\
                x-dup: one\r\nX-Dup:  two  \r\nContent-Length: 3\r\n\r\nabc";
    let h = head(buf);
    assert_eq!(h.status, 404);
    assert_eq!(at(buf, h.reason), b"Not Found");
    let pairs: Vec<(&[u8], &[u8])> = h
        .headers
        .iter()
        .map(|s| (at(buf, s.name), at(buf, s.value)))
        .collect();
    assert_eq!(
        pairs,
        vec![
            (&b"Content-Type"[..], &b"text/html; charset=utf-8"[..]),
            (b"X-Empty", b""),
            (b"x-dup", b"one"),
            (b"X-Dup", b"two"),
            (b"Content-Length", b"3"),
        ]
    );
    // Every span lies inside the head, never in the body.
    for s in &h.headers {
        assert!(s.name.1 as usize <= h.head_len && s.value.1 as usize <= h.head_len);
        assert!(s.name.0 <= s.name.1 && s.value.0 <= s.value.1);
    }
}

#[test]
fn spans_count_leading_empty_lines() {
    // RFC 9112 §2.2: a client may skip empty lines before the status line.
    let buf = b"\r\n\r\nHTTP/1.1 200 OK\r\nA: b\r\n\r\n";
    let h = head(buf);
    assert_eq!(h.head_len, buf.len());
    assert_eq!(at(buf, h.reason), b"OK");
    assert_eq!(at(buf, h.headers[0].name), b"A");
    assert_eq!(at(buf, h.headers[0].value), b"b");
}

#[test]
fn obs_text_header_values_are_kept_raw() {
    let buf = b"HTTP/1.1 200 OK\r\nX-Name: Ren\xe9\r\nContent-Length: 0\r\n\r\n";
    let h = head(buf);
    assert_eq!(at(buf, h.headers[0].value), b"Ren\xe9");
}

#[test]
fn errors_have_readable_messages() {
    for (e, needle) in [
        (ProtoError::HeadTooLarge, "262144"),
        (ProtoError::TooManyHeaders, "128"),
        (ProtoError::TooManyInterimResponses, "10"),
        (ProtoError::ChunkExtensionsTooLarge, "16384"),
        (ProtoError::TrailersTooLarge, "16384"),
    ] {
        assert!(e.to_string().contains(needle), "{e}");
    }
}
