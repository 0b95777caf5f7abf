//! Byte-level scenarios of one HTTP/1.1 exchange, driven the way the
//! drivers in nodelay-core drive it: bytes arrive in chosen splits (one byte
//! at a time included), and the events, errors and verdicts are asserted.

use nodelay_proto::limits::{MAX_HEAD_BYTES, MAX_INTERIM_RESPONSES};
use nodelay_proto::{
    answer_may_follow, chunk_size_line, retry_on_fresh_connection, BodyFraming, BodyReader,
    BodyWriter, CloseReason, FailedAttempt, Frame, HeadEvent, HeadReader, ProtoError, ReadBuffer,
    ResponseHead, Reuse, SendFailure, StreamFraming, CHUNK_SIZE_LINE_BYTES,
};

/// Read sizes every scenario runs with: one byte at a time, odd splits, and
/// everything at once.
const SPLITS: [usize; 5] = [1, 2, 3, 7, usize::MAX];

/// What a driver saw of one response.
#[derive(Debug, PartialEq)]
struct Seen {
    interim: usize,
    status: u16,
    framing: BodyFraming,
    body: Vec<u8>,
    verdict: Reuse,
}

/// The server's bytes, handed out `split` at a time; `None` is its close.
struct Wire<'a> {
    bytes: &'a [u8],
    split: usize,
}

impl Wire<'_> {
    /// One read into `buf` (0: the server closed).
    fn read(&mut self, buf: &mut ReadBuffer) -> usize {
        let spare = buf.spare(MAX_HEAD_BYTES).expect("buffer limit");
        let n = self.split.min(self.bytes.len()).min(spare.len());
        spare[..n].copy_from_slice(&self.bytes[..n]);
        buf.filled(n);
        self.bytes = &self.bytes[n..];
        n
    }
}

/// Runs the receive-head and receive-body phases over `bytes` read `split`
/// at a time, as a driver does; `close` says whether the server closes
/// after its bytes (else a read past them is a test bug).
fn exchange(bytes: &[u8], split: usize, was_head: bool) -> Result<Seen, ProtoError> {
    let mut wire = Wire { bytes, split };
    let mut buf = ReadBuffer::new(16);
    let mut reader = HeadReader::new(was_head);
    let mut interim = 0;
    let head: ResponseHead = loop {
        match reader.advance(buf.buffered())? {
            HeadEvent::Interim(n) => {
                interim += 1;
                buf.consume(n);
            }
            HeadEvent::Final(head) => {
                buf.consume(head.head_len);
                break head;
            }
            HeadEvent::NeedMore => {
                if wire.read(&mut buf) == 0 {
                    return Err(reader.end_of_input());
                }
            }
        }
    };
    let mut body = BodyReader::new(head.framing);
    let mut out = Vec::new();
    loop {
        let used = body.read_buffered(buf.buffered(), &mut |d| out.extend_from_slice(d))?;
        buf.consume(used);
        if body.is_done() {
            break;
        }
        if wire.read(&mut buf) == 0 {
            body.end_of_input()?;
        }
    }
    // What the server sent beyond the body (a read the driver never makes
    // when nothing is buffered: here, the rest of the script).
    let leftover = buf.buffered().len() + wire.bytes.len();
    Ok(Seen {
        interim,
        status: head.status,
        framing: head.framing,
        verdict: body.verdict(&head, leftover),
        body: out,
    })
}

/// `exchange` with every split: all must agree.
fn every_split(bytes: &[u8], was_head: bool) -> Result<Seen, ProtoError> {
    let first = exchange(bytes, SPLITS[0], was_head);
    for split in &SPLITS[1..] {
        assert_eq!(
            exchange(bytes, *split, was_head),
            first,
            "split {split} disagrees with one byte at a time"
        );
    }
    first
}

#[test]
fn a_content_length_response_is_read_whole_and_reusable() {
    let seen = every_split(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false).unwrap();
    assert_eq!(seen.status, 200);
    assert_eq!(seen.framing, BodyFraming::Length(5));
    assert_eq!(seen.body, b"hello");
    assert_eq!(seen.verdict, Reuse::Keep);
}

#[test]
fn a_chunked_body_is_de_framed_whatever_the_segmentation() {
    let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n1\r\n!\r\n0\r\nT: v\r\n\r\n";
    let seen = every_split(wire, false).unwrap();
    assert_eq!(seen.body, b"hello!");
    assert_eq!(seen.verdict, Reuse::Keep);
}

#[test]
fn a_close_delimited_body_ends_with_the_connection_and_closes_it() {
    let seen = every_split(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", false).unwrap();
    assert_eq!(seen.framing, BodyFraming::CloseDelimited);
    assert_eq!(seen.body, b"until the end");
    assert_eq!(seen.verdict, Reuse::Close(CloseReason::CloseDelimited));
}

#[test]
fn interim_responses_are_skipped_before_the_final_one() {
    let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
    let seen = every_split(wire, false).unwrap();
    assert_eq!(seen.interim, 2);
    assert_eq!(seen.status, 201);
    assert_eq!(seen.body, b"ok");
}

#[test]
fn more_interim_responses_than_the_limit_are_refused() {
    let mut wire = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM_RESPONSES + 1);
    wire.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(
        every_split(&wire, false),
        Err(ProtoError::TooManyInterimResponses)
    );
    let mut allowed = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM_RESPONSES);
    allowed.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(every_split(&allowed, false).unwrap().status, 200);
}

#[test]
fn a_response_that_is_not_http1_is_refused_at_its_first_wrong_byte() {
    let mut reader = HeadReader::new(false);
    assert_eq!(reader.advance(b"HTTP/1"), Ok(HeadEvent::NeedMore));
    let mut reader = HeadReader::new(false);
    assert_eq!(
        reader.advance(b"X"),
        Err(ProtoError::InvalidHead("not an HTTP/1.x status line"))
    );
    assert_eq!(
        every_split(b"\r\nHTTP/1.1 200 OK\r\n\r\n", false),
        Err(ProtoError::InvalidHead("not an HTTP/1.x status line"))
    );
}

#[test]
fn a_head_past_the_limit_is_refused_without_a_blank_line() {
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    while wire.len() < MAX_HEAD_BYTES {
        wire.extend_from_slice(b"X-Filler: 0123456789012345678901234567890123456789\r\n");
    }
    assert_eq!(exchange(&wire, 4096, false), Err(ProtoError::HeadTooLarge));
}

#[test]
fn nothing_received_is_marked_only_before_the_first_byte() {
    // The server closes at once: nothing arrived (the retry rule's mark).
    let mut reader = HeadReader::new(false);
    assert_eq!(reader.advance(b""), Ok(HeadEvent::NeedMore));
    assert!(reader.nothing_received());
    assert_eq!(reader.end_of_input(), ProtoError::NoResponse);
    assert_eq!(every_split(b"", false), Err(ProtoError::NoResponse));
    // One byte of a head is a response begun, however it ends.
    for split in SPLITS {
        assert_eq!(
            exchange(b"HTTP/1.1 200", split, false),
            Err(ProtoError::HeadCut)
        );
    }
    // An interim response consumed whole still counts as received.
    let mut reader = HeadReader::new(false);
    assert_eq!(
        reader.advance(b"HTTP/1.1 100 Continue\r\n\r\n"),
        Ok(HeadEvent::Interim(25))
    );
    assert_eq!(reader.advance(b""), Ok(HeadEvent::NeedMore));
    assert!(!reader.nothing_received());
    assert_eq!(reader.end_of_input(), ProtoError::HeadCut);
}

#[test]
fn a_whole_head_and_a_dripped_head_give_the_same_head() {
    let wire = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\nbody";
    let mut whole = HeadReader::new(false);
    let HeadEvent::Final(at_once) = whole.advance(wire).unwrap() else {
        panic!("a whole head is final at once");
    };
    let mut dripped = HeadReader::new(false);
    for end in 0..wire.len() {
        match dripped.advance(&wire[..end]).unwrap() {
            HeadEvent::NeedMore => {}
            HeadEvent::Final(head) => {
                assert_eq!(head, at_once);
                assert_eq!(end, head.head_len, "final as soon as the blank line is in");
                return;
            }
            HeadEvent::Interim(_) => panic!("no interim here"),
        }
    }
    panic!("never final");
}

#[test]
fn a_body_cut_short_names_what_arrived() {
    assert_eq!(
        every_split(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false),
        Err(ProtoError::IncompleteBody {
            received: 3,
            expected: 10
        })
    );
    assert_eq!(
        every_split(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nab",
            false
        ),
        Err(ProtoError::ChunkedBodyCut { received: 7 })
    );
    assert_eq!(
        ProtoError::IncompleteBody {
            received: 3,
            expected: 10
        }
        .to_string(),
        "peer closed connection without sending complete message body: received 3 of 10 bytes"
    );
}

#[test]
fn reuse_needs_keep_alive_a_complete_body_and_nothing_extra() {
    let close = every_split(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
        false,
    )
    .unwrap();
    assert_eq!(close.verdict, Reuse::Close(CloseReason::NotKeepAlive));
    let http10 = every_split(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false).unwrap();
    assert_eq!(http10.verdict, Reuse::Close(CloseReason::NotKeepAlive));
    let http10_kept = every_split(
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
        false,
    )
    .unwrap();
    assert_eq!(http10_kept.verdict, Reuse::Keep);
    // Both framing headers: chunked wins, the connection is never reused.
    let smuggle = every_split(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
        false,
    )
    .unwrap();
    assert_eq!(smuggle.body, b"x");
    assert_eq!(smuggle.verdict, Reuse::Close(CloseReason::NotKeepAlive));
    // A second response nobody asked for (docs/hostile.md A10).
    let extra = every_split(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n\r\n",
        false,
    )
    .unwrap();
    assert_eq!(extra.body, b"x");
    assert_eq!(extra.verdict, Reuse::Close(CloseReason::UnrequestedBytes));
    // A body left unread.
    let mut wire = ReadBuffer::new(64);
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n";
    let spare = wire.spare(64).unwrap();
    spare[..head.len()].copy_from_slice(head);
    wire.filled(head.len());
    let HeadEvent::Final(head) = HeadReader::new(false).advance(wire.buffered()).unwrap() else {
        panic!("final head expected");
    };
    let body = BodyReader::new(head.framing);
    assert_eq!(
        body.verdict(&head, 0),
        Reuse::Close(CloseReason::BodyNotRead)
    );
}

#[test]
fn bodyless_responses_have_no_body_whatever_their_headers_say() {
    let head = every_split(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true).unwrap();
    assert_eq!(head.framing, BodyFraming::Empty);
    assert_eq!(head.verdict, Reuse::Keep);
    for status in ["204 No Content", "304 Not Modified"] {
        let wire = format!("HTTP/1.1 {status}\r\nContent-Length: 5\r\n\r\n");
        let seen = every_split(wire.as_bytes(), false).unwrap();
        assert_eq!(seen.framing, BodyFraming::Empty);
        assert_eq!(seen.verdict, Reuse::Keep);
    }
}

#[test]
fn an_answer_to_a_request_cut_short_never_allows_reuse() {
    let wire = b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n";
    let HeadEvent::Final(head) = HeadReader::after_cut_request(false).advance(wire).unwrap() else {
        panic!("final head expected");
    };
    assert_eq!(head.status, 413);
    let body = BodyReader::new(head.framing);
    assert!(body.is_done());
    assert_eq!(
        body.verdict(&head, 0),
        Reuse::Close(CloseReason::NotKeepAlive)
    );
}

#[test]
fn direct_reads_count_against_the_announced_length() {
    let mut body = BodyReader::new(BodyFraming::Length(10));
    assert_eq!(body.direct_read_len(64), Some(10));
    assert_eq!(body.direct_read_len(4), Some(4));
    body.direct_read(4).unwrap();
    assert_eq!(body.content_length(), Some(6));
    assert!(!body.is_within(5) && body.is_within(6));
    assert_eq!(
        body.direct_read(0),
        Err(ProtoError::IncompleteBody {
            received: 4,
            expected: 10
        })
    );
    body.direct_read(6).unwrap();
    assert!(body.is_done());
    assert_eq!(body.direct_read_len(64), None);

    let mut until_close = BodyReader::new(BodyFraming::CloseDelimited);
    assert_eq!(until_close.direct_read_len(64), Some(64));
    until_close.direct_read(64).unwrap();
    until_close.direct_read(0).unwrap();
    assert!(until_close.is_done());
    assert_eq!(until_close.received(), 64);

    // Chunked framing always goes through the buffer.
    assert_eq!(
        BodyReader::new(BodyFraming::Chunked).direct_read_len(64),
        None
    );
}

#[test]
fn buffered_reads_into_a_small_destination_deliver_at_most_its_size() {
    let mut body = BodyReader::new(BodyFraming::Chunked);
    let mut input: &[u8] = b"a\r\n0123456789\r\n0\r\n\r\n";
    let mut out = Vec::new();
    let mut dst = [0u8; 3];
    while !body.is_done() {
        let (used, written) = body.read_buffered_into(input, &mut dst).unwrap();
        assert!(written <= dst.len());
        out.extend_from_slice(&dst[..written]);
        input = &input[used..];
    }
    assert_eq!(out, b"0123456789");
    assert!(input.is_empty());
}

/// The wire bytes of a streamed body made of `pieces`.
fn stream(framing: StreamFraming, pieces: &[&[u8]]) -> Result<Vec<u8>, ProtoError> {
    let mut writer = BodyWriter::new(framing);
    let mut out = Vec::new();
    let mut line = [0u8; CHUNK_SIZE_LINE_BYTES];
    let mut append = |frame: Frame<'_>| {
        out.extend_from_slice(frame.prefix);
        out.extend_from_slice(frame.data);
        out.extend_from_slice(frame.suffix);
        frame.last
    };
    for piece in pieces {
        assert!(!append(writer.frame(Some(piece), &mut line)?));
    }
    assert!(append(writer.frame(None, &mut line)?));
    Ok(out)
}

#[test]
fn a_streamed_body_of_unknown_size_is_chunk_coded() {
    assert_eq!(
        stream(StreamFraming::Chunked, &[b"hello", b"", &[b'x'; 26]]).unwrap(),
        [&b"5\r\nhello\r\n1a\r\n"[..], &[b'x'; 26], b"\r\n0\r\n\r\n"].concat()
    );
    // And the decoder reads back what the encoder wrote.
    let wire = stream(StreamFraming::Chunked, &[b"abc", b"defgh"]).unwrap();
    let mut response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    response.extend_from_slice(&wire);
    assert_eq!(every_split(&response, false).unwrap().body, b"abcdefgh");
}

#[test]
fn a_streamed_body_of_known_size_must_keep_its_length() {
    assert_eq!(
        stream(StreamFraming::Length(5), &[b"he", b"llo"]).unwrap(),
        b"hello"
    );
    assert_eq!(
        stream(StreamFraming::Length(4), &[b"he", b"llo"]),
        Err(ProtoError::BodyLengthMismatch {
            announced: 4,
            given: None
        })
    );
    assert_eq!(
        stream(StreamFraming::Length(6), &[b"he", b"llo"]),
        Err(ProtoError::BodyLengthMismatch {
            announced: 6,
            given: Some(5)
        })
    );
}

#[test]
fn chunk_size_lines_are_lowercase_hex() {
    let mut buf = [0u8; CHUNK_SIZE_LINE_BYTES];
    assert_eq!(chunk_size_line(1, &mut buf), b"1\r\n");
    assert_eq!(chunk_size_line(0x10000, &mut buf), b"10000\r\n");
    assert_eq!(chunk_size_line(0xabc, &mut buf), b"abc\r\n");
    assert_eq!(
        chunk_size_line(usize::MAX, &mut buf),
        b"ffffffffffffffff\r\n"
    );
}

#[test]
fn only_a_broken_write_or_a_timed_out_one_with_an_answer_waiting_reads_on() {
    assert!(answer_may_follow(SendFailure::Broken, || unreachable!()));
    assert!(answer_may_follow(SendFailure::TimedOut, || true));
    assert!(!answer_may_follow(SendFailure::TimedOut, || false));
    assert!(!answer_may_follow(SendFailure::Other, || unreachable!()));
}

#[test]
fn the_retry_rule_needs_every_condition() {
    let stale = FailedAttempt {
        reused: true,
        idempotent: true,
        retries_left: 1,
        nothing_received: true,
        timed_out: false,
        interrupted: false,
    };
    assert!(retry_on_fresh_connection(&stale));
    let refused = [
        FailedAttempt {
            reused: false,
            ..stale
        },
        FailedAttempt {
            idempotent: false,
            ..stale
        },
        FailedAttempt {
            retries_left: 0,
            ..stale
        },
        FailedAttempt {
            nothing_received: false,
            ..stale
        },
        FailedAttempt {
            timed_out: true,
            ..stale
        },
        FailedAttempt {
            interrupted: true,
            ..stale
        },
    ];
    for attempt in refused {
        assert!(!retry_on_fresh_connection(&attempt), "{attempt:?}");
    }
}

#[test]
fn a_body_of_announced_length_is_complete_once_every_byte_is_framed() {
    let mut line = [0u8; CHUNK_SIZE_LINE_BYTES];
    let mut sized = BodyWriter::new(StreamFraming::Length(5));
    assert!(!sized.is_complete());
    sized.frame(Some(b"abc"), &mut line).unwrap();
    assert!(!sized.is_complete());
    sized.frame(Some(b"de"), &mut line).unwrap();
    assert!(sized.is_complete());
    let mut chunked = BodyWriter::new(StreamFraming::Chunked);
    chunked.frame(Some(b"abcde"), &mut line).unwrap();
    assert!(!chunked.is_complete(), "a chunked body owes its last chunk");
}

#[test]
fn a_chunked_body_ends_with_its_trailer_fields() {
    let mut writer = BodyWriter::new(StreamFraming::Chunked);
    let mut line = [0u8; CHUNK_SIZE_LINE_BYTES];
    let mut end = Vec::new();
    let frame = writer.frame(Some(b"abc"), &mut line).unwrap();
    let mut wire = [frame.prefix, frame.data, frame.suffix].concat();
    let last = writer
        .finish_with_trailers(&[("X-Foo", "bar"), ("X-Sum", "1 2")], &mut end, &mut line)
        .unwrap();
    assert!(last.last);
    wire.extend_from_slice(last.suffix);
    assert_eq!(
        wire,
        b"3\r\nabc\r\n0\r\nX-Foo: bar\r\nX-Sum: 1 2\r\n\r\n".to_vec()
    );
    // The decoder reads back what the encoder wrote.
    let mut response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    response.extend_from_slice(&wire);
    assert_eq!(every_split(&response, false).unwrap().body, b"abc");
}

#[test]
fn trailer_fields_are_checked_and_need_chunked_coding() {
    let mut line = [0u8; CHUNK_SIZE_LINE_BYTES];
    let mut end = Vec::new();
    let mut chunked = BodyWriter::new(StreamFraming::Chunked);
    let none = chunked
        .finish_with_trailers(&[], &mut end, &mut line)
        .unwrap();
    assert_eq!(none.suffix, b"0\r\n\r\n");
    let mut chunked = BodyWriter::new(StreamFraming::Chunked);
    assert_eq!(
        chunked.finish_with_trailers(&[("X-A", "b\r\nHost: evil")], &mut end, &mut line),
        Err(ProtoError::InvalidHeaderValue("X-A".to_owned()))
    );
    assert_eq!(
        chunked.finish_with_trailers(&[("bad name", "x")], &mut end, &mut line),
        Err(ProtoError::InvalidHeaderName("bad name".to_owned()))
    );
    let mut sized = BodyWriter::new(StreamFraming::Length(0));
    assert_eq!(
        sized.finish_with_trailers(&[("X-A", "b")], &mut end, &mut line),
        Err(ProtoError::TrailersNeedChunked)
    );
}

#[test]
fn a_request_that_asks_to_close_never_allows_reuse() {
    let request: &[(&str, &str)] = &[("User-Agent", "t"), ("Connection", "TE, close")];
    assert!(nodelay_proto::request_closes(request));
    assert!(!nodelay_proto::request_closes(&[(
        "Connection",
        "keep-alive, closed"
    )]));
    assert!(!nodelay_proto::request_closes(&[("X-Connection", "close")]));
    // The server offers to keep the connection; the request's own
    // Connection: close wins.
    let wire = b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok";
    let verdict = |mut reader: HeadReader| {
        let HeadEvent::Final(head) = reader.advance(wire).unwrap() else {
            panic!("final head expected");
        };
        let mut body = BodyReader::new(head.framing);
        let used = body
            .read_buffered(&wire[head.head_len..], &mut |_| {})
            .unwrap();
        assert_eq!(used, 2);
        body.verdict(&head, 0)
    };
    assert_eq!(verdict(HeadReader::new(false)), Reuse::Keep);
    assert_eq!(
        verdict(HeadReader::after_closing_request(false)),
        Reuse::Close(CloseReason::NotKeepAlive)
    );
}
