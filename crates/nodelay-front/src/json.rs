//! A JSON document scanned once into a flat tape, for fronts that build their
//! own values from it (the Perl and Ruby `json` methods through the C ABI).
//!
//! The tape lists the values in document order: a container's entry carries
//! the number of its elements (an object's, of its pairs) and is followed by
//! them (each pair as a key string and its value), so a front builds every
//! array and hash at its final size in one recursive walk, without a parse
//! tree of its own and without calling back into Rust.
//!
//! The scanner is a fast path, not a second JSON dialect: it accepts strict
//! RFC 8259 documents in UTF-8 whose integers fit an `i64`, whose strings hold
//! no lone UTF-16 surrogate and whose nesting stays within [`MAX_DEPTH`].
//! Anything else (invalid JSON included) is [`Unsupported`], and the front
//! hands the body to its language's reference parser, which returns the value
//! or raises its own error. The fast path therefore never disagrees with that
//! parser on a document it accepts. See docs/json.md.

use std::fmt;

/// Nesting depth (arrays plus objects) the tape takes; deeper documents go to
/// the language's parser. It bounds the recursion of the fronts' walkers:
/// 256 levels of a C walker use a few KiB of stack.
pub const MAX_DEPTH: usize = 256;

/// Most elements one container may have on the tape (its count is a `u32`).
const MAX_CONTAINER_LEN: usize = u32::MAX as usize;

/// Digits an integer may have and always fit an `i64` (10^18 < 2^63).
const I64_SAFE_DIGITS: usize = 18;

/// The bytes a string scan stops at: the closing quote, an escape, a
/// control character (invalid) and any non-ASCII byte (the string is then
/// not ASCII).
static STRING_STOP: [bool; 256] = {
    let mut stop = [false; 256];
    let mut b = 0;
    while b < 256 {
        stop[b] = b < 0x20 || b >= 0x80 || b == b'"' as usize || b == b'\\' as usize;
        b += 1;
    }
    stop
};

/// 0x01 in each byte of a word (the string scans test eight bytes at a time).
pub const LOW_BITS: u64 = 0x0101_0101_0101_0101;
/// 0x80 in each byte of a word.
pub const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` whose byte is zero, exact up to the
/// first zero byte (a borrow may mark bytes after it, never before).
#[inline]
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(LOW_BITS) & !word & HIGH_BITS
}

/// The high bit of each byte of `word` (eight document bytes, little-endian)
/// that [`STRING_STOP`] stops at, exact up to the first such byte; without
/// `non_ascii`, bytes of 0x80 and above are passed over (once a string is
/// known not to be ASCII, its other such bytes need no stop; the Python
/// parser never stops at them).
#[inline]
pub fn stop_bytes(word: u64, non_ascii: bool) -> u64 {
    let quote = zero_bytes(word ^ (LOW_BITS * u64::from(b'"')));
    let backslash = zero_bytes(word ^ (LOW_BITS * u64::from(b'\\')));
    // Below 0x20: subtracting 0x20 borrows into the high bit; a byte of
    // 0x80 or above keeps its high bit and `!word` clears it.
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS;
    let high = if non_ascii { word & HIGH_BITS } else { 0 };
    quote | backslash | control | high
}

/// What one tape entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// `null`.
    Null = 0,
    /// `false`.
    False = 1,
    /// `true`.
    True = 2,
    /// An integer that fits an `i64` ([`Item::int`]).
    Int = 3,
    /// A number with a fraction or an exponent ([`Item::float`]).
    Float = 4,
    /// A string (its UTF-8 bytes: [`Tape::text`]).
    Str = 5,
    /// An array of [`Item::len`] values, which follow.
    Array = 6,
    /// An object of [`Item::len`] pairs (a key string, then its value), which follow.
    Object = 7,
}

/// One tape entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item {
    /// What the entry is.
    pub kind: Kind,
    /// Whether a string's bytes are all ASCII.
    pub ascii: bool,
    /// Whether a string's bytes are in [`Tape::scratch`] (it had escapes)
    /// rather than in the document.
    pub escaped: bool,
    /// A string's length in bytes, or a container's element (pair) count.
    pub len: u32,
    /// A string's offset in the document or in the scratch buffer; an
    /// integer's value as `i64` bits; a float's as `f64` bits.
    pub payload: u64,
}

impl Item {
    fn scalar(kind: Kind, payload: u64) -> Item {
        Item {
            kind,
            ascii: false,
            escaped: false,
            len: 0,
            payload,
        }
    }

    /// An [`Kind::Int`]'s value.
    pub fn int(&self) -> i64 {
        self.payload as i64
    }

    /// A [`Kind::Float`]'s value.
    pub fn float(&self) -> f64 {
        f64::from_bits(self.payload)
    }
}

/// A document the fast path leaves to the language's own parser (not valid
/// JSON, or valid but outside what the tape holds: see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a document the JSON fast path handles")
    }
}

impl std::error::Error for Unsupported {}

/// A scanned document: its entries and the unescaped bytes of the strings
/// that had escapes. Reusable: [`Tape::scan`] clears it first.
#[derive(Debug, Default)]
pub struct Tape {
    /// The entries, in document order.
    pub items: Vec<Item>,
    /// The strings that had escapes, unescaped, one after another.
    pub scratch: Vec<u8>,
}

impl Tape {
    /// An empty tape.
    pub fn new() -> Tape {
        Tape::default()
    }

    /// Scans `doc` into this tape (its previous entries are dropped).
    pub fn scan(&mut self, doc: &[u8]) -> Result<(), Unsupported> {
        self.items.clear();
        self.scratch.clear();
        // One check of the whole document: every string span is then valid UTF-8.
        std::str::from_utf8(doc).map_err(|_| Unsupported)?;
        let mut scanner = Scanner {
            doc,
            pos: 0,
            tape: self,
        };
        scanner.skip_space();
        scanner.value(0)?;
        scanner.skip_space();
        if scanner.pos != doc.len() {
            return Err(Unsupported);
        }
        Ok(())
    }

    /// The bytes of a [`Kind::Str`] entry of this tape, scanned from `doc`.
    pub fn text<'a>(&'a self, doc: &'a [u8], item: &Item) -> &'a [u8] {
        let start = item.payload as usize;
        let end = start + item.len as usize;
        if item.escaped {
            &self.scratch[start..end]
        } else {
            &doc[start..end]
        }
    }
}

struct Scanner<'a> {
    doc: &'a [u8],
    pos: usize,
    tape: &'a mut Tape,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.doc.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// [`Scanner::skip_space`] for where a document usually has none or one
    /// space (after a value, a comma or a colon).
    #[inline]
    fn skip_short_space(&mut self) {
        match self.peek() {
            Some(b' ')
                if !matches!(
                    self.doc.get(self.pos + 1),
                    Some(b' ' | b'\t' | b'\n' | b'\r')
                ) =>
            {
                self.pos += 1
            }
            Some(b' ' | b'\t' | b'\n' | b'\r') => self.skip_space(),
            _ => {}
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Result<(), Unsupported> {
        if !self.doc[self.pos..].starts_with(word) {
            return Err(Unsupported);
        }
        self.pos += word.len();
        self.tape.items.push(Item::scalar(kind, 0));
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<(), Unsupported> {
        match self.peek().ok_or(Unsupported)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string(),
            b'n' => self.literal(b"null", Kind::Null),
            b't' => self.literal(b"true", Kind::True),
            b'f' => self.literal(b"false", Kind::False),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Unsupported),
        }
    }

    /// Pushes a container entry whose count is set by [`Scanner::close`].
    fn open(&mut self, kind: Kind, depth: usize) -> Result<usize, Unsupported> {
        if depth > MAX_DEPTH {
            return Err(Unsupported);
        }
        self.pos += 1;
        self.tape.items.push(Item::scalar(kind, 0));
        Ok(self.tape.items.len() - 1)
    }

    fn close(&mut self, at: usize, count: usize) -> Result<(), Unsupported> {
        if count > MAX_CONTAINER_LEN {
            return Err(Unsupported);
        }
        self.pos += 1;
        self.tape.items[at].len = count as u32;
        Ok(())
    }

    /// After a container's element: true past a comma (another element
    /// follows), false at `close` (left for [`Scanner::close`]).
    fn next_element(&mut self, close: u8) -> Result<bool, Unsupported> {
        self.skip_short_space();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_short_space();
                Ok(true)
            }
            Some(c) if c == close => Ok(false),
            _ => Err(Unsupported),
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Unsupported> {
        let at = self.open(Kind::Array, depth)?;
        self.skip_space();
        let mut count = 0;
        if self.peek() != Some(b']') {
            loop {
                self.value(depth)?;
                count += 1;
                if !self.next_element(b']')? {
                    break;
                }
            }
        }
        self.close(at, count)
    }

    fn object(&mut self, depth: usize) -> Result<(), Unsupported> {
        let at = self.open(Kind::Object, depth)?;
        self.skip_space();
        let mut count = 0;
        if self.peek() != Some(b'}') {
            loop {
                if self.peek() != Some(b'"') {
                    return Err(Unsupported);
                }
                self.string()?;
                self.skip_short_space();
                if self.peek() != Some(b':') {
                    return Err(Unsupported);
                }
                self.pos += 1;
                self.skip_short_space();
                self.value(depth)?;
                count += 1;
                if !self.next_element(b'}')? {
                    break;
                }
            }
        }
        self.close(at, count)
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Result<(), Unsupported> {
        let start = self.pos + 1;
        let mut i = start;
        let mut ascii = true;
        loop {
            i = string_stop(self.doc, i, ascii)?;
            match self.doc[i] {
                b'"' => break,
                b'\\' => return self.escaped_string(start, i, ascii),
                0..=0x1f => return Err(Unsupported),
                _ => ascii = false,
            }
            i += 1;
        }
        self.pos = i + 1;
        self.push_str(start, i - start, ascii, false)
    }

    fn push_str(
        &mut self,
        offset: usize,
        len: usize,
        ascii: bool,
        escaped: bool,
    ) -> Result<(), Unsupported> {
        let len = u32::try_from(len).map_err(|_| Unsupported)?;
        self.tape.items.push(Item {
            kind: Kind::Str,
            ascii,
            escaped,
            len,
            payload: offset as u64,
        });
        Ok(())
    }

    /// The rest of a string whose first escape is at `escape` (the bytes from
    /// `start` up to it are plain), unescaped into the scratch buffer.
    fn escaped_string(
        &mut self,
        start: usize,
        escape: usize,
        ascii: bool,
    ) -> Result<(), Unsupported> {
        let offset = self.tape.scratch.len();
        let scratch = &mut self.tape.scratch;
        scratch.extend_from_slice(&self.doc[start..escape]);
        let (end, rest_ascii) = unescape_string(self.doc, escape, scratch)?;
        self.pos = end;
        let len = scratch.len() - offset;
        self.push_str(offset, len, ascii && rest_ascii, true)
    }

    /// The end of the digits from `start`, of which the grammar wants one at least.
    fn digits(&self, start: usize) -> Result<usize, Unsupported> {
        let run = self.doc[start.min(self.doc.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if run == 0 {
            return Err(Unsupported);
        }
        Ok(start + run)
    }

    /// A number: RFC 8259's grammar (no leading zeros, no `+`, no bare `.`).
    fn number(&mut self) -> Result<(), Unsupported> {
        let start = self.pos;
        let mut i = start;
        let negative = self.doc[i] == b'-';
        if negative {
            i += 1;
        }
        let int_start = i;
        let mut magnitude: u64 = 0;
        match self.doc.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = self.doc.get(i) {
                    magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                    i += 1;
                }
            }
            _ => return Err(Unsupported),
        }
        let int_digits = i - int_start;
        let mut is_float = false;
        if self.doc.get(i) == Some(&b'.') {
            i = self.digits(i + 1)?;
            is_float = true;
        }
        if let Some(b'e' | b'E') = self.doc.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = self.doc.get(i) {
                i += 1;
            }
            i = self.digits(i)?;
            is_float = true;
        }
        self.pos = i;
        if is_float {
            // The grammar above admits only ASCII; Rust's parse rounds correctly.
            let text = std::str::from_utf8(&self.doc[start..i]).map_err(|_| Unsupported)?;
            let value: f64 = text.parse().map_err(|_| Unsupported)?;
            self.tape
                .items
                .push(Item::scalar(Kind::Float, value.to_bits()));
            return Ok(());
        }
        let value = if int_digits <= I64_SAFE_DIGITS {
            let magnitude = magnitude as i64;
            if negative {
                -magnitude
            } else {
                magnitude
            }
        } else {
            // Longer: parse the text, which says whether it fits.
            let text = std::str::from_utf8(&self.doc[start..i]).map_err(|_| Unsupported)?;
            text.parse::<i64>().map_err(|_| Unsupported)?
        };
        self.tape.items.push(Item::scalar(Kind::Int, value as u64));
        Ok(())
    }
}

/// The first byte at or after `i` that [`STRING_STOP`] stops at (passing
/// over non-ASCII bytes unless `non_ascii`), eight bytes at a time while
/// eight remain (most strings are short, so the end of one is found without
/// a byte loop); [`Unsupported`] when the document ends first.
#[inline]
pub fn string_stop(doc: &[u8], mut i: usize, non_ascii: bool) -> Result<usize, Unsupported> {
    while let Some(word) = doc.get(i..i + 8) {
        let word = u64::from_le_bytes(word.try_into().map_err(|_| Unsupported)?);
        let stops = stop_bytes(word, non_ascii);
        if stops != 0 {
            return Ok(i + (stops.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let rest = doc.get(i..).ok_or(Unsupported)?;
    let at = rest
        .iter()
        .position(|&b| STRING_STOP[b as usize] && (non_ascii || b < 0x80))
        .ok_or(Unsupported)?;
    Ok(i + at)
}

/// Unescapes the body of a JSON string from `doc[pos..]` (after its opening
/// quote, or anywhere before its closing one) into `out`, as UTF-8: the
/// position after the closing quote, and whether what was appended is all
/// ASCII. A control character, an unknown escape or a lone UTF-16 surrogate
/// is [`Unsupported`] (the languages' parsers differ on lone surrogates).
/// The bytes copied are not checked as UTF-8: [`Tape::scan`] checks the
/// whole document first, the Python parser when it makes the `str`.
pub fn unescape_string(
    doc: &[u8],
    mut pos: usize,
    out: &mut Vec<u8>,
) -> Result<(usize, bool), Unsupported> {
    let mut ascii = true;
    loop {
        let stop = string_stop(doc, pos, ascii)?;
        out.extend_from_slice(&doc[pos..stop]);
        pos = stop + 1;
        let plain = match doc[stop] {
            b'"' => return Ok((pos, ascii)),
            b'\\' => {
                let escape = *doc.get(pos).ok_or(Unsupported)?;
                pos += 1;
                match escape {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        let (ch, used) = unicode_escape(doc, pos)?;
                        pos += used;
                        ascii &= ch.is_ascii();
                        let mut utf8 = [0; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
                        continue;
                    }
                    _ => return Err(Unsupported),
                }
            }
            0..=0x1f => return Err(Unsupported),
            byte => {
                ascii = false;
                byte
            }
        };
        out.push(plain);
    }
}

/// The character of a `\uXXXX` escape whose hex digits start at `at` (a
/// surrogate pair takes a second escape), and the bytes it used.
fn unicode_escape(doc: &[u8], at: usize) -> Result<(char, usize), Unsupported> {
    let first = hex4(doc, at)?;
    if !(0xd800..0xe000).contains(&first) {
        return Ok((char::from_u32(first).ok_or(Unsupported)?, 4));
    }
    // A high surrogate followed by `\u` and a low one; anything else is a
    // lone surrogate, which the languages' parsers treat differently.
    if first >= 0xdc00 || doc.get(at + 4..at + 6) != Some(b"\\u") {
        return Err(Unsupported);
    }
    let second = hex4(doc, at + 6)?;
    if !(0xdc00..0xe000).contains(&second) {
        return Err(Unsupported);
    }
    let code = 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
    Ok((char::from_u32(code).ok_or(Unsupported)?, 10))
}

fn hex4(doc: &[u8], at: usize) -> Result<u32, Unsupported> {
    let digits = doc.get(at..at + 4).ok_or(Unsupported)?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let nibble = (d as char).to_digit(16).ok_or(Unsupported)?;
        Ok(acc << 4 | nibble)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(doc: &str) -> Result<Tape, Unsupported> {
        let mut tape = Tape::new();
        tape.scan(doc.as_bytes())?;
        Ok(tape)
    }

    fn kinds(tape: &Tape) -> Vec<(Kind, u32)> {
        tape.items.iter().map(|i| (i.kind, i.len)).collect()
    }

    #[test]
    fn containers_carry_their_counts_and_their_elements_follow() {
        let tape = scan(r#" {"a": [1, 2.5, "x"], "b": {}, "c": [true, false, null]} "#).unwrap();
        assert_eq!(
            kinds(&tape),
            vec![
                (Kind::Object, 3),
                (Kind::Str, 1),
                (Kind::Array, 3),
                (Kind::Int, 0),
                (Kind::Float, 0),
                (Kind::Str, 1),
                (Kind::Str, 1),
                (Kind::Object, 0),
                (Kind::Str, 1),
                (Kind::Array, 3),
                (Kind::True, 0),
                (Kind::False, 0),
                (Kind::Null, 0),
            ]
        );
        assert_eq!(tape.items[3].int(), 1);
        assert_eq!(tape.items[4].float(), 2.5);
    }

    #[test]
    fn plain_strings_point_into_the_document_escaped_ones_into_scratch() {
        let doc = r#"["plain", "tab\there", "caf\u00e9 \ud83d\ude00", "é"]"#;
        let tape = scan(doc).unwrap();
        let texts: Vec<(&[u8], bool, bool)> = tape.items[1..]
            .iter()
            .map(|i| (tape.text(doc.as_bytes(), i), i.escaped, i.ascii))
            .collect();
        assert_eq!(
            texts,
            vec![
                (&b"plain"[..], false, true),
                (&b"tab\there"[..], true, true),
                ("café 😀".as_bytes(), true, false),
                ("é".as_bytes(), false, false),
            ]
        );
        assert!(tape.scratch.len() <= doc.len());
    }

    #[test]
    fn integers_that_fit_i64_and_floats_rounded_as_rust_parses_them() {
        let tape = scan("[0, -0, 9223372036854775807, -9223372036854775808, 1e400, -1.5E-3, 0.1]")
            .unwrap();
        let ints: Vec<i64> = tape.items[1..5].iter().map(Item::int).collect();
        assert_eq!(ints, vec![0, 0, i64::MAX, i64::MIN]);
        assert_eq!(tape.items[5].float(), f64::INFINITY);
        assert_eq!(tape.items[6].float(), -0.0015);
        assert_eq!(tape.items[7].float(), 0.1);
    }

    #[test]
    fn a_scalar_is_a_whole_document() {
        assert_eq!(kinds(&scan(" 42 ").unwrap()), vec![(Kind::Int, 0)]);
        assert_eq!(kinds(&scan("\"s\"").unwrap()), vec![(Kind::Str, 1)]);
    }

    #[test]
    fn what_the_languages_parsers_must_judge_is_unsupported() {
        for doc in [
            "",
            "   ",
            "[1,]",
            "{\"a\":1,}",
            "[01]",
            "[1.]",
            "[.5]",
            "[+1]",
            "[1e]",
            "[NaN]",
            "[Infinity]",
            "[\"a\tb\"]",
            "[\"é\u{1}\"]",
            "[\"日本語日本語日本語\u{1}x\"]",
            "[\"日本語\\n日本語日本語\u{1f}\"]",
            "[\"\\x\"]",
            "[\"\\ud800\"]",
            "[\"\\udc00\\ud800\"]",
            "[\"\\ud800\\u0041\"]",
            "[9223372036854775808]",
            "[-9223372036854775809]",
            "[1] [2]",
            "{1: 2}",
            "[tru]",
            "\u{feff}[]",
        ] {
            assert_eq!(scan(doc).err(), Some(Unsupported), "{doc:?}");
        }
        assert_eq!(Tape::new().scan(b"[\"\xff\"]"), Err(Unsupported));
    }

    #[test]
    fn nesting_stops_at_max_depth() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(scan(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(scan(&deep).err(), Some(Unsupported));
    }

    #[test]
    fn a_string_ends_where_the_byte_scan_would_stop() {
        // Every position of each stop byte in and past an eight-byte word.
        for stop in ["\"", "\\n", "\u{1}", "é"] {
            for before in 0..20 {
                let doc = format!("[\"{}{}x\"]", "a".repeat(before), stop);
                let tape = scan(&doc);
                match stop {
                    "\u{1}" => assert!(tape.is_err(), "{doc:?}"),
                    "\"" => assert!(tape.is_err(), "{doc:?}"),
                    _ => {
                        let tape = tape.unwrap();
                        let text = tape.text(doc.as_bytes(), &tape.items[1]);
                        let want = format!(
                            "{}{}x",
                            "a".repeat(before),
                            if stop == "é" { "é" } else { "\n" }
                        );
                        assert_eq!(text, want.as_bytes(), "{doc:?}");
                        assert_eq!(tape.items[1].ascii, stop != "é");
                    }
                }
            }
        }
        for b in 0..=255u8 {
            let word = u64::from_le_bytes([b'a', b'a', b, b'a', b'"', 0, 0, 0]);
            let first = (stop_bytes(word, true).trailing_zeros() / 8) as usize;
            assert_eq!(first, if STRING_STOP[b as usize] { 2 } else { 4 }, "{b}");
            let first = (stop_bytes(word, false).trailing_zeros() / 8) as usize;
            let stops = STRING_STOP[b as usize] && b < 0x80;
            assert_eq!(first, if stops { 2 } else { 4 }, "{b} past non-ASCII");
        }
    }

    #[test]
    fn long_non_ascii_strings_with_and_without_escapes() {
        let text = "日本語のテキスト、とても長い文字列です";
        let doc = format!(r#"["{text}", "{text}\n{text}\"", "x{text}"]"#);
        let tape = scan(&doc).unwrap();
        let texts: Vec<(Vec<u8>, bool)> = tape.items[1..]
            .iter()
            .map(|i| (tape.text(doc.as_bytes(), i).to_vec(), i.ascii))
            .collect();
        assert_eq!(
            texts,
            vec![
                (text.as_bytes().to_vec(), false),
                (format!("{text}\n{text}\"").into_bytes(), false),
                (format!("x{text}").into_bytes(), false),
            ]
        );
    }

    #[test]
    fn a_tape_is_reused_from_empty() {
        let mut tape = Tape::new();
        tape.scan(br#"["a\nb"]"#).unwrap();
        tape.scan(b"[1]").unwrap();
        assert_eq!(kinds(&tape), vec![(Kind::Array, 1), (Kind::Int, 0)]);
        assert!(tape.scratch.is_empty());
    }
}
