//! Response bodies as Python `bytes`, filled in place.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A new `bytes` object of `len` bytes and a writable view of its contents.
///
/// Unlike `PyBytes::new_with` it does not zero the buffer first: the caller
/// overwrites every byte (a 10 MiB body would otherwise cost an extra pass).
/// The object must not be shared with Python code until it is fully written.
pub(crate) fn uninit_bytes(
    py: Python<'_>,
    len: usize,
) -> PyResult<(Bound<'_, PyBytes>, &mut [u8])> {
    let size = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("body too large"))?;
    // SAFETY: PyBytes_FromStringAndSize with a NULL source allocates an
    // uninitialised bytes object of `size` bytes (or returns NULL with an
    // exception set); we own the only reference.
    let obj = unsafe { ffi::PyBytes_FromStringAndSize(std::ptr::null(), size) };
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `obj` is a new, non-null reference to a bytes object.
    let bytes = unsafe { Bound::from_owned_ptr(py, obj).cast_into_unchecked::<PyBytes>() };
    // SAFETY: the buffer of a bytes object is `size` bytes long, lives as long
    // as the object, and nobody else can see the object yet.
    let view =
        unsafe { std::slice::from_raw_parts_mut(ffi::PyBytes_AsString(obj) as *mut u8, len) };
    Ok((bytes, view))
}

/// `bytes` (made by `uninit_bytes`, never shared yet) cut down or grown to
/// `len` bytes, in place when the allocator can (no copy of the kept bytes).
/// Bytes past the old length are uninitialised: the caller writes them
/// before Python sees the object.
pub(crate) fn resize_bytes(bytes: Bound<'_, PyBytes>, len: usize) -> PyResult<Bound<'_, PyBytes>> {
    if len == size_of(&bytes) {
        return Ok(bytes);
    }
    let py = bytes.py();
    let size = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("body too large"))?;
    let mut obj = bytes.into_ptr();
    // SAFETY: `obj` is the only reference to a bytes object nobody else has
    // seen (the contract of `uninit_bytes`), which is what _PyBytes_Resize
    // requires; it replaces `obj` by the resized object, or frees it and sets
    // it to NULL with an exception set.
    if unsafe { ffi::_PyBytes_Resize(&mut obj, size) } != 0 {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: on success `obj` is an owned reference to a bytes object.
    Ok(unsafe { Bound::from_owned_ptr(py, obj).cast_into_unchecked::<PyBytes>() })
}

/// The contents of `bytes` from `start` on, writable.
///
/// # Safety
/// `bytes` was made by `uninit_bytes` or `resize_bytes` and never shared:
/// the caller holds its only reference. The view must not be used after
/// `bytes` is resized or handed to Python code.
pub(crate) unsafe fn tail_mut<'a>(bytes: &'a mut Bound<'_, PyBytes>, start: usize) -> &'a mut [u8] {
    let len = size_of(bytes);
    assert!(start <= len, "tail_mut past the end");
    // SAFETY: the buffer of a bytes object is `len` bytes long and lives as
    // long as the object; the caller guarantees nobody else reads or writes it.
    unsafe {
        let base = ffi::PyBytes_AsString(bytes.as_ptr()) as *mut u8;
        std::slice::from_raw_parts_mut(base.add(start), len - start)
    }
}

/// The size of a `bytes` object, without viewing its contents (which may
/// not be written yet).
pub(crate) fn size_of(bytes: &Bound<'_, PyBytes>) -> usize {
    // SAFETY: `bytes` is a live bytes object; PyBytes_Size only reads its size.
    let size = unsafe { ffi::PyBytes_Size(bytes.as_ptr()) };
    usize::try_from(size).unwrap_or(0)
}
