//! `_core.json_loads`: JSON bytes straight to Python objects (`Response.json()`).
//!
//! A strict RFC 8259 parser (plus the `NaN`/`Infinity`/`-Infinity` literals
//! `json.loads` accepts) that builds `dict`/`list`/`str`/`int`/`float` while it
//! scans: no intermediate tree, no copy of the document. Why not a crate:
//! serde_json (through a `DeserializeSeed`) rejects lone UTF-16 surrogates and
//! has no depth limit of our choosing; jiter (pydantic) fits only pyo3 0.28+
//! from 0.13 on, its 0.12 caps nesting at 255 levels with an error and rejects
//! lone surrogates, so both disagree with `json.loads` on valid documents.
//!
//! Semantics are `json.loads`'s by construction: whatever this parser does not
//! accept (invalid JSON, invalid UTF-8, lone surrogates, nesting deeper than
//! `MAX_FAST_DEPTH`, integers past Python's digit limit, a UTF-16/32 body) is
//! handed to `json.loads` itself, which returns the value or raises its own
//! error (`JSONDecodeError` with its message and position, `RecursionError`,
//! `UnicodeDecodeError`). The fast path only ever returns what `json.loads`
//! would: equal values, duplicate keys resolved the same way (last value wins,
//! first position kept), ints of any size, floats correctly rounded (`1e400`
//! is `inf`, as `float("1e400")`).

use std::ptr;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict};

/// Nesting depth (arrays + objects) the fast path handles itself; deeper
/// documents go to `json.loads`, which raises `RecursionError` at the
/// interpreter's recursion limit (1000 by default) or parses them if the
/// limit was raised. 256 levels of our recursive descent use well under
/// 100 KiB of stack, safe on any thread (musl's default thread stack is 128 KiB).
pub(crate) const MAX_FAST_DEPTH: usize = 256;

/// Object keys up to this many bytes are shared per document (a repeated key
/// reuses one `str`, whose hash is then computed once), as `json.loads` does
/// with its memo. Longer keys are rare and not worth the comparison.
const KEY_CACHE_MAX_BYTES: usize = 64;

/// String values up to this many bytes are shared the same way: short values
/// repeat (enums, codes, tags) and sharing an immutable `str` is invisible to
/// Python code; a miss costs a hash of at most this many bytes.
const VALUE_CACHE_MAX_BYTES: usize = 8;

/// Each per-document string cache has 2^this slots (direct-mapped by a hash
/// of the bytes): 256, enough for the distinct keys of typical API documents.
const STR_CACHE_BITS: u32 = 8;

/// Which per-document string cache.
#[derive(Clone, Copy)]
enum Cache {
    Keys,
    Values,
}

/// Integers of at most this many digits fit an `i64` without overflow checks
/// (i64::MAX has 19 digits); longer ones go through `int()`'s parser.
const I64_SAFE_DIGITS: usize = 18;

static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `json.loads(data)` with the speed of a native parser (see the module doc).
#[pyfunction]
pub(crate) fn json_loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = data.as_bytes();
    if let Some(doc) = fast_input(bytes) {
        let mut parser = Parser::new(py, doc);
        if let Ok(value) = parser.document() {
            return Ok(value);
        }
        // Whatever the fast path set aside (a failed str decode) is not ours to raise.
        drop(PyErr::take(py));
    }
    let loads = JSON_LOADS.get_or_try_init(py, || {
        py.import("json")
            .and_then(|m| m.getattr("loads"))
            .map(Bound::unbind)
    })?;
    loads.bind(py).call1((data,))
}

/// The document for the fast path: UTF-8 without a BOM, or with the UTF-8 BOM
/// `json.loads` skips. `None` for what `json.detect_encoding` would read as
/// UTF-16 or UTF-32 (a BOM, or a zero byte among the first two).
fn fast_input(bytes: &[u8]) -> Option<&[u8]> {
    if let Some(rest) = bytes.strip_prefix(b"\xef\xbb\xbf") {
        return Some(rest);
    }
    match bytes {
        [0xff, 0xfe, ..] | [0xfe, 0xff, ..] => None,
        [0, ..] | [_, 0, ..] => None,
        _ => Some(bytes),
    }
}

/// The parse failed in a way `json.loads` must judge (see the module doc).
struct Fallback;

type Parsed<'py> = Result<Bound<'py, PyAny>, Fallback>;

/// A cached `str` and the bytes it was made from: the first 16 bytes as two
/// zero-padded words (so short strings compare without touching the input),
/// the length, and where the bytes are (longer strings compare those too).
struct CachedKey<'py> {
    lo: u64,
    hi: u64,
    len: usize,
    start: usize,
    key: Bound<'py, PyAny>,
}

struct Parser<'a, 'py> {
    py: Python<'py>,
    data: &'a [u8],
    pos: usize,
    depth: usize,
    /// Decoded text of strings with escapes (reused).
    scratch: Vec<u8>,
    /// Array items being collected, for all open arrays (reused).
    items: Vec<Bound<'py, PyAny>>,
    keys: Vec<Option<CachedKey<'py>>>,
    values: Vec<Option<CachedKey<'py>>>,
}

/// Takes ownership of a new reference (or `Fallback` with the Python error left
/// set, cleared by `json_loads`).
fn owned<'py>(py: Python<'py>, obj: *mut ffi::PyObject) -> Parsed<'py> {
    if obj.is_null() {
        Err(Fallback)
    } else {
        // SAFETY: `obj` is a new, non-null reference we own.
        Ok(unsafe { Bound::from_owned_ptr(py, obj) })
    }
}

impl<'a, 'py> Parser<'a, 'py> {
    fn new(py: Python<'py>, data: &'a [u8]) -> Self {
        Parser {
            py,
            data,
            pos: 0,
            depth: 0,
            scratch: Vec::new(),
            items: Vec::new(),
            keys: Vec::new(),
            values: Vec::new(),
        }
    }

    /// One value, with only whitespace around it.
    fn document(&mut self) -> Parsed<'py> {
        self.skip_ws();
        let value = self.value()?;
        self.skip_ws();
        if self.pos == self.data.len() {
            Ok(value)
        } else {
            Err(Fallback) // "Extra data"
        }
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.data.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn value(&mut self) -> Parsed<'py> {
        match self.peek() {
            Some(b'"') => {
                self.pos += 1;
                self.string()
            }
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true", || {
                // SAFETY: Py_True is an immortal singleton; we take a new reference.
                unsafe { ffi::Py_NewRef(ffi::Py_True()) }
            }),
            Some(b'f') => self.literal(b"false", || {
                // SAFETY: as above.
                unsafe { ffi::Py_NewRef(ffi::Py_False()) }
            }),
            Some(b'n') => self.literal(b"null", || {
                // SAFETY: as above.
                unsafe { ffi::Py_NewRef(ffi::Py_None()) }
            }),
            Some(b'N') => self.literal(b"NaN", || {
                // SAFETY: creates a new float object (or NULL on MemoryError).
                unsafe { ffi::PyFloat_FromDouble(f64::NAN) }
            }),
            Some(b'I') => self.literal(b"Infinity", || {
                // SAFETY: as above.
                unsafe { ffi::PyFloat_FromDouble(f64::INFINITY) }
            }),
            _ => Err(Fallback),
        }
    }

    fn literal(&mut self, word: &[u8], make: impl FnOnce() -> *mut ffi::PyObject) -> Parsed<'py> {
        if self.data[self.pos..].starts_with(word) {
            self.pos += word.len();
            owned(self.py, make())
        } else {
            Err(Fallback)
        }
    }

    fn enter(&mut self) -> Result<(), Fallback> {
        self.depth += 1;
        if self.depth > MAX_FAST_DEPTH {
            return Err(Fallback);
        }
        Ok(())
    }

    fn array(&mut self) -> Parsed<'py> {
        self.enter()?;
        self.pos += 1; // '['
        let base = self.items.len();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                let item = self.value()?;
                self.items.push(item);
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                    }
                    Some(b']') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(Fallback),
                }
            }
        }
        self.depth -= 1;
        let n = self.items.len() - base;
        // SAFETY: PyList_New returns a new list of `n` NULL slots (or NULL).
        let list = owned(self.py, unsafe { ffi::PyList_New(n as ffi::Py_ssize_t) })?;
        for (i, item) in self.items.drain(base..).enumerate() {
            // SAFETY: `list` is a new list of length n, slot i is still NULL,
            // and PyList_SET_ITEM steals the reference `into_ptr` hands over.
            unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) };
        }
        Ok(list)
    }

    fn object(&mut self) -> Parsed<'py> {
        self.enter()?;
        self.pos += 1; // '{'
        let dict = PyDict::new(self.py);
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                if self.peek() != Some(b'"') {
                    return Err(Fallback);
                }
                self.pos += 1;
                let key = self.key()?;
                self.skip_ws();
                if self.peek() != Some(b':') {
                    return Err(Fallback);
                }
                self.pos += 1;
                self.skip_ws();
                let value = self.value()?;
                // SAFETY: both are valid objects; PyDict_SetItem does not steal.
                // Duplicate keys: the later value replaces the earlier one in
                // place, exactly like dict(pairs) in json.loads.
                if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } != 0
                {
                    return Err(Fallback);
                }
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                    }
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(Fallback),
                }
            }
        }
        self.depth -= 1;
        Ok(dict.into_any())
    }

    /// An object key (after its opening quote): short escape-free keys come
    /// from the per-document cache.
    fn key(&mut self) -> Parsed<'py> {
        let start = self.pos;
        let (end, escaped, ascii) = self.scan_string()?;
        if escaped || end - start > KEY_CACHE_MAX_BYTES {
            return self.string();
        }
        self.pos = end + 1;
        self.cached_str(Cache::Keys, start, end, ascii)
    }

    /// The `str` of `data[start..end]` (escape-free) from `cache`, made and
    /// remembered on a miss.
    fn cached_str(&mut self, cache: Cache, start: usize, end: usize, ascii: bool) -> Parsed<'py> {
        let len = end - start;
        let (lo, hi) = leading_words(self.data, start, end);
        let hash = if len <= 16 {
            mix(lo ^ hi.rotate_left(29) ^ ((len as u64) << 59))
        } else {
            fnv1a(&self.data[start..end])
        };
        // Two-way: a string may sit in its slot or the next one, so two
        // colliding keys of one document do not evict each other forever.
        let first = (hash >> (64 - STR_CACHE_BITS)) as usize;
        let slots = [first, (first + 1) & ((1 << STR_CACHE_BITS) - 1)];
        let table = match cache {
            Cache::Keys => &mut self.keys,
            Cache::Values => &mut self.values,
        };
        if table.is_empty() {
            table.resize_with(1 << STR_CACHE_BITS, || None);
        }
        for slot in slots {
            if let Some(cached) = &table[slot] {
                if cached.len == len
                    && cached.lo == lo
                    && cached.hi == hi
                    && (len <= 16
                        || self.data[cached.start..cached.start + len] == self.data[start..end])
                {
                    return Ok(cached.key.clone());
                }
            }
        }
        let key = self.make_str(start, end, ascii)?;
        let table = match cache {
            Cache::Keys => &mut self.keys,
            Cache::Values => &mut self.values,
        };
        let slot = if table[slots[0]].is_some() && table[slots[1]].is_none() {
            slots[1]
        } else {
            slots[0]
        };
        table[slot] = Some(CachedKey {
            lo,
            hi,
            len,
            start,
            key: key.clone(),
        });
        Ok(key)
    }

    /// Scans a string body from `pos` (after the opening quote) without
    /// consuming it: (index of the closing quote, has escapes, all ASCII).
    /// With escapes, the index is where the first backslash is.
    #[inline]
    fn scan_string(&self) -> Result<(usize, bool, bool), Fallback> {
        let data = self.data;
        let mut i = self.pos;
        let mut high = 0u8;
        // Eight bytes at a time while none is special (SWAR): most string
        // bytes are plain text.
        while let Some(chunk) = data.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            if has_special_byte(word) {
                break;
            }
            high |= fold_high_bits(word);
            i += 8;
        }
        while let Some(&b) = data.get(i) {
            if b == b'"' {
                return Ok((i, false, high < 0x80));
            }
            if b == b'\\' {
                return Ok((i, true, false));
            }
            if b < 0x20 {
                return Err(Fallback); // control character (json.loads strict mode)
            }
            high |= b;
            i += 1;
        }
        Err(Fallback) // unterminated
    }

    /// A `str` of the raw bytes `data[start..end]` (no escapes).
    fn make_str(&self, start: usize, end: usize, ascii: bool) -> Parsed<'py> {
        let bytes = &self.data[start..end];
        let len = bytes.len() as ffi::Py_ssize_t;
        if ascii {
            // SAFETY: PyUnicode_New(len, 127) makes a compact ASCII str of
            // `len` one-byte characters (or NULL); we fill every byte before
            // anyone else can see it, and the bytes are ASCII as required.
            unsafe {
                let obj = ffi::PyUnicode_New(len, 127);
                if obj.is_null() {
                    return Err(Fallback);
                }
                ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    ffi::PyUnicode_DATA(obj) as *mut u8,
                    bytes.len(),
                );
                owned(self.py, obj)
            }
        } else {
            // Validates the UTF-8: invalid bytes make json.loads judge the document.
            // SAFETY: pointer and length describe `bytes`.
            owned(self.py, unsafe {
                ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), len, ptr::null())
            })
        }
    }

    /// A string value, after its opening quote.
    fn string(&mut self) -> Parsed<'py> {
        let start = self.pos;
        let (end, escaped, ascii) = self.scan_string()?;
        if !escaped {
            self.pos = end + 1;
            if end - start <= VALUE_CACHE_MAX_BYTES {
                return self.cached_str(Cache::Values, start, end, ascii);
            }
            return self.make_str(start, end, ascii);
        }
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        out.extend_from_slice(&self.data[start..end]);
        self.pos = end;
        let result = self.unescape(&mut out).and_then(|()| {
            // SAFETY: pointer and length describe `out`.
            owned(self.py, unsafe {
                ffi::PyUnicode_DecodeUTF8(
                    out.as_ptr().cast(),
                    out.len() as ffi::Py_ssize_t,
                    ptr::null(),
                )
            })
        });
        self.scratch = out;
        result
    }

    /// Decodes the rest of a string with escapes into `out` (as UTF-8) and
    /// consumes the closing quote. Lone surrogates (valid for json.loads, not
    /// representable in UTF-8) make json.loads handle the document.
    fn unescape(&mut self, out: &mut Vec<u8>) -> Result<(), Fallback> {
        let data = self.data;
        loop {
            let &b = data.get(self.pos).ok_or(Fallback)?;
            self.pos += 1;
            match b {
                b'"' => return Ok(()),
                b'\\' => {
                    let &e = data.get(self.pos).ok_or(Fallback)?;
                    self.pos += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(Fallback),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(Fallback),
                _ => out.push(b),
            }
        }
    }

    /// The character of `\uXXXX` (after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, Fallback> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.data[self.pos..].starts_with(b"\\u") {
                    return Err(Fallback);
                }
                self.pos += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(Fallback);
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(Fallback),
            _ => first,
        };
        char::from_u32(code).ok_or(Fallback)
    }

    fn hex4(&mut self) -> Result<u32, Fallback> {
        let digits = self.data.get(self.pos..self.pos + 4).ok_or(Fallback)?;
        let mut value = 0u32;
        for &d in digits {
            let v = (d as char).to_digit(16).ok_or(Fallback)?;
            value = value * 16 + v;
        }
        self.pos += 4;
        Ok(value)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (json.loads' grammar),
    /// or `-Infinity`.
    fn number(&mut self) -> Parsed<'py> {
        let data = self.data;
        let start = self.pos;
        let negative = data[start] == b'-';
        let mut i = start + usize::from(negative);
        match data.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = data.get(i) {
                    i += 1;
                }
            }
            Some(b'I') if negative => {
                self.pos = i;
                return self.literal(b"Infinity", || {
                    // SAFETY: creates a new float object (or NULL on MemoryError).
                    unsafe { ffi::PyFloat_FromDouble(f64::NEG_INFINITY) }
                });
            }
            _ => return Err(Fallback),
        }
        let int_end = i;
        if data.get(i) == Some(&b'.') && matches!(data.get(i + 1), Some(b'0'..=b'9')) {
            i += 2;
            while let Some(b'0'..=b'9') = data.get(i) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = data.get(i) {
            let mut j = i + 1;
            if let Some(b'+' | b'-') = data.get(j) {
                j += 1;
            }
            if matches!(data.get(j), Some(b'0'..=b'9')) {
                while let Some(b'0'..=b'9') = data.get(j) {
                    j += 1;
                }
                i = j;
            }
        }
        self.pos = i;
        let text = &data[start..i];
        if i == int_end {
            let digits = &data[start + usize::from(negative)..i];
            if digits.len() <= I64_SAFE_DIGITS {
                let magnitude = digits
                    .iter()
                    .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
                let value = if negative { -magnitude } else { magnitude };
                // SAFETY: creates a new int object (or NULL on MemoryError).
                return owned(self.py, unsafe { ffi::PyLong_FromLongLong(value) });
            }
            // int(text): arbitrary size; past sys.get_int_max_str_digits() it
            // fails and json.loads raises the same ValueError.
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            scratch.extend_from_slice(text);
            scratch.push(0);
            // SAFETY: `scratch` is a NUL-terminated ASCII digit string.
            let obj =
                unsafe { ffi::PyLong_FromString(scratch.as_ptr().cast(), ptr::null_mut(), 10) };
            self.scratch = scratch;
            return owned(self.py, obj);
        }
        // float(text): Rust's parser is correctly rounded like CPython's, and
        // overflows to ±inf the same way.
        // SAFETY: the grammar above only admits ASCII.
        let text = unsafe { std::str::from_utf8_unchecked(text) };
        let value: f64 = text.parse().map_err(|_| Fallback)?;
        // SAFETY: creates a new float object (or NULL on MemoryError).
        owned(self.py, unsafe { ffi::PyFloat_FromDouble(value) })
    }
}

/// The first 16 bytes of `data[start..end]` as two little-endian words,
/// zero-padded past `end`.
#[inline]
fn leading_words(data: &[u8], start: usize, end: usize) -> (u64, u64) {
    let len = end - start;
    let keep = |n: usize| {
        if n >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        }
    };
    let word = |bytes: &[u8]| {
        let mut w = [0u8; 8];
        w[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(w)
    };
    let (lo, hi) = match data.get(start..start + 16) {
        // The usual case: the document goes on past the string; two loads of
        // known size, the bytes past `end` masked below.
        Some(block) => {
            let (a, b) = block.split_at(8);
            let a: [u8; 8] = a.try_into().unwrap_or_default();
            let b: [u8; 8] = b.try_into().unwrap_or_default();
            (u64::from_le_bytes(a), u64::from_le_bytes(b))
        }
        None => {
            let bytes = &data[start..end.min(start + 16)];
            let (a, b) = bytes.split_at(bytes.len().min(8));
            (word(a), word(b))
        }
    };
    (lo & keep(len), hi & keep(len.saturating_sub(8)))
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// True if a byte of `word` may be `"`, `\` or a control character (< 0x20).
/// Exact for "none of them" (the only answer the fast loop acts on).
#[inline]
fn has_special_byte(word: u64) -> bool {
    let has_zero = |v: u64| v.wrapping_sub(LOW_BITS) & !v & HIGH_BITS;
    let quote = has_zero(word ^ (LOW_BITS * u64::from(b'"')));
    let backslash = has_zero(word ^ (LOW_BITS * u64::from(b'\\')));
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS;
    (quote | backslash | control) != 0
}

/// 0x80 if any byte of `word` has its high bit set (non-ASCII), else 0.
#[inline]
fn fold_high_bits(word: u64) -> u8 {
    if word & HIGH_BITS != 0 {
        0x80
    } else {
        0
    }
}

/// A 64-bit mix whose top bits depend on every input bit (the folded 128-bit
/// product, as wyhash does): the cache slot is taken from the top bits.
#[inline]
fn mix(x: u64) -> u64 {
    let product = u128::from(x ^ 0x2d35_8dcc_aa6c_78a5) * 0x8bb8_4b93_962e_acc9;
    (product as u64) ^ ((product >> 64) as u64)
}

/// FNV-1a: a cheap, decent hash for short keys (the cache is per document,
/// so collisions only cost a miss).
#[inline]
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
