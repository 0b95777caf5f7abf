//! Byte-level tests of the push decoder: every coding fed whole, in two pieces
//! split at every byte, and byte by byte; the guards; corrupt, truncated and
//! trailing input (docs/hostile.md B14-B16).

use std::io::Write;

use super::pieces::{Pieces, Step};
use super::*;
use crate::error::ErrorKind;

const MIB: usize = 1024 * 1024;

fn text(n: usize) -> Vec<u8> {
    b"the quick brown fox jumps over the lazy dog 0123456789\n"
        .iter()
        .copied()
        .cycle()
        .take(n)
        .collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A gzip member whose header carries a file name and a comment, so a split
/// can fall inside the variable-length part of the header.
fn gzip_named(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::GzBuilder::new()
        .filename("body.txt")
        .comment("a comment")
        .write(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        e.write_all(data).unwrap();
    }
    out
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

/// `size` zero bytes as one gzip member, built without compressing them all:
/// a MiB of zeros compressed with a full flush is a byte-aligned, history-free
/// run of deflate blocks, so repeating it is the stream of repeated MiBs. The
/// trailer's CRC is left zero (the guards stop long before it).
fn gzip_of_zeros(size: usize) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = Vec::with_capacity(8192);
    c.compress_vec(&vec![0; MIB], &mut block, flate2::FlushCompress::Full)
        .unwrap();
    let mut end = Vec::with_capacity(64);
    c.compress_vec(&[], &mut end, flate2::FlushCompress::Finish)
        .unwrap();
    let mut out = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff".to_vec();
    for _ in 0..size / MIB {
        out.extend_from_slice(&block);
    }
    out.extend_from_slice(&end);
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&(size as u32).to_le_bytes());
    out
}

/// Decodes `pieces` fed one after the other, taking the output as it comes.
fn push(codings: &[Coding], pieces: &[&[u8]], max: u64) -> Result<Vec<u8>, crate::Error> {
    let mut decoder = Decoder::new(codings, max)?;
    let mut out = Vec::new();
    for piece in pieces {
        decoder.feed(piece)?;
        out.extend_from_slice(&decoder.take_all());
    }
    decoder.finish()?;
    out.extend_from_slice(&decoder.take_all());
    Ok(out)
}

/// Feeds `encoded` whole, in two pieces split at every byte, and byte by
/// byte; each must give `expected`.
fn decodes_at_every_split(codings: &[Coding], encoded: &[u8], expected: &[u8]) {
    assert_eq!(
        decode(codings, encoded.to_vec(), 1 << 30).unwrap(),
        expected
    );
    for split in 0..=encoded.len() {
        let (a, b) = encoded.split_at(split);
        let out = push(codings, &[a, b], 1 << 30)
            .unwrap_or_else(|e| panic!("{codings:?} split at {split}: {e}"));
        assert_eq!(out, expected, "{codings:?} split at {split}");
    }
    let bytes: Vec<&[u8]> = encoded.chunks(1).collect();
    assert_eq!(push(codings, &bytes, 1 << 30).unwrap(), expected);
}

#[test]
fn gzip_split_at_every_byte_boundary() {
    let data = text(5000);
    decodes_at_every_split(&[Coding::Gzip], &gzip(&data), &data);
    decodes_at_every_split(&[Coding::Gzip], &gzip_named(&data), &data);
}

#[test]
fn multi_member_gzip_decodes_every_member_at_every_split() {
    let mut body = gzip(b"first,");
    body.extend_from_slice(&gzip_named(b"second,"));
    body.extend_from_slice(&gzip(b""));
    body.extend_from_slice(&gzip(b"third"));
    decodes_at_every_split(&[Coding::Gzip], &body, b"first,second,third");
}

#[test]
fn deflate_as_zlib_or_raw_at_every_split() {
    let data = text(3000);
    decodes_at_every_split(&[Coding::Deflate], &zlib(&data), &data);
    decodes_at_every_split(&[Coding::Deflate], &raw_deflate(&data), &data);
}

#[test]
fn brotli_and_zstd_at_every_split() {
    let data = text(3000);
    decodes_at_every_split(&[Coding::Brotli], &brotli(&data), &data);
    decodes_at_every_split(&[Coding::Zstd], &zstd(&data), &data);
    let mut two_frames = zstd(b"one,");
    two_frames.extend_from_slice(&zstd(b"two"));
    decodes_at_every_split(&[Coding::Zstd], &two_frames, b"one,two");
}

#[test]
fn stacked_codings_are_undone_in_reverse_order() {
    let data = text(2000);
    // `Content-Encoding: deflate, gzip, br, zstd`: applied in that order.
    let encoded = zstd(&brotli(&gzip(&zlib(&data))));
    let codings = [Coding::Deflate, Coding::Gzip, Coding::Brotli, Coding::Zstd];
    decodes_at_every_split(&codings, &encoded, &data);
}

#[test]
fn what_has_arrived_is_decoded_at_once() {
    // Each coding's stream of a first part, flushed (or a whole gzip member):
    // all of the first part is decoded output before anything else arrives.
    let first = text(2000);
    for (coding, encode) in encoders() {
        let encoded = encode(&first);
        let mut decoder = Decoder::new(&[coding], 1 << 30).unwrap();
        decoder.feed(&encoded).unwrap();
        assert_eq!(decoder.pending(), first.len(), "{coding:?}");
    }
}

#[test]
fn an_empty_body_decodes_to_nothing() {
    assert_eq!(decode(&[Coding::Gzip], Vec::new(), 1 << 30).unwrap(), b"");
    assert_eq!(push(&[Coding::Zstd], &[], 1 << 30).unwrap(), b"");
    assert_eq!(push(&[Coding::Deflate], &[b""], 1 << 30).unwrap(), b"");
}

#[test]
fn identity_is_not_copied() {
    let raw = text(1000);
    let at = raw.as_ptr();
    let out = decode(&[], raw, 1 << 30).unwrap();
    assert_eq!(out.as_ptr(), at);
}

fn decoding_error(result: Result<Vec<u8>, crate::Error>) -> String {
    let e = result.expect_err("a decoding error");
    assert_eq!(e.kind(), ErrorKind::Decoding, "{e}");
    e.message().to_string()
}

#[test]
fn bomb_by_size_stops_at_the_cap() {
    let encoded = gzip(&vec![b'a'; 2 * MIB]);
    let message = decoding_error(decode(&[Coding::Gzip], encoded.clone(), MIB as u64));
    assert!(
        message.contains("exceeds the limit of 1048576 bytes"),
        "{message}"
    );
    // Streamed, the decoder holds no more than the cap.
    let mut decoder = Decoder::new(&[Coding::Gzip], MIB as u64).unwrap();
    let e = encoded
        .chunks(FEED_SLICE_BYTES)
        .try_for_each(|piece| decoder.feed(piece))
        .unwrap_err();
    assert!(e.message().contains("exceeds the limit"), "{e}");
    assert!(decoder.pending() <= MIB);
}

#[test]
fn bomb_by_ratio_stops_past_the_floor() {
    // 32 MiB of zeros in ~32 KiB: about 1030:1.
    let bomb = gzip_of_zeros(32 * MIB);
    let message = decoding_error(decode(&[Coding::Gzip], bomb.clone(), 1 << 30));
    assert!(message.contains("ratio above 1000:1"), "{message}");
    let pieces: Vec<&[u8]> = bomb.chunks(FEED_SLICE_BYTES).collect();
    let message = decoding_error(push(&[Coding::Gzip], &pieces, 1 << 30));
    assert!(message.contains("ratio"), "{message}");
}

#[test]
fn nested_bomb_is_measured_against_the_bytes_received() {
    // Each layer alone is under 1000:1; together far above.
    let bomb = gzip(&gzip(&vec![0; 20 * MIB]));
    assert!(bomb.len() < 64 * 1024);
    let message = decoding_error(decode(&[Coding::Gzip, Coding::Gzip], bomb, 1 << 30));
    assert!(message.contains("ratio"), "{message}");
}

#[test]
fn compressible_body_below_the_floor_decodes() {
    let body = vec![0; 8 * MIB];
    let out = decode(&[Coding::Gzip], gzip(&body), 1 << 30).unwrap();
    assert_eq!(out.len(), body.len());
}

#[test]
fn too_many_layers_and_unknown_codings() {
    let six = ["gzip, gzip, gzip", "gzip, identity, gzip, gzip"];
    let e = parse_codings(six.iter().map(|v| v.as_bytes())).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Decoding);
    assert_eq!(e.message(), "more than 5 content codings");
    let five = parse_codings(["gzip, gzip, Identity, gzip, x-gzip, GZIP".as_bytes()].into_iter());
    assert_eq!(five.unwrap().unwrap().len(), 5);
    // An unknown coding: the body is delivered as received.
    let unknown = parse_codings(["gzip, x-custom".as_bytes()].into_iter()).unwrap();
    assert_eq!(unknown, None);
    let codings = parse_codings([" deflate ,br,\tzstd".as_bytes()].into_iter()).unwrap();
    assert_eq!(
        codings.unwrap(),
        [Coding::Deflate, Coding::Brotli, Coding::Zstd]
    );
}

/// An encoder of test data.
type Encode = fn(&[u8]) -> Vec<u8>;

fn encoders() -> [(Coding, Encode); 5] {
    [
        (Coding::Gzip, gzip),
        (Coding::Deflate, zlib),
        (Coding::Deflate, raw_deflate),
        (Coding::Brotli, brotli),
        (Coding::Zstd, zstd),
    ]
}

#[test]
fn truncated_streams_fail_when_the_body_ends() {
    let data = text(20_000);
    for (coding, encode) in encoders() {
        let encoded = encode(&data);
        for cut in [1, encoded.len() / 2, encoded.len() - 1] {
            let message = decoding_error(decode(&[coding], encoded[..cut].to_vec(), 1 << 30));
            assert!(
                message.starts_with(&format!("invalid {coding:?} body")),
                "{message}"
            );
            let message = decoding_error(push(&[coding], &[&encoded[..cut]], 1 << 30));
            assert!(message.starts_with("invalid"), "{message}");
        }
    }
}

#[test]
fn corrupt_streams_fail() {
    for (coding, body) in [
        (Coding::Gzip, b"\x1f\x8b not really compressed".to_vec()),
        (Coding::Gzip, b"this is not gzip at all".to_vec()),
        (Coding::Deflate, vec![0xff; 64]),
        (Coding::Brotli, vec![0xff; 64]),
        (
            Coding::Zstd,
            [&b"\x28\xb5\x2f\xfd"[..], &[0xff; 60]].concat(),
        ),
    ] {
        decoding_error(decode(&[coding], body, 1 << 30));
    }
    let good = gzip(&text(12_000));
    let mut bad_crc = good.clone();
    let at = bad_crc.len() - 8;
    bad_crc[at..at + 4].copy_from_slice(&[0; 4]);
    decoding_error(decode(&[Coding::Gzip], bad_crc, 1 << 30));
    let mut corrupt_second = gzip(b"first");
    corrupt_second.extend_from_slice(b"\x1f\x8b\x08garbage");
    decoding_error(decode(&[Coding::Gzip], corrupt_second, 1 << 30));
}

#[test]
fn trailing_garbage_fails_gzip_and_zstd_and_is_ignored_after_the_others() {
    // Gzip and zstd read what follows as another member or frame; zlib, raw
    // deflate and brotli streams end by themselves and what follows is
    // dropped, as a reader stops at their end.
    let data = text(2300);
    for (coding, encode) in encoders() {
        for tail in [&b"garbage!"[..], &[0; 8], &[0]] {
            let mut body = encode(&data);
            body.extend_from_slice(tail);
            let whole = decode(&[coding], body.clone(), 1 << 30);
            let split = push(
                &[coding],
                &[&body[..body.len() - 1], &body[body.len() - 1..]],
                1 << 30,
            );
            match coding {
                Coding::Gzip | Coding::Zstd => {
                    decoding_error(whole);
                    decoding_error(split);
                }
                Coding::Deflate | Coding::Brotli => {
                    assert_eq!(whole.unwrap(), data, "{coding:?}");
                    assert_eq!(split.unwrap(), data, "{coding:?}");
                }
            }
        }
    }
}

/// Drives [`Pieces`] over scripted raw reads: `None` is "nothing arrived
/// yet" (the driver hands out what it has), `Some(b"")` the end of the body.
fn read_piece(
    pieces: &mut Pieces,
    reads: &mut Vec<Option<&[u8]>>,
    max: usize,
    min: usize,
) -> Vec<u8> {
    let mut dst = vec![0; max];
    let mut filled = 0;
    while pieces.step(&mut dst, &mut filled, min).unwrap() == Step::Read {
        if filled > 0 && reads.first().is_some_and(Option::is_none) {
            reads.remove(0);
            break;
        }
        let raw = reads.remove(0).expect("a read that waits has bytes");
        let target = pieces.read_target(&mut dst, filled);
        target[..raw.len()].copy_from_slice(raw);
        pieces.got(raw.len(), &mut filled);
    }
    dst.truncate(filled);
    dst
}

#[test]
fn a_piece_is_what_has_arrived() {
    // Identity: a piece grows towards `min` only with bytes already there.
    let mut pieces = Pieces::new(&[], 1 << 30).unwrap();
    let mut reads: Vec<Option<&[u8]>> =
        vec![Some(b"ab"), Some(b"cd"), None, Some(b"ef"), Some(b"")];
    assert_eq!(read_piece(&mut pieces, &mut reads, 16, 8), b"abcd");
    assert_eq!(read_piece(&mut pieces, &mut reads, 16, 8), b"ef");
    assert_eq!(read_piece(&mut pieces, &mut reads, 16, 8), b"");
    // Decoded: the same, with the gzip stream split mid-header.
    let encoded = gzip(b"hello, world");
    let (a, b) = encoded.split_at(5);
    let mut pieces = Pieces::new(&[Coding::Gzip], 1 << 30).unwrap();
    let mut reads: Vec<Option<&[u8]>> = vec![Some(a), Some(b), Some(b"")];
    assert_eq!(read_piece(&mut pieces, &mut reads, 5, 5), b"hello");
    assert_eq!(read_piece(&mut pieces, &mut reads, 64, 64), b", world");
    assert_eq!(read_piece(&mut pieces, &mut reads, 64, 64), b"");
}

#[test]
fn raw_read_counts_the_bytes_as_received() {
    // Decoded: the count is of the gzip stream, at each piece, not of what it decodes to.
    let body = vec![b'x'; 10_000];
    let encoded = gzip(&body);
    let (a, b) = encoded.split_at(encoded.len() / 2);
    let mut pieces = Pieces::new(&[Coding::Gzip], 1 << 30).unwrap();
    assert_eq!(pieces.raw_read(), 0);
    let mut reads: Vec<Option<&[u8]>> = vec![Some(a), Some(b), Some(b"")];
    let mut decoded = Vec::new();
    let mut counts = Vec::new();
    loop {
        let piece = read_piece(&mut pieces, &mut reads, 1000, 1);
        counts.push(pieces.raw_read());
        if piece.is_empty() {
            break;
        }
        decoded.extend(piece);
    }
    assert_eq!(decoded, body);
    assert!(counts.windows(2).all(|w| w[0] <= w[1]));
    assert!(counts[0] >= a.len() as u64);
    assert_eq!(pieces.raw_read(), encoded.len() as u64);
    // As received: the count is the body's size.
    let mut pieces = Pieces::new(&[], 1 << 30).unwrap();
    let mut reads: Vec<Option<&[u8]>> = vec![Some(b"abc"), Some(b"de"), Some(b"")];
    assert_eq!(read_piece(&mut pieces, &mut reads, 16, 16), b"abcde");
    assert_eq!(read_piece(&mut pieces, &mut reads, 16, 16), b"");
    assert_eq!(pieces.raw_read(), 5);
}
