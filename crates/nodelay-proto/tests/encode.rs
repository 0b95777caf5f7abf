//! Request head encoding, byte for byte: what `encode_request_head` appends is
//! exactly what a server receives, so every test compares whole buffers.

use nodelay_proto::{
    encode_request_head, encode_request_head_with, request_closes, EncodedHeaders, ProtoError,
    RequestHead,
};

/// Encodes into a fresh buffer and returns it as text (heads are ASCII).
/// Every call also encodes through `EncodedHeaders` + `encode_request_head_with`
/// (the client's reuse of its default headers) and checks it gives the same
/// bytes, or fails too.
fn encode(
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    content_length: Option<u64>,
) -> Result<String, ProtoError> {
    let head = RequestHead {
        method,
        target,
        host: "h:8080",
        headers,
        content_length,
    };
    let mut out = Vec::new();
    let direct = encode_request_head(&mut out, &head);
    let mut reused = b"kept".to_vec();
    let via_block = EncodedHeaders::new(headers)
        .and_then(|block| encode_request_head_with(&mut reused, &head, &block));
    match &direct {
        Ok(_) => {
            via_block.expect("the encoded-headers path accepts what the direct one does");
            assert_eq!(&reused[..4], b"kept", "appends, never overwrites");
            assert_eq!(reused[4..], out[..], "the same bytes both ways");
        }
        Err(_) => {
            assert!(
                via_block.is_err(),
                "the encoded-headers path refuses it too"
            );
            assert_eq!(reused, b"kept", "nothing appended on error");
        }
    }
    direct?;
    Ok(String::from_utf8(out).expect("encoded head is ASCII"))
}

fn ok(method: &str, target: &str, headers: &[(&str, &str)], content_length: Option<u64>) -> String {
    encode(method, target, headers, content_length).expect("valid request head")
}

// ---------------------------------------------------------------- encodings

#[test]
fn get_without_headers_is_request_line_and_host_only() {
    assert_eq!(
        ok("GET", "/p?q=1", &[], None),
        "GET /p?q=1 HTTP/1.1\r\nHost: h:8080\r\n\r\n"
    );
}

#[test]
fn host_comes_first_then_user_headers_in_order() {
    let head = ok(
        "GET",
        "/",
        &[("Accept", "*/*"), ("User-Agent", "nodelay/0.1")],
        None,
    );
    assert_eq!(
        head,
        "GET / HTTP/1.1\r\nHost: h:8080\r\nAccept: */*\r\nUser-Agent: nodelay/0.1\r\n\r\n"
    );
}

#[test]
fn post_with_body_gets_content_length_last() {
    let head = ok("POST", "/echo", &[("Content-Type", "text/plain")], Some(11));
    assert_eq!(
        head,
        "POST /echo HTTP/1.1\r\nHost: h:8080\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\n"
    );
}

#[test]
fn any_method_with_a_body_gets_content_length() {
    assert_eq!(
        ok("DELETE", "/x", &[], Some(3)),
        "DELETE /x HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 3\r\n\r\n"
    );
    assert_eq!(
        ok("GET", "/x", &[], Some(0)),
        "GET /x HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 0\r\n\r\n"
    );
}

#[test]
fn body_methods_without_body_send_content_length_zero() {
    for method in ["POST", "PUT", "PATCH"] {
        assert_eq!(
            ok(method, "/", &[], None),
            format!("{method} / HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 0\r\n\r\n")
        );
    }
}

#[test]
fn bodiless_methods_without_body_send_no_content_length() {
    for method in ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"] {
        assert_eq!(
            ok(method, "/", &[], None),
            format!("{method} / HTTP/1.1\r\nHost: h:8080\r\n\r\n")
        );
    }
}

#[test]
fn large_content_length_is_written_in_full() {
    assert_eq!(
        ok("PUT", "/", &[], Some(u64::MAX)),
        "PUT / HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 18446744073709551615\r\n\r\n"
    );
    assert_eq!(
        ok("PUT", "/", &[], Some(1_000_000_007)),
        "PUT / HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 1000000007\r\n\r\n"
    );
}

#[test]
fn user_host_is_kept_in_its_position_and_not_duplicated() {
    let head = ok(
        "GET",
        "/",
        &[("Accept", "*/*"), ("host", "example.test"), ("X-A", "1")],
        None,
    );
    assert_eq!(
        head,
        "GET / HTTP/1.1\r\nAccept: */*\r\nhost: example.test\r\nX-A: 1\r\n\r\n"
    );
    assert_eq!(head.to_ascii_lowercase().matches("host:").count(), 1);
}

#[test]
fn user_content_length_is_not_duplicated() {
    let head = ok("POST", "/", &[("content-length", "5")], Some(5));
    assert_eq!(
        head,
        "POST / HTTP/1.1\r\nHost: h:8080\r\ncontent-length: 5\r\n\r\n"
    );
    // Also when the method alone would have added `Content-Length: 0`.
    let head = ok("PUT", "/", &[("Content-Length", "7")], None);
    assert_eq!(
        head,
        "PUT / HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 7\r\n\r\n"
    );
}

#[test]
fn user_transfer_encoding_suppresses_content_length() {
    let head = ok(
        "POST",
        "/up",
        &[("Transfer-Encoding", "chunked")],
        Some(100),
    );
    assert_eq!(
        head,
        "POST /up HTTP/1.1\r\nHost: h:8080\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let head = ok("POST", "/up", &[("TRANSFER-ENCODING", "chunked")], None);
    assert_eq!(
        head,
        "POST /up HTTP/1.1\r\nHost: h:8080\r\nTRANSFER-ENCODING: chunked\r\n\r\n"
    );
}

#[test]
fn header_case_order_and_duplicates_are_kept() {
    let headers = [
        ("x-b", "2"),
        ("X-A", "1"),
        ("x-b", "3"),
        ("ACCEPT", "text/html"),
        ("Cookie", "a=1"),
    ];
    assert_eq!(
        ok("GET", "/", &headers, None),
        "GET / HTTP/1.1\r\nHost: h:8080\r\nx-b: 2\r\nX-A: 1\r\nx-b: 3\r\nACCEPT: text/html\r\nCookie: a=1\r\n\r\n"
    );
}

#[test]
fn values_are_sent_verbatim() {
    // Empty values, inner spaces, tabs, obs-text (UTF-8) and every tchar in a name.
    let headers = [
        ("X-Empty", ""),
        ("X-Spaces", "a  b\tc"),
        ("X-Utf8", "caf\u{e9}"),
        ("!#$%&'*+-.^_`|~09azAZ", "v"),
    ];
    assert_eq!(
        ok("GET", "/", &headers, None),
        "GET / HTTP/1.1\r\nHost: h:8080\r\nX-Empty: \r\nX-Spaces: a  b\tc\r\nX-Utf8: caf\u{e9}\r\n\
         !#$%&'*+-.^_`|~09azAZ: v\r\n\r\n"
    );
}

#[test]
fn extension_methods_and_asterisk_target_are_allowed() {
    assert_eq!(
        ok("PROPFIND", "*", &[], None),
        "PROPFIND * HTTP/1.1\r\nHost: h:8080\r\n\r\n"
    );
    assert_eq!(
        ok("OPTIONS", "/%20a?b=%0D%0A", &[], None),
        "OPTIONS /%20a?b=%0D%0A HTTP/1.1\r\nHost: h:8080\r\n\r\n"
    );
}

#[test]
fn appends_to_existing_buffer_contents() {
    let mut out = b"previous".to_vec();
    encode_request_head(
        &mut out,
        &RequestHead {
            method: "GET",
            target: "/",
            host: "a",
            headers: &[],
            content_length: None,
        },
    )
    .unwrap();
    assert_eq!(out, b"previousGET / HTTP/1.1\r\nHost: a\r\n\r\n");
}

#[test]
fn reused_buffer_after_clear_gives_identical_bytes() {
    let mut out = Vec::new();
    let head = RequestHead {
        method: "POST",
        target: "/echo",
        host: "127.0.0.1:1",
        headers: &[("X-N", "1")],
        content_length: Some(4),
    };
    encode_request_head(&mut out, &head).unwrap();
    let first = out.clone();
    out.clear();
    encode_request_head(&mut out, &head).unwrap();
    assert_eq!(out, first);
}

// ---------------------------------------------------------------- refusals

/// Asserts the encoding fails with `expected` and leaves the buffer untouched.
#[track_caller]
fn refused(method: &str, target: &str, host: &str, headers: &[(&str, &str)], expected: ProtoError) {
    let mut out = b"keep me".to_vec();
    let capacity = out.capacity();
    let err = encode_request_head(
        &mut out,
        &RequestHead {
            method,
            target,
            host,
            headers,
            content_length: Some(1),
        },
    )
    .expect_err("must be refused");
    assert_eq!(err, expected);
    assert_eq!(out, b"keep me", "nothing may be appended on error");
    assert_eq!(
        out.capacity(),
        capacity,
        "the buffer is not even grown on error"
    );
}

#[test]
fn refuses_cr_lf_nul_in_header_values() {
    for value in [
        "a\rb",
        "a\nb",
        "a\0b",
        "\r\nX-Injected: 1",
        "ok\r\n\r\nGET /smuggled HTTP/1.1",
        "\n",
    ] {
        refused(
            "GET",
            "/",
            "h",
            &[("X-Ok", "fine"), ("X-Bad", value)],
            ProtoError::InvalidHeaderValue("X-Bad".into()),
        );
    }
}

#[test]
fn refuses_bad_header_names() {
    for name in [
        "",
        "X Bad",
        "X:Bad",
        "X-Bad:",
        " X",
        "X\t",
        "X\r\n",
        "X\0",
        "(x)",
        "x/y",
        "caf\u{e9}",
    ] {
        refused(
            "GET",
            "/",
            "h",
            &[(name, "v")],
            ProtoError::InvalidHeaderName(name.into()),
        );
    }
}

#[test]
fn later_bad_header_refuses_the_whole_head() {
    refused(
        "GET",
        "/",
        "h",
        &[("A", "1"), ("B", "2"), ("C", "3\r\n")],
        ProtoError::InvalidHeaderValue("C".into()),
    );
}

#[test]
fn refuses_bad_methods() {
    for method in [
        "", "GE T", " GET", "GET ", "GET\r\n", "G\0T", "GET\n", "G(T", "G\u{e9}T",
    ] {
        refused(method, "/", "h", &[], ProtoError::InvalidMethod);
    }
}

#[test]
fn refuses_bad_targets() {
    for target in [
        "",
        "/a b",
        "/a\rb",
        "/a\nb",
        "/a\0b",
        "/\tx",
        "/x\x7f",
        "/ HTTP/1.1\r\nX: y",
    ] {
        refused("GET", target, "h", &[], ProtoError::InvalidTarget);
    }
}

#[test]
fn refuses_cr_lf_nul_in_host() {
    for host in ["h\r\nX: 1", "h\n", "h\0"] {
        refused(
            "GET",
            "/",
            host,
            &[],
            ProtoError::InvalidHeaderValue("Host".into()),
        );
    }
}

#[test]
fn error_messages_name_the_offender() {
    let mut out = Vec::new();
    let err = encode_request_head(
        &mut out,
        &RequestHead {
            method: "GET",
            target: "/",
            host: "h",
            headers: &[("X-Secret-Name", "a\nb")],
            content_length: None,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("X-Secret-Name"), "{err}");
}

#[test]
fn encoding_finds_connection_close_as_request_closes_does() {
    let cases: [&[(&str, &str)]; 5] = [
        &[("User-Agent", "t"), ("Connection", "TE, close")],
        &[("connection", "CLOSE")],
        &[("Connection", "keep-alive, closed")],
        &[("X-Connection", "close")],
        &[],
    ];
    for headers in cases {
        let head = RequestHead {
            method: "GET",
            target: "/",
            host: "h",
            headers,
            content_length: None,
        };
        let direct = encode_request_head(&mut Vec::new(), &head).unwrap();
        let block = EncodedHeaders::new(headers).unwrap();
        let reused = encode_request_head_with(&mut Vec::new(), &head, &block).unwrap();
        assert_eq!(direct.closes, request_closes(headers), "{headers:?}");
        assert_eq!(reused, direct, "{headers:?}");
    }
}
