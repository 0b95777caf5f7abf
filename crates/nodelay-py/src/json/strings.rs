//! Strings: the scanner, the `str` caches and the UTF-8 decoding.
//!
//! Most strings of API documents are short (keys, enums, tags): a string whose
//! closing quote is among the next 16 bytes is read as two words, its cache slot
//! is a hash of those words, and a hit compares two words and a length, without
//! a byte loop. Longer strings are scanned 8 bytes at a time.
//!
//! The caches outlive a document: one set is lent to each parse and taken back
//! after it, so a parse neither allocates nor clears them, and the keys of the
//! next response of the same API are already there. A string of at most 16
//! bytes is wholly identified by its words and length, so those entries are
//! valid in any document; longer keys are compared with their bytes in the
//! document that made them, so they only match within that document (its
//! `generation`). Between parses the caches keep at most 256 keys and 64
//! short values alive.

use std::ptr;
use std::sync::Mutex;

use pyo3::ffi;

use super::{owned, Fallback, Parsed, Parser};
use nodelay_front::json::{stop_bytes, string_stop, HIGH_BITS};

/// Object keys up to this many bytes are shared per document (a repeated key
/// reuses one `str`, whose hash is then computed once), as `json.loads` does
/// with its memo. Longer keys are rare and not worth the comparison.
const KEY_CACHE_MAX_BYTES: usize = 64;

/// String values up to this many bytes (the two-word fast path) are shared the
/// same way: short values repeat (enums, codes, tags) and sharing an immutable
/// `str` is invisible to Python code; a miss costs one slot update.
const VALUE_CACHE_MAX_BYTES: usize = SHORT_MAX_BYTES;

/// Strings this short are read as two 8-byte words (see the module doc).
const SHORT_MAX_BYTES: usize = 16;

/// The key cache has 2^this slots (a key sits in the slot a hash of its bytes
/// selects or in the next one): 256, enough for the distinct keys of typical
/// API documents, which repeat few keys, so few of its lines are touched.
const KEY_CACHE_BITS: u32 = 8;

/// The value cache has 2^this slots: 64 (3.5 KiB, which stays in the L1
/// cache while the parse allocates objects; a larger table thrashed by unique
/// values costs a cache miss per lookup). Repeated values keep their slots
/// against unique ones by the second-chance rule of `cached_str`.
const VALUE_CACHE_BITS: u32 = 6;

/// A string's cache identity: its first 16 bytes as two zero-padded words
/// (enough to compare short strings) and its length.
#[derive(Clone, Copy)]
struct Short {
    lo: u64,
    hi: u64,
    len: usize,
}

impl Short {
    #[inline]
    fn ascii(self) -> bool {
        (self.lo | self.hi) & HIGH_BITS == 0
    }

    #[inline]
    fn hash(self) -> u64 {
        mix(self.lo ^ self.hi.rotate_left(29) ^ ((self.len as u64) << 56))
    }
}

/// One cache slot: a string's identity, where its bytes are in the document
/// of parse `generation` (strings past 16 bytes compare those too) and its
/// `str` (an owned reference; null while the slot is empty).
#[derive(Clone, Copy)]
struct Slot {
    short: Short,
    start: usize,
    generation: u64,
    /// Hit since the last miss that probed this slot (see `cached_str`).
    used: bool,
    obj: *mut ffi::PyObject,
}

const EMPTY_SLOT: Slot = Slot {
    short: Short {
        lo: 0,
        hi: 0,
        len: 0,
    },
    start: 0,
    generation: 0,
    used: false,
    obj: ptr::null_mut(),
};

/// A cache of `str` objects by content.
struct StrCache {
    slots: Box<[Slot]>,
}

impl StrCache {
    fn new(bits: u32) -> Self {
        StrCache {
            slots: vec![EMPTY_SLOT; 1 << bits].into_boxed_slice(),
        }
    }
}

/// The string caches lent to one parse (see the module doc).
pub(super) struct StrCaches {
    /// Object keys.
    keys: StrCache,
    /// Short string values.
    values: StrCache,
    /// Counts the parses that borrowed these caches: the current document's.
    generation: u64,
}

/// The caches between parses. Only taken and put back under the lock, never
/// held during a parse: a parse that finds none (another thread's parse, or
/// one started by a finalizer while a parse allocates) uses a fresh set.
static SPARE: Mutex<Option<Box<StrCaches>>> = Mutex::new(None);

// SAFETY: the `str` pointers are only touched with the GIL held (the module
// does not declare free-threading support): `lend`, the parse and
// `give_back` all run under it, so moving the caches between threads through
// `SPARE` never lets two threads use an object's refcount at once.
unsafe impl Send for StrCaches {}

impl StrCaches {
    /// The spare caches, or new ones, for one document.
    pub(super) fn lend() -> Box<StrCaches> {
        let spare = SPARE.lock().ok().and_then(|mut spare| spare.take());
        let mut caches = spare.unwrap_or_else(|| {
            Box::new(StrCaches {
                keys: StrCache::new(KEY_CACHE_BITS),
                values: StrCache::new(VALUE_CACHE_BITS),
                generation: 0,
            })
        });
        caches.generation += 1;
        caches
    }

    /// Keeps these caches for the next parse (or drops them if another set
    /// was put back first). Needs the GIL, as dropping them decrefs.
    pub(super) fn give_back(self: Box<Self>) {
        let unwanted = match SPARE.lock() {
            Ok(mut spare) if spare.is_none() => spare.replace(self),
            _ => Some(self),
        };
        // Dropped after the lock is released.
        drop(unwanted);
    }
}

impl Drop for StrCache {
    fn drop(&mut self) {
        for slot in &self.slots {
            if !slot.obj.is_null() {
                // SAFETY: a non-null slot holds an owned reference.
                unsafe { ffi::Py_DECREF(slot.obj) };
            }
        }
    }
}

/// Which cache.
#[derive(Clone, Copy)]
enum Cache {
    Keys,
    Values,
}

impl<'py> Parser<'_, 'py> {
    /// An object key (after its opening quote): escape-free keys of at most
    /// `KEY_CACHE_MAX_BYTES` come from the key cache.
    pub(super) fn key(&mut self) -> Parsed<'py> {
        let start = self.pos;
        if let Some(short) = short_string(self.data, start) {
            self.pos = start + short.len + 1;
            return self.cached_str(Cache::Keys, short, start);
        }
        let (end, escaped) = self.scan_string()?;
        if escaped || end - start > KEY_CACHE_MAX_BYTES {
            return self.string();
        }
        self.pos = end + 1;
        self.cached_str(Cache::Keys, leading_words(self.data, start, end), start)
    }

    /// A string value, after its opening quote.
    pub(super) fn string(&mut self) -> Parsed<'py> {
        let start = self.pos;
        if let Some(short) = short_string(self.data, start) {
            self.pos = start + short.len + 1;
            return self.cached_str(Cache::Values, short, start);
        }
        let (end, escaped) = self.scan_string()?;
        if !escaped {
            self.pos = end + 1;
            if end - start <= VALUE_CACHE_MAX_BYTES {
                // Only near the end of the document (no 16 bytes to read ahead).
                let short = leading_words(self.data, start, end);
                return self.cached_str(Cache::Values, short, start);
            }
            return self.make_str(start, end);
        }
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        out.extend_from_slice(&self.data[start..end]);
        self.pos = end;
        let result = self
            .unescape(&mut out)
            .and_then(|()| decode_utf8(self.py, &out));
        self.scratch = out;
        result
    }

    /// The `str` of `data[start..start + short.len]` (escape-free) from
    /// `cache`, made and remembered on a miss.
    fn cached_str(&mut self, cache: Cache, short: Short, start: usize) -> Parsed<'py> {
        let data = self.data;
        let generation = self.caches.generation;
        let (table, bits) = match cache {
            Cache::Keys => (&mut self.caches.keys, KEY_CACHE_BITS),
            Cache::Values => (&mut self.caches.values, VALUE_CACHE_BITS),
        };
        let first = (short.hash() >> (64 - bits)) as usize;
        let second = (first + 1) & ((1 << bits) - 1);
        let len = short.len;
        let same = |slot: &Slot| {
            !slot.obj.is_null()
                && slot.short.len == len
                && slot.short.lo == short.lo
                && slot.short.hi == short.hi
                && (len <= SHORT_MAX_BYTES
                    || (slot.generation == generation
                        && data[slot.start..slot.start + len] == data[start..start + len]))
        };
        for index in [first, second] {
            let slot = &mut table.slots[index];
            if same(slot) {
                slot.used = true;
                // SAFETY: the slot holds a valid `str`; we hand out a new reference.
                return owned(self.py, unsafe { ffi::Py_NewRef(slot.obj) });
            }
        }
        // Two-way: a string may sit in its slot or the next one, so two
        // colliding strings do not evict each other forever. A key takes an
        // empty slot, else its first (every key is worth keeping: a document
        // repeats its few keys). A value takes an empty or unused slot; when
        // both were used since the last miss here, it is not cached and both
        // lose their mark (second chance): values that repeat (enums, tags)
        // survive a stream of unique ones ("item-1", "item-2", ...).
        let victim = [first, second].into_iter().find(|&i| {
            let slot = &table.slots[i];
            slot.obj.is_null() || (matches!(cache, Cache::Values) && !slot.used)
        });
        let index = match (victim, cache) {
            (Some(index), _) => index,
            (None, Cache::Keys) => first,
            (None, Cache::Values) => {
                table.slots[first].used = false;
                table.slots[second].used = false;
                return self.make_str(start, start + len);
            }
        };
        // The words tell whether the whole string is ASCII only up to 16 bytes.
        let made = if len <= SHORT_MAX_BYTES && short.ascii() {
            ascii_str(self.py, &data[start..start + len])
        } else {
            self.make_str(start, start + len)
        }?;
        let table = match cache {
            Cache::Keys => &mut self.caches.keys,
            Cache::Values => &mut self.caches.values,
        };
        let slot = &mut table.slots[index];
        let old = std::mem::replace(
            slot,
            Slot {
                short,
                start,
                generation,
                used: false,
                // SAFETY: `made` is a valid object; the slot owns a new reference.
                obj: unsafe { ffi::Py_NewRef(made.as_ptr()) },
            },
        );
        if !old.obj.is_null() {
            // SAFETY: the evicted slot's reference was owned.
            unsafe { ffi::Py_DECREF(old.obj) };
        }
        Ok(made)
    }

    /// Scans a string body from `pos` (after the opening quote) without
    /// consuming it: (index of the closing quote, has escapes). With escapes,
    /// the index is where the first backslash is. The JSON tape's scan, which
    /// passes over non-ASCII bytes here.
    #[inline]
    fn scan_string(&self) -> Result<(usize, bool), Fallback> {
        let i = string_stop(self.data, self.pos, false).map_err(|_| Fallback)?;
        match self.data[i] {
            b'"' => Ok((i, false)),
            b'\\' => Ok((i, true)),
            // Control character (json.loads strict mode).
            _ => Err(Fallback),
        }
    }

    /// A `str` of the raw bytes `data[start..end]` (no escapes).
    fn make_str(&self, start: usize, end: usize) -> Parsed<'py> {
        let bytes = &self.data[start..end];
        if bytes.is_ascii() {
            ascii_str(self.py, bytes)
        } else {
            decode_utf8(self.py, bytes)
        }
    }

    /// Decodes the rest of a string with escapes into `out` (as UTF-8) and
    /// consumes the closing quote, with the JSON tape's unescaper (one
    /// implementation of JSON's escapes). Lone surrogates (valid for
    /// json.loads, not representable in UTF-8) make json.loads handle the
    /// document.
    fn unescape(&mut self, out: &mut Vec<u8>) -> Result<(), Fallback> {
        let (end, _ascii) =
            nodelay_front::json::unescape_string(self.data, self.pos, out).map_err(|_| Fallback)?;
        self.pos = end;
        Ok(())
    }
}

/// The string at `data[pos..]` (after its opening quote) if its closing quote
/// is among the next 16 bytes and no escape or control character comes
/// first; `None` sends it to the general scanner (also when fewer than 16
/// bytes are left to read ahead).
#[inline]
fn short_string(data: &[u8], pos: usize) -> Option<Short> {
    let block = data.get(pos..pos + SHORT_MAX_BYTES)?;
    let (a, b) = block.split_at(8);
    let lo = u64::from_le_bytes(a.try_into().unwrap_or_default());
    let hi = u64::from_le_bytes(b.try_into().unwrap_or_default());
    let special = stop_bytes(lo, false);
    let short = if special != 0 {
        let len = (special.trailing_zeros() / 8) as usize;
        Short {
            lo: lo & low_bytes(len),
            hi: 0,
            len,
        }
    } else {
        let special = stop_bytes(hi, false);
        if special == 0 {
            return None;
        }
        let tail = (special.trailing_zeros() / 8) as usize;
        Short {
            lo,
            hi: hi & low_bytes(tail),
            len: 8 + tail,
        }
    };
    (block[short.len] == b'"').then_some(short)
}

/// The identity of `data[start..end]`: its first 16 bytes as two
/// little-endian words, zero-padded past `end`.
fn leading_words(data: &[u8], start: usize, end: usize) -> Short {
    let word = |bytes: &[u8]| {
        let mut w = [0u8; 8];
        w[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(w)
    };
    let bytes = &data[start..end.min(start + SHORT_MAX_BYTES)];
    let (a, b) = bytes.split_at(bytes.len().min(8));
    Short {
        lo: word(a),
        hi: word(b),
        len: end - start,
    }
}

/// A mask of the low `n` bytes of a word (`n` < 8).
#[inline]
fn low_bytes(n: usize) -> u64 {
    (1u64 << (8 * n)) - 1
}

/// A compact ASCII `str` of `bytes` (all < 0x80).
#[inline]
fn ascii_str<'py>(py: pyo3::Python<'py>, bytes: &[u8]) -> Parsed<'py> {
    // SAFETY: PyUnicode_New(len, 127) makes a compact ASCII str of `len`
    // one-byte characters (or NULL); we fill every byte before anyone else can
    // see it, and the bytes are ASCII as required.
    unsafe {
        let obj = ffi::PyUnicode_New(bytes.len() as ffi::Py_ssize_t, 127);
        if obj.is_null() {
            return Err(Fallback);
        }
        ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            ffi::PyUnicode_DATA(obj) as *mut u8,
            bytes.len(),
        );
        owned(py, obj)
    }
}

/// A `str` of UTF-8 `bytes` in one allocation of the right width
/// (`PyUnicode_DecodeUTF8` widens as it meets wider characters, copying each
/// time). Invalid UTF-8 (surrogates included) makes json.loads judge.
fn decode_utf8<'py>(py: pyo3::Python<'py>, bytes: &[u8]) -> Parsed<'py> {
    let text = std::str::from_utf8(bytes).map_err(|_| Fallback)?;
    // The widest character follows from the widest lead byte: 0xF0.. starts
    // U+10000 and up, 0xE0.. U+0800..U+FFFF, 0xC4.. U+0100..U+07FF, 0xC2/0xC3
    // U+0080..U+00FF (continuation bytes, 0x80..0xBF, never decide).
    let widest = bytes.iter().copied().max().unwrap_or(0);
    if widest < 0x80 {
        return ascii_str(py, bytes);
    }
    let chars = bytes.iter().filter(|&&b| (b as i8) >= -0x40).count();
    let maxchar: u32 = match widest {
        0xF0.. => 0x10_FFFF,
        0xC4.. => 0xFFFF,
        _ => 0xFF,
    };
    // SAFETY: PyUnicode_New(chars, maxchar) makes a str of `chars` code points
    // of the kind `maxchar` selects (1, 2 or 4 bytes each), or NULL. We write
    // exactly `chars` code points of that width, each ≤ maxchar and with the
    // widest one needing that kind (see above), so the str is canonical.
    unsafe {
        let obj = ffi::PyUnicode_New(chars as ffi::Py_ssize_t, maxchar);
        if obj.is_null() {
            return Err(Fallback);
        }
        let data = ffi::PyUnicode_DATA(obj);
        match maxchar {
            0xFF => fill(data.cast::<u8>(), text, |c| c as u8),
            0xFFFF => fill(data.cast::<u16>(), text, |c| c as u16),
            _ => fill(data.cast::<u32>(), text, |c| c as u32),
        }
        owned(py, obj)
    }
}

/// Writes the code points of `text` to `out` as `T`.
///
/// # Safety
/// `out` must have room for `text.chars().count()` values of `T`.
#[inline]
unsafe fn fill<T>(out: *mut T, text: &str, narrow: impl Fn(char) -> T) {
    for (i, c) in text.chars().enumerate() {
        // SAFETY: i < the number of chars, which the caller sized `out` for.
        unsafe { out.add(i).write(narrow(c)) };
    }
}

/// A 64-bit mix whose top bits depend on every input bit (the folded 128-bit
/// product, as wyhash does): the cache slot is taken from the top bits.
#[inline]
fn mix(x: u64) -> u64 {
    let product = u128::from(x ^ 0x2d35_8dcc_aa6c_78a5) * 0x8bb8_4b93_962e_acc9;
    (product as u64) ^ ((product >> 64) as u64)
}
