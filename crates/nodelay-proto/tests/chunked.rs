//! The chunked decoder (RFC 9112 §7.1): same output for any split of the input,
//! strict framing (docs/hostile.md A4), floods stopped exactly at the limit (A5),
//! and a consumed count that never eats the next response.

use nodelay_proto::limits::{MAX_CHUNK_EXTENSION_BYTES, MAX_CHUNK_SIZE_DIGITS, MAX_TRAILER_BYTES};
use nodelay_proto::{trailer_fields, BodyFraming, BodyReader, ChunkedDecoder, ProtoError};

/// What feeding a message produced.
#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    body: Vec<u8>,
    /// Bytes of the input that belong to the message.
    consumed: usize,
    done: bool,
}

/// Feeds `input` cut at `cuts` (ascending offsets), stopping once the decoder
/// is done, as a driver does. Checks the invariants every call must keep.
fn feed_cut(input: &[u8], cuts: &[usize]) -> Result<Decoded, ProtoError> {
    let mut decoder = ChunkedDecoder::new();
    let mut body = Vec::new();
    let mut consumed = 0;
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(input.len());
    let mut start = 0;
    for end in bounds {
        let piece = &input[start..end];
        let used = decoder.decode(piece, &mut |data| {
            assert!(!data.is_empty(), "the sink is never called with nothing");
            body.extend_from_slice(data);
        })?;
        assert!(used <= piece.len());
        consumed += used;
        if decoder.is_done() {
            return Ok(Decoded {
                body,
                consumed,
                done: true,
            });
        }
        assert_eq!(
            used,
            piece.len(),
            "an unfinished message consumes all it is given"
        );
        start = end;
    }
    Ok(Decoded {
        body,
        consumed,
        done: false,
    })
}

fn feed(input: &[u8]) -> Result<Decoded, ProtoError> {
    feed_cut(input, &[])
}

fn byte_by_byte(input: &[u8]) -> Result<Decoded, ProtoError> {
    let cuts: Vec<usize> = (1..input.len()).collect();
    feed_cut(input, &cuts)
}

/// Feeds one byte at a time and returns the offset of the byte that failed.
fn failing_offset(input: &[u8]) -> Option<(usize, ProtoError)> {
    let mut decoder = ChunkedDecoder::new();
    for (i, b) in input.iter().enumerate() {
        if let Err(e) = decoder.decode(std::slice::from_ref(b), &mut |_| {}) {
            return Some((i, e));
        }
    }
    None
}

#[track_caller]
fn invalid(input: &[u8]) -> ProtoError {
    let whole = feed(input).expect_err("must be refused");
    let split = byte_by_byte(input).expect_err("must be refused byte by byte too");
    assert_eq!(whole, split, "same error whatever the split");
    assert!(matches!(whole, ProtoError::InvalidChunk(_)), "{whole:?}");
    whole
}

const MESSAGE: &[u8] = b"5;name=value\r\nhello\r\n\
                         6 ; ext ;other=\"quoted; \\\" value\"\r\n world\r\n\
                         A\r\n0123456789\r\n\
                         1a\r\n\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n!!\r\n\
                         0;last=yes\r\nTrailer-One: x\r\nTrailer-Two: y\r\n\r\n";
const BODY: &[u8] = b"hello world0123456789\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n!!";
const NEXT: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

#[test]
fn decodes_extensions_trailers_and_framing_lookalikes_in_data() {
    let got = feed(MESSAGE).unwrap();
    assert_eq!(
        got,
        Decoded {
            body: BODY.to_vec(),
            consumed: MESSAGE.len(),
            done: true
        }
    );
}

/// The trailer fields a chunked body ends with, as the body phase keeps them
/// when the body is fed in pieces cut at every offset.
fn trailers_of(message: &[u8]) -> Vec<(String, String)> {
    let mut kept = None;
    for cut in 0..=message.len() {
        let mut reader = BodyReader::new(BodyFraming::Chunked);
        let mut used = 0;
        for piece in [&message[..cut], &message[cut..]] {
            used += reader.read_buffered(piece, &mut |_| {}).unwrap();
        }
        assert!(reader.is_done() && used == message.len(), "cut at {cut}");
        let lines = reader.take_trailers();
        let fields: Vec<(String, String)> = trailer_fields(&lines)
            .map(|(n, v)| {
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                (text(n), text(v))
            })
            .collect();
        assert_eq!(
            kept.get_or_insert_with(|| fields.clone()),
            &fields,
            "cut at {cut}"
        );
    }
    kept.unwrap_or_default()
}

#[test]
fn trailer_fields_are_kept_in_received_order() {
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        trailers_of(MESSAGE),
        pairs(&[("Trailer-One", "x"), ("Trailer-Two", "y")])
    );
    // Whitespace around a value goes; an empty value stays a field.
    assert_eq!(
        trailers_of(b"1\r\na\r\n0\r\nX-A:  Bar \t\r\nX-E:\r\nX-A: Baz\r\n\r\n"),
        pairs(&[("X-A", "Bar"), ("X-E", ""), ("X-A", "Baz")])
    );
    // Lines that are not fields are left out, the fields around them kept.
    assert_eq!(
        trailers_of(b"0\r\nno colon\r\n: no name\r\nX B: space\r\n folded\r\nX-C: Foo\r\n\r\n"),
        pairs(&[("X-C", "Foo")])
    );
    // No trailers: nothing kept.
    assert_eq!(trailers_of(b"1\r\na\r\n0\r\n\r\n"), pairs(&[]));
}

#[test]
fn every_single_split_gives_the_same_result() {
    let mut input = MESSAGE.to_vec();
    input.extend_from_slice(NEXT);
    let expected = Decoded {
        body: BODY.to_vec(),
        consumed: MESSAGE.len(),
        done: true,
    };
    for cut in 0..=input.len() {
        assert_eq!(feed_cut(&input, &[cut]).unwrap(), expected, "cut at {cut}");
    }
}

#[test]
fn every_pair_of_splits_gives_the_same_result() {
    let expected = Decoded {
        body: BODY.to_vec(),
        consumed: MESSAGE.len(),
        done: true,
    };
    for a in 0..=MESSAGE.len() {
        for b in a..=MESSAGE.len() {
            assert_eq!(
                feed_cut(MESSAGE, &[a, b]).unwrap(),
                expected,
                "cuts at {a} and {b}"
            );
        }
    }
}

#[test]
fn byte_by_byte_gives_the_same_result() {
    let mut input = MESSAGE.to_vec();
    input.extend_from_slice(NEXT);
    let got = byte_by_byte(&input).unwrap();
    assert_eq!(
        got,
        Decoded {
            body: BODY.to_vec(),
            consumed: MESSAGE.len(),
            done: true
        }
    );
}

#[test]
fn consumed_stops_exactly_at_the_end_of_the_message() {
    let mut decoder = ChunkedDecoder::new();
    let mut input = b"3\r\nabc\r\n0\r\n\r\n".to_vec();
    let end = input.len();
    input.extend_from_slice(NEXT);
    let mut body = Vec::new();
    let used = decoder
        .decode(&input, &mut |d| body.extend_from_slice(d))
        .unwrap();
    assert_eq!(used, end);
    assert_eq!(
        &input[used..],
        NEXT,
        "the rest belongs to the next response"
    );
    assert!(decoder.is_done());
    assert_eq!(body, b"abc");
    // A finished decoder takes nothing more.
    assert_eq!(
        decoder
            .decode(NEXT, &mut |_| panic!("no data after the end"))
            .unwrap(),
        0
    );
    assert!(decoder.is_done());
}

#[test]
fn not_done_until_the_final_crlf() {
    let msg = b"0\r\nA: b\r\n\r\n";
    let mut decoder = ChunkedDecoder::default();
    for (i, b) in msg.iter().enumerate() {
        assert!(!decoder.is_done(), "done too early, before byte {i}");
        assert_eq!(
            decoder
                .decode(std::slice::from_ref(b), &mut |_| {})
                .unwrap(),
            1
        );
    }
    assert!(decoder.is_done());
}

#[test]
fn empty_input_consumes_nothing() {
    let mut decoder = ChunkedDecoder::new();
    assert_eq!(decoder.decode(b"", &mut |_| {}).unwrap(), 0);
    assert!(!decoder.is_done());
}

#[test]
fn hex_sizes_in_any_case_and_with_leading_zeros() {
    let data = vec![b'x'; 0xaf];
    for size in ["af", "AF", "aF", "00af", "00000000000000af"] {
        let mut msg = format!("{size}\r\n").into_bytes();
        msg.extend_from_slice(&data);
        msg.extend_from_slice(b"\r\n0\r\n\r\n");
        assert_eq!(feed(&msg).unwrap().body, data, "size {size}");
    }
    assert_eq!("00000000000000af".len(), MAX_CHUNK_SIZE_DIGITS);
}

#[test]
fn sixteen_hex_digits_is_a_valid_size_line() {
    // u64::MAX fits; only the data is missing, so the decoder keeps waiting.
    let got = feed(b"ffffffffffffffff\r\nabc").unwrap();
    assert_eq!(
        got,
        Decoded {
            body: b"abc".to_vec(),
            consumed: 21,
            done: false
        }
    );
}

#[test]
fn bws_before_an_extension_is_accepted() {
    for line in ["5 ;a", "5\t;a", "5 \t ;a=b", "5;", "5;a;b=c;d=\"e\""] {
        let msg = format!("{line}\r\nhello\r\n0\r\n\r\n");
        assert_eq!(feed(msg.as_bytes()).unwrap().body, b"hello", "{line:?}");
    }
}

// ---------------------------------------------------------------- A4: bad sizes

#[test]
fn a4_bad_chunk_sizes_are_refused() {
    for msg in [
        &b"-1\r\n"[..],
        b"+5\r\nhello\r\n0\r\n\r\n",
        b"00000000000000001\r\nx\r\n0\r\n\r\n",
        b"10000000000000000\r\n",
        b"1 0\r\n",
        b"1\t0\r\n",
        b" 5\r\nhello\r\n0\r\n\r\n",
        b"5 \r\nhello\r\n0\r\n\r\n",
        b"zz\r\n",
        b"5z\r\n",
        b"0x5\r\nhello\r\n",
        b"\r\n",
        b";ext\r\n",
        b"5\nhello\r\n0\r\n\r\n",
        b"5\r\rhello\r\n",
        b"5\r\nhello\n0\r\n\r\n",
        b"5\r\nhello\r0\r\n\r\n",
        b"5\r\nhello\r\n0\n\r\n",
        b"5\r\nhello\r\n0\r\n\n",
        b"5\r\nhello\r\n0\r\nA: b\n\r\n",
        b"5\r\nhello\r\n0\r\nA: b\r\r\n",
        b"5;a\nhello\r\n",
        b"5;a\0b\r\nhello\r\n",
        b"0\r\nA: \0\r\n\r\n",
        b"0\r\n\rx",
    ] {
        invalid(msg);
    }
}

#[test]
fn a4_data_longer_than_its_size_is_refused() {
    assert_eq!(
        invalid(b"3\r\nhello\r\n0\r\n\r\n"),
        ProtoError::InvalidChunk("chunk data longer than its size")
    );
    // Exactly one byte too many.
    invalid(b"3\r\nabcd\r\n0\r\n\r\n");
}

#[test]
fn a4_data_shorter_than_its_size_is_refused_once_framing_follows() {
    // `5` announced, `abc\r\n` then the next size line: CR LF are data, then
    // `0\r` ends the chunk with `0` where CR must be.
    invalid(b"5\r\nabc\r\n0\r\n\r\n");
}

#[test]
fn overflow_is_caught_at_the_seventeenth_digit() {
    let msg = b"11111111111111111\r\n";
    let (offset, e) = failing_offset(msg).expect("refused");
    assert_eq!(
        offset, MAX_CHUNK_SIZE_DIGITS,
        "the first digit over the limit fails"
    );
    assert!(matches!(e, ProtoError::InvalidChunk(_)));
}

// ---------------------------------------------------------------- A5: floods

#[test]
fn a5_extension_limit_is_exact_in_one_chunk() {
    let at_limit = format!(
        "1;{}\r\nx\r\n0\r\n\r\n",
        "e".repeat(MAX_CHUNK_EXTENSION_BYTES)
    );
    assert_eq!(feed(at_limit.as_bytes()).unwrap().body, b"x");
    let over = format!(
        "1;{}\r\nx\r\n0\r\n\r\n",
        "e".repeat(MAX_CHUNK_EXTENSION_BYTES + 1)
    );
    assert_eq!(
        feed(over.as_bytes()).unwrap_err(),
        ProtoError::ChunkExtensionsTooLarge
    );
    let (offset, e) = failing_offset(over.as_bytes()).unwrap();
    assert_eq!(e, ProtoError::ChunkExtensionsTooLarge);
    assert_eq!(
        offset,
        2 + MAX_CHUNK_EXTENSION_BYTES,
        "fails on the first byte over the limit"
    );
}

#[test]
fn a5_extension_limit_counts_the_whole_message() {
    // Many small chunks, each with a small extension: the budget is per message.
    let per_chunk = 1024;
    let chunks = MAX_CHUNK_EXTENSION_BYTES / per_chunk;
    let ext = "e".repeat(per_chunk);
    let mut at_limit = String::new();
    for _ in 0..chunks {
        at_limit.push_str(&format!("1;{ext}\r\nx\r\n"));
    }
    let over = format!("{at_limit}1;e\r\nx\r\n0\r\n\r\n");
    at_limit.push_str("0\r\n\r\n");
    assert_eq!(feed(at_limit.as_bytes()).unwrap().body, vec![b'x'; chunks]);
    assert_eq!(
        feed(over.as_bytes()).unwrap_err(),
        ProtoError::ChunkExtensionsTooLarge
    );
    assert_eq!(
        byte_by_byte(over.as_bytes()).unwrap_err(),
        ProtoError::ChunkExtensionsTooLarge
    );
}

#[test]
fn a5_endless_extension_flood_fails_at_the_limit_with_flat_memory() {
    // 64 MiB of extension fed in 64 KiB reads: the decoder stops at 16 KiB and
    // its state is a few words whatever came before.
    let mut decoder = ChunkedDecoder::new();
    assert!(std::mem::size_of::<ChunkedDecoder>() <= 64);
    let mut fed = 0;
    let first: &[u8] = b"1;";
    decoder.decode(first, &mut |_| {}).unwrap();
    let block = vec![b'e'; 64 * 1024];
    let err = loop {
        match decoder.decode(&block, &mut |_| {}) {
            Ok(n) => fed += n,
            Err(e) => break e,
        }
        assert!(fed < 64 * 1024 * 1024, "flood never stopped");
    };
    assert_eq!(err, ProtoError::ChunkExtensionsTooLarge);
    assert_eq!(fed, 0, "refused within the first read after the limit");
}

#[test]
fn a5_trailer_limit_is_exact() {
    // Trailer bytes are the trailer lines without their CRLF.
    let line = format!("X: {}", "t".repeat(MAX_TRAILER_BYTES - 3));
    assert_eq!(line.len(), MAX_TRAILER_BYTES);
    let at_limit = format!("0\r\n{line}\r\n\r\n");
    assert!(feed(at_limit.as_bytes()).unwrap().done);
    let over = format!("0\r\n{line}t\r\n\r\n");
    assert_eq!(
        feed(over.as_bytes()).unwrap_err(),
        ProtoError::TrailersTooLarge
    );
    let (offset, e) = failing_offset(over.as_bytes()).unwrap();
    assert_eq!(e, ProtoError::TrailersTooLarge);
    assert_eq!(offset, 3 + MAX_TRAILER_BYTES);
}

#[test]
fn a5_many_trailer_lines_share_one_budget() {
    let line = format!("T: {}", "t".repeat(1024 - 3));
    let lines = MAX_TRAILER_BYTES / 1024;
    let mut at_limit = String::from("2\r\nok\r\n0\r\n");
    for _ in 0..lines {
        at_limit.push_str(&line);
        at_limit.push_str("\r\n");
    }
    let over = format!("{at_limit}U\r\n\r\n");
    at_limit.push_str("\r\n");
    let got = feed(at_limit.as_bytes()).unwrap();
    assert!(got.done);
    assert_eq!(got.body, b"ok");
    assert_eq!(
        feed(over.as_bytes()).unwrap_err(),
        ProtoError::TrailersTooLarge
    );
}

#[test]
fn a5_endless_trailer_flood_fails_at_the_limit() {
    let mut decoder = ChunkedDecoder::new();
    decoder.decode(b"0\r\n", &mut |_| {}).unwrap();
    let block = b"X-Trailer: flood\r\n".repeat(4096);
    let mut rounds = 0;
    let err = loop {
        match decoder.decode(&block, &mut |_| {}) {
            Ok(_) => rounds += 1,
            Err(e) => break e,
        }
        assert!(rounds < 1000, "flood never stopped");
    };
    assert_eq!(err, ProtoError::TrailersTooLarge);
    assert_eq!(
        rounds, 0,
        "one 72 KiB read of trailers is already over the limit"
    );
}

#[test]
fn large_chunk_data_passes_through_in_few_sink_calls() {
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut msg = format!("{:x}\r\n", data.len()).into_bytes();
    msg.extend_from_slice(&data);
    msg.extend_from_slice(b"\r\n0\r\n\r\n");
    let mut decoder = ChunkedDecoder::new();
    let mut calls = 0;
    let mut body = Vec::new();
    let used = decoder
        .decode(&msg, &mut |d| {
            calls += 1;
            body.extend_from_slice(d);
        })
        .unwrap();
    assert_eq!(used, msg.len());
    assert_eq!(
        calls, 1,
        "a chunk inside one input slice reaches the sink in one call"
    );
    assert_eq!(body, data);
}
