//! The `response_parser` fuzz target: nodelay-proto's response side driven the
//! way the engine's drivers drive it (crates/nodelay-core/src/exchange.rs:
//! `HeadReader` fed the whole buffer after every read), over arbitrary bytes
//! cut into arbitrary reads.
//!
//! Input layout (shared by libFuzzer and the stable fallback, and by the seed
//! corpus in `corpus/response_parser/`):
//!
//! ```text
//! byte 0       flags: bit 0 = the request was HEAD,
//!                     bit 1 = body only (the payload is a chunked body, no head),
//!                     bit 2 = big reads (split sizes × 64)
//! bytes 1..=4  read sizes: each read takes `size + 1` bytes, cycling
//! bytes 5..    the payload: what the server sends
//! ```
//!
//! What is checked, beyond "no panic" (overflow checks and debug assertions
//! are on in every profile of this crate):
//! * `HeadReader` ends within a bounded number of reads, skipping at most
//!   `MAX_INTERIM_RESPONSES` 1xx heads, and never buffers past `MAX_HEAD_BYTES`;
//! * a head it gives (interim or final, whether it arrived whole or in
//!   pieces) ends exactly at the first blank line (else body bytes would be
//!   read as head or vice versa), and a parsed head is self-consistent:
//!   every header/reason span lies inside the head, ≤ `MAX_HEADERS` fields,
//!   body-less statuses and HEAD get `BodyFraming::Empty`;
//! * a strict prefix of a complete head is never a complete head, and never an
//!   error when the whole head parses (no valid response is refused early);
//! * `ChunkedDecoder::decode` consumes everything it is given unless it is
//!   done, never more than it was given, never emits more data than it
//!   consumed, finishes within a bounded number of calls, and gives the same
//!   data, error and consumed count whatever the read sizes (checked against
//!   one call over the whole body).

use nodelay_proto::limits::{MAX_HEADERS, MAX_HEAD_BYTES, MAX_INTERIM_RESPONSES};
use nodelay_proto::{
    find_head_end, parse_response_head, BodyFraming, ChunkedDecoder, HeadEvent, HeadReader,
    ProtoError, ResponseHead,
};

/// Bytes at the start of every input that steer the run instead of being sent.
pub const CONTROL_BYTES: usize = 5;

const FLAG_HEAD_REQUEST: u8 = 1;
const FLAG_BODY_ONLY: u8 = 2;
const FLAG_BIG_READS: u8 = 4;

/// Most strict prefixes of one head re-parsed for the prefix property (keeps a
/// run linear in the input size).
const PREFIX_CHECKS: usize = 8;

/// Runs one input. Panics on any violated property (that is the finding).
pub fn response_parser(data: &[u8]) {
    if data.len() < CONTROL_BYTES {
        return;
    }
    let flags = data[0];
    let scale = if flags & FLAG_BIG_READS != 0 { 64 } else { 1 };
    let sizes = [
        (usize::from(data[1]) + 1) * scale,
        (usize::from(data[2]) + 1) * scale,
        (usize::from(data[3]) + 1) * scale,
        (usize::from(data[4]) + 1) * scale,
    ];
    let payload = &data[CONTROL_BYTES..];
    let was_head = flags & FLAG_HEAD_REQUEST != 0;

    // The whole payload in one call: exercises the partial-head paths
    // (unterminated lines, size limits) on arbitrary buffers.
    if let Ok(Some(head)) = parse_response_head(payload, was_head) {
        check_head(&head, payload, was_head);
    }

    let mut reads = Reads::new(payload, sizes);
    if flags & FLAG_BODY_ONLY != 0 {
        chunked_body(Vec::new(), &mut reads);
        return;
    }
    if let Some((head, rest)) = receive_head(&mut reads, was_head) {
        match head.framing {
            BodyFraming::Chunked => chunked_body(rest, &mut reads),
            BodyFraming::Length(n) => {
                // The engine reads at most `n` bytes; the rest must stay unread.
                let available = (rest.len() + reads.remaining()) as u64;
                assert!(n.min(available) <= available);
            }
            BodyFraming::Empty | BodyFraming::CloseDelimited => {}
        }
    }
}

/// The payload cut into reads of the control bytes' sizes, in turn.
struct Reads<'a> {
    data: &'a [u8],
    pos: usize,
    sizes: [usize; 4],
    turn: usize,
}

impl<'a> Reads<'a> {
    fn new(data: &'a [u8], sizes: [usize; 4]) -> Self {
        Reads {
            data,
            pos: 0,
            sizes,
            turn: 0,
        }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Upper bound on the reads left (every read takes at least one byte).
    fn max_reads(&self) -> usize {
        self.remaining()
    }
}

impl<'a> Iterator for Reads<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.pos == self.data.len() {
            return None;
        }
        let n = self.sizes[self.turn % self.sizes.len()].min(self.remaining());
        self.turn += 1;
        let read = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Some(read)
    }
}

/// The engine's receive-head loop without sockets: `HeadReader` over a
/// buffer that grows one read at a time. Returns the final head and the
/// bytes read past it (the start of the body), or `None` on any error or end
/// of input.
fn receive_head(reads: &mut Reads<'_>, was_head: bool) -> Option<(ResponseHead, Vec<u8>)> {
    let mut buf: Vec<u8> = Vec::new();
    let mut reader = HeadReader::new(was_head);
    let mut interim = 0;
    let bound = reads.max_reads() + MAX_INTERIM_RESPONSES + 2;
    for _ in 0..bound {
        assert!(buf.len() <= MAX_HEAD_BYTES + reads.sizes.iter().max().unwrap_or(&0));
        match reader.advance(&buf) {
            Err(_) => return None,
            Ok(HeadEvent::NeedMore) => buf.extend_from_slice(reads.next()?),
            Ok(HeadEvent::Interim(len)) => {
                assert_eq!(Some(len), find_head_end(&buf, 0), "interim head length");
                interim += 1;
                assert!(interim <= MAX_INTERIM_RESPONSES, "interim limit not kept");
                buf.drain(..len);
            }
            Ok(HeadEvent::Final(head)) => {
                let end = head.head_len;
                assert_eq!(
                    Some(end),
                    find_head_end(&buf, 0),
                    "head length differs from the first blank line"
                );
                let parsed = parse_response_head(&buf[..end], was_head);
                check_prefixes(&buf[..end], was_head, &parsed);
                check_head(&head, &buf[..end], was_head);
                let rest = buf.split_off(end);
                return Some((head, rest));
            }
        }
    }
    panic!("receive_head did not finish within {bound} iterations");
}

/// Properties of a complete parsed head over `buf`.
fn check_head(head: &ResponseHead, buf: &[u8], was_head: bool) {
    let len = head.head_len;
    assert!(len <= buf.len(), "head_len {len} past the buffer");
    assert!(head.headers.len() <= MAX_HEADERS);
    assert!((100..=999).contains(&head.status));
    let inside = |(start, end): (u32, u32)| {
        assert!(
            start <= end && end as usize <= len,
            "span {start}..{end} outside the head (len {len})"
        );
    };
    inside(head.reason);
    for span in &head.headers {
        inside(span.name);
        inside(span.value);
        assert!(span.name.0 < span.name.1, "empty header name");
    }
    let bodiless = was_head || head.status < 200 || head.status == 204 || head.status == 304;
    if bodiless {
        assert_eq!(head.framing, BodyFraming::Empty);
    }
    if head.framing == BodyFraming::CloseDelimited {
        assert!(!head.keep_alive, "close-delimited body on a kept connection");
    }
}

/// A strict prefix of a complete head is never itself complete; and when the
/// whole head is valid, no prefix is an error (a valid response arriving in
/// small reads must not be refused early).
fn check_prefixes(
    head: &[u8],
    was_head: bool,
    whole: &Result<Option<ResponseHead>, ProtoError>,
) {
    if head.is_empty() {
        return;
    }
    let step = (head.len() / PREFIX_CHECKS).max(1);
    let mut k = head.len() - 1;
    loop {
        match parse_response_head(&head[..k], was_head) {
            Ok(Some(h)) => panic!(
                "prefix of {k} bytes parsed as a complete head of {} bytes (whole head {})",
                h.head_len,
                head.len()
            ),
            Err(e) if matches!(whole, Ok(Some(_))) => {
                panic!("prefix of {k} bytes refused ({e}) but the whole head parses")
            }
            _ => {}
        }
        if k < step {
            break;
        }
        k -= step;
    }
}

/// How a chunked body ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Done { consumed: usize },
    Error(ProtoError),
    /// Input ran out before the last chunk.
    Eof { consumed: usize },
}

/// Feeds the body (`initial`, then the remaining reads) through one decoder the
/// way `Exchange::read_to_end` does, then checks the result against a single
/// `decode` over the same bytes.
fn chunked_body(initial: Vec<u8>, reads: &mut Reads<'_>) {
    let mut all = initial.clone();
    let mut pending = initial;
    let mut decoder = ChunkedDecoder::new();
    let mut out = Vec::new();
    let mut consumed = 0;
    let bound = reads.max_reads() + 2;
    let mut calls = 0;
    let outcome = loop {
        calls += 1;
        assert!(calls <= bound, "decode did not finish within {bound} calls");
        if !pending.is_empty() {
            let before = out.len();
            match decoder.decode(&pending, &mut |data| out.extend_from_slice(data)) {
                Err(e) => break Outcome::Error(e),
                Ok(used) => {
                    assert!(used <= pending.len(), "consumed more than given");
                    assert!(out.len() - before <= used, "emitted more than consumed");
                    if used < pending.len() {
                        assert!(decoder.is_done(), "stopped early without finishing");
                    }
                    consumed += used;
                    pending.drain(..used);
                }
            }
        }
        if decoder.is_done() {
            break Outcome::Done { consumed };
        }
        match reads.next() {
            Some(read) => {
                pending.extend_from_slice(read);
                all.extend_from_slice(read);
            }
            None => break Outcome::Eof { consumed },
        }
    };
    assert!(out.len() <= consumed.max(all.len()));

    // The same bytes in one call: identical data, error and consumed count.
    let mut whole = ChunkedDecoder::new();
    let mut whole_out = Vec::new();
    let whole_outcome = match whole.decode(&all, &mut |data| whole_out.extend_from_slice(data)) {
        Err(e) => Outcome::Error(e),
        Ok(used) if whole.is_done() => Outcome::Done { consumed: used },
        Ok(used) => {
            assert_eq!(used, all.len(), "one call stopped early without finishing");
            Outcome::Eof { consumed: used }
        }
    };
    assert_eq!(outcome, whole_outcome, "result depends on read sizes");
    assert!(out == whole_out, "body data depends on read sizes");
}
