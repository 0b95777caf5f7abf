//! Numbers: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (json.loads'
//! grammar) to `int` or `float`, in one pass over the digits.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::ffi;

use super::{owned, Fallback, Parsed, Parser};

/// Integers of at most this many digits fit an `i64` without overflow checks
/// (i64::MAX has 19 digits); longer ones go through `int()`'s parser.
const I64_SAFE_DIGITS: usize = 18;

/// Floats with at most this many digits fit the `u64` mantissa accumulated
/// while scanning (10^19 - 1 < 2^64) ...
const MANTISSA_MAX_DIGITS: usize = 19;

/// ... and those whose mantissa is at most 2^53 (exact as an `f64`) ...
const EXACT_MANTISSA_MAX: u64 = 1 << 53;

/// ... with a decimal exponent of at most this size are one exact `f64`
/// multiplication or division by an exact power of ten (10^22 is the largest
/// exact one), hence correctly rounded (Clinger's fast path). Other floats go
/// through Rust's correctly rounded parser, like CPython's `float()`.
const EXACT_POW10_MAX: i64 = 22;

/// Exponent digits beyond this many cannot change the outcome of the fast
/// path (which needs |exponent| ≤ 22); the accumulator stops growing there.
const EXPONENT_CAP: i64 = 1_000_000;

/// Non-negative integers below this are shared `int` objects, made once per
/// process (CPython itself only shares -5..=256): ids, counts and indexes of
/// API documents are mostly small, and an `int` made per occurrence costs an
/// allocation and a deallocation. 1024 slots hold at most 32 KiB of objects.
const SHARED_INTS: usize = 1024;

/// The shared `int`s, each an owned reference kept for the life of the
/// process (null until first needed). Atomic so that a reentrant parse (a
/// finalizer run by an allocation's garbage collection) needs no lock.
static INTS: [AtomicPtr<ffi::PyObject>; SHARED_INTS] =
    [const { AtomicPtr::new(ptr::null_mut()) }; SHARED_INTS];

/// 10^0 ..= 10^22, all exact in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

impl<'py> Parser<'_, 'py> {
    /// A number (or `-Infinity`) at `pos`.
    pub(super) fn number(&mut self) -> Parsed<'py> {
        let data = self.data;
        let start = self.pos;
        let negative = data[start] == b'-';
        let digits_start = start + usize::from(negative);
        let mut i = digits_start;
        let mut mantissa: u64 = 0;
        match data.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = data.get(i) {
                    mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
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
        let int_digits = i - digits_start;
        let mut fraction_digits = 0;
        if data.get(i) == Some(&b'.') && matches!(data.get(i + 1), Some(b'0'..=b'9')) {
            i += 1;
            let fraction_start = i;
            while let Some(&d @ b'0'..=b'9') = data.get(i) {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                i += 1;
            }
            fraction_digits = i - fraction_start;
        }
        let mut exponent: i64 = 0;
        let mut has_exponent = false;
        if let Some(b'e' | b'E') = data.get(i) {
            let mut j = i + 1;
            let exponent_negative = data.get(j) == Some(&b'-');
            if let Some(b'+' | b'-') = data.get(j) {
                j += 1;
            }
            if matches!(data.get(j), Some(b'0'..=b'9')) {
                while let Some(&d @ b'0'..=b'9') = data.get(j) {
                    exponent = (exponent * 10 + i64::from(d - b'0')).min(EXPONENT_CAP);
                    j += 1;
                }
                if exponent_negative {
                    exponent = -exponent;
                }
                has_exponent = true;
                i = j;
            }
        }
        self.pos = i;
        if fraction_digits == 0 && !has_exponent {
            return self.int(start, negative, int_digits, mantissa);
        }
        let digits = int_digits + fraction_digits;
        let scale = exponent - fraction_digits as i64;
        let magnitude = if digits <= MANTISSA_MAX_DIGITS
            && mantissa <= EXACT_MANTISSA_MAX
            && scale.abs() <= EXACT_POW10_MAX
        {
            let m = mantissa as f64; // exact: mantissa ≤ 2^53
            let p = POW10[scale.unsigned_abs() as usize];
            if scale < 0 {
                m / p
            } else {
                m * p
            }
        } else {
            // SAFETY: the grammar above only admits ASCII.
            let text = unsafe { std::str::from_utf8_unchecked(&data[digits_start..i]) };
            text.parse::<f64>().map_err(|_| Fallback)?
        };
        let value = if negative { -magnitude } else { magnitude };
        // SAFETY: creates a new float object (or NULL on MemoryError).
        owned(self.py, unsafe { ffi::PyFloat_FromDouble(value) })
    }

    /// The `int` of `data[start..pos]` (an optional minus and `digits` digits
    /// whose value, when it fits, is `magnitude`).
    fn int(&mut self, start: usize, negative: bool, digits: usize, magnitude: u64) -> Parsed<'py> {
        if !negative && magnitude < SHARED_INTS as u64 {
            return self.shared_int(magnitude as usize);
        }
        if digits <= I64_SAFE_DIGITS {
            // Fits: at most 18 digits is below 10^18 < i64::MAX.
            let magnitude = magnitude as i64;
            let value = if negative { -magnitude } else { magnitude };
            // SAFETY: creates a new int object (or NULL on MemoryError).
            return owned(self.py, unsafe { ffi::PyLong_FromLongLong(value) });
        }
        // int(text): arbitrary size; past sys.get_int_max_str_digits() it
        // fails and json.loads raises the same ValueError.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.extend_from_slice(&self.data[start..self.pos]);
        scratch.push(0);
        // SAFETY: `scratch` is a NUL-terminated ASCII digit string.
        let obj = unsafe { ffi::PyLong_FromString(scratch.as_ptr().cast(), ptr::null_mut(), 10) };
        self.scratch = scratch;
        owned(self.py, obj)
    }

    /// The shared `int` of `value` (< `SHARED_INTS`), made on first use.
    #[inline]
    fn shared_int(&self, value: usize) -> Parsed<'py> {
        let slot = &INTS[value];
        let obj = slot.load(Ordering::Acquire);
        if !obj.is_null() {
            // SAFETY: a non-null slot holds a reference the table owns forever,
            // so the object is alive; we hand out a new reference.
            return owned(self.py, unsafe { ffi::Py_NewRef(obj) });
        }
        // SAFETY: creates a new int object (or NULL on MemoryError).
        let made = owned(self.py, unsafe { ffi::PyLong_FromLongLong(value as i64) })?;
        // SAFETY: `made` is alive; the table takes its own reference if the
        // slot is still empty (another parse may have filled it meanwhile).
        let extra = unsafe { ffi::Py_NewRef(made.as_ptr()) };
        if slot
            .compare_exchange(ptr::null_mut(), extra, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: `extra` is the reference we just took and did not store.
            unsafe { ffi::Py_DECREF(extra) };
        }
        Ok(made)
    }
}
