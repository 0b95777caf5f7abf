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
//!
//! Layout: this file holds the entry point and the structure (values, arrays,
//! objects); `strings.rs` the string scanner, the per-document `str` caches
//! and the UTF-8 decoding; `numbers.rs` ints and floats.

mod numbers;
mod strings;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBytes;

use strings::StrCaches;

/// Nesting depth (arrays + objects) the fast path handles itself; deeper
/// documents go to `json.loads`, which raises `RecursionError` at the
/// interpreter's recursion limit (1000 by default) or parses them if the
/// limit was raised. 256 levels of our recursive descent use well under
/// 100 KiB of stack, safe on any thread (musl's default thread stack is 128 KiB).
pub(crate) const MAX_FAST_DEPTH: usize = 256;

static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `json.loads(data)` with the speed of a native parser (see the module doc).
#[pyfunction]
pub(crate) fn json_loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = data.as_bytes();
    if let Some(doc) = fast_input(bytes) {
        let mut caches = StrCaches::lend();
        let parsed = Parser::new(py, doc, &mut caches).document();
        caches.give_back();
        if let Ok(value) = parsed {
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

struct Parser<'a, 'py> {
    py: Python<'py>,
    data: &'a [u8],
    pos: usize,
    depth: usize,
    /// Decoded text of strings with escapes (reused).
    scratch: Vec<u8>,
    /// Array items being collected, for all open arrays: owned references,
    /// moved into their list when it closes (or released by `Drop` on failure).
    items: Vec<*mut ffi::PyObject>,
    /// Strings seen in this document and recent ones (see `StrCaches`).
    caches: &'a mut StrCaches,
}

impl Drop for Parser<'_, '_> {
    fn drop(&mut self) {
        for &item in &self.items {
            // SAFETY: every pointer in `items` is an owned reference (see the field).
            unsafe { ffi::Py_DECREF(item) };
        }
    }
}

/// Takes ownership of a new reference (or `Fallback` with the Python error left
/// set, cleared by `json_loads`).
#[inline]
fn owned<'py>(py: Python<'py>, obj: *mut ffi::PyObject) -> Parsed<'py> {
    if obj.is_null() {
        Err(Fallback)
    } else {
        // SAFETY: `obj` is a new, non-null reference we own.
        Ok(unsafe { Bound::from_owned_ptr(py, obj) })
    }
}

impl<'a, 'py> Parser<'a, 'py> {
    fn new(py: Python<'py>, data: &'a [u8], caches: &'a mut StrCaches) -> Self {
        Parser {
            py,
            data,
            pos: 0,
            depth: 0,
            scratch: Vec::new(),
            items: Vec::new(),
            caches,
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
                self.items.push(item.into_ptr());
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
        for (i, &item) in self.items[base..].iter().enumerate() {
            // SAFETY: `list` is a new list of length n, slot i is still NULL,
            // and PyList_SET_ITEM steals the owned reference `items` held.
            unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item) };
        }
        // The references now belong to the list: forget them without a decref.
        self.items.truncate(base);
        Ok(list)
    }

    fn object(&mut self) -> Parsed<'py> {
        self.enter()?;
        self.pos += 1; // '{'
                       // SAFETY: creates a new, empty dict (or NULL on MemoryError).
        let dict = owned(self.py, unsafe { ffi::PyDict_New() })?;
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
        Ok(dict)
    }
}
