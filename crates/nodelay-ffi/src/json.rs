//! `nodelay_json_parse`: a JSON document scanned once into a flat list of
//! items (`nodelay_front::json`), from which a front builds its language's
//! values in one walk (the Perl and Ruby `json` methods).

use nodelay_front::json::{Item, Kind, Tape};

use crate::code::{fail, guard, nodelay_code};

/// What one item is.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum nodelay_json_kind {
    NODELAY_JSON_NULL = 0,
    NODELAY_JSON_FALSE = 1,
    NODELAY_JSON_TRUE = 2,
    /// `value.integer` holds it.
    NODELAY_JSON_INT = 3,
    /// `value.real` holds it.
    NODELAY_JSON_FLOAT = 4,
    /// `len` UTF-8 bytes at `value.str` (not NUL-terminated).
    NODELAY_JSON_STRING = 5,
    /// `len` values follow.
    NODELAY_JSON_ARRAY = 6,
    /// `len` pairs follow, each a `NODELAY_JSON_STRING` key and its value.
    NODELAY_JSON_OBJECT = 7,
}

/// An item's value.
#[repr(C)]
#[derive(Clone, Copy)]
pub union nodelay_json_value {
    /// A string's bytes.
    pub str: *const u8,
    /// An integer.
    pub integer: i64,
    /// A number with a fraction or an exponent.
    pub real: f64,
}

/// One value of a scanned document (containers list their elements after them).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nodelay_json_item {
    pub kind: nodelay_json_kind,
    /// 1 when a string's bytes are all ASCII.
    pub ascii: u8,
    /// A string's length in bytes, or a container's element (pair) count.
    pub len: u32,
    pub value: nodelay_json_value,
}

/// A scanned document: its items, and the unescaped strings they point into.
#[derive(Default)]
pub struct nodelay_json {
    /// Holds the bytes of the strings that had escapes, which items point
    /// into; its buffers are reused by the next parse on the thread.
    tape: Tape,
    items: Vec<nodelay_json_item>,
}

/// Items a freed document may hold and still be kept for the thread's next
/// parse (16 bytes each, so 1 MiB, about a 6 MiB document): reusing the
/// buffers spares every parse two large allocations, whose frees make glibc
/// consolidate its heap, without keeping a huge document's tape forever.
const KEPT_ITEMS_MAX: usize = 64 * 1024;

thread_local! {
    /// The last document freed on this thread, emptied, for the next parse.
    static SPARE: std::cell::Cell<Option<Box<nodelay_json>>> = const { std::cell::Cell::new(None) };
}

/// Expected items per document byte, to size the tape once (workload b's
/// document has one item per 6.5 bytes).
const BYTES_PER_ITEM_GUESS: usize = 8;

fn c_kind(kind: Kind) -> nodelay_json_kind {
    use nodelay_json_kind::*;
    match kind {
        Kind::Null => NODELAY_JSON_NULL,
        Kind::False => NODELAY_JSON_FALSE,
        Kind::True => NODELAY_JSON_TRUE,
        Kind::Int => NODELAY_JSON_INT,
        Kind::Float => NODELAY_JSON_FLOAT,
        Kind::Str => NODELAY_JSON_STRING,
        Kind::Array => NODELAY_JSON_ARRAY,
        Kind::Object => NODELAY_JSON_OBJECT,
    }
}

/// The C form of `item`; `doc` and `unescaped` are where its string bytes
/// are (the tape's checked offsets, so no bounds check is repeated).
fn c_item(doc: *const u8, unescaped: *const u8, item: &Item) -> nodelay_json_item {
    let value = match item.kind {
        Kind::Str => {
            let base = if item.escaped { unescaped } else { doc };
            nodelay_json_value {
                str: base.wrapping_add(item.payload as usize),
            }
        }
        Kind::Float => nodelay_json_value { real: item.float() },
        _ => nodelay_json_value {
            integer: item.int(),
        },
    };
    nodelay_json_item {
        kind: c_kind(item.kind),
        ascii: u8::from(item.ascii),
        len: item.len,
        value,
    }
}

/// Scans the JSON document of `len` bytes at `doc` into `*out`.
/// `NODELAY_E_JSON_UNSUPPORTED` when the document is for the language's own
/// parser to judge: not valid JSON, not UTF-8, an integer outside `int64_t`, a
/// lone UTF-16 surrogate, nesting deeper than 256; the caller then parses it
/// with that parser, which returns the value or raises its own error.
/// Strings point into `doc` or into `*out`: keep `doc` unchanged and alive
/// until `nodelay_json_free(*out)`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_json_parse(
    doc: *const u8,
    len: usize,
    out: *mut *mut nodelay_json,
) -> nodelay_code {
    guard(|| {
        if out.is_null() || (doc.is_null() && len > 0) {
            return fail(
                nodelay_code::NODELAY_E_INVALID_ARGUMENT,
                "doc or out is NULL",
            );
        }
        let doc = if len == 0 {
            &[][..]
        } else {
            // SAFETY: `len` readable bytes at `doc` (the caller's contract).
            unsafe { std::slice::from_raw_parts(doc, len) }
        };
        let mut json = SPARE.with(|spare| spare.take()).unwrap_or_default();
        let tape = &mut json.tape;
        // A new handle is sized once; a spare one has room from its last document.
        tape.items.clear();
        tape.items.reserve(doc.len() / BYTES_PER_ITEM_GUESS + 1);
        if tape.scan(doc).is_err() {
            keep_spare(json);
            return fail(
                nodelay_code::NODELAY_E_JSON_UNSUPPORTED,
                "not a document the JSON fast path handles",
            );
        }
        let nodelay_json { tape, items } = &mut *json;
        items.clear();
        // Taken once the scan is done: the unescaped bytes no longer move.
        let unescaped = tape.scratch.as_ptr();
        items.extend(
            tape.items
                .iter()
                .map(|i| c_item(doc.as_ptr(), unescaped, i)),
        );
        // SAFETY: `out` is a valid, writable pointer (checked non-null).
        unsafe { out.write(Box::into_raw(json)) };
        nodelay_code::NODELAY_OK
    })
}

/// The items of a scanned document (`*count` of them; the first is the
/// document's value), valid until `nodelay_json_free`.
#[no_mangle]
pub unsafe extern "C" fn nodelay_json_items(
    json: *const nodelay_json,
    count: *mut usize,
) -> *const nodelay_json_item {
    // SAFETY: a live document from `nodelay_json_parse`, or NULL.
    let items = unsafe { json.as_ref() }.map_or(&[][..], |j| &j.items[..]);
    if !count.is_null() {
        // SAFETY: `count` is writable (checked non-null).
        unsafe { count.write(items.len()) };
    }
    items.as_ptr()
}

/// Frees a document from `nodelay_json_parse` (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn nodelay_json_free(json: *mut nodelay_json) {
    if !json.is_null() {
        // SAFETY: from `Box::into_raw` in `nodelay_json_parse`, freed once.
        keep_spare(unsafe { Box::from_raw(json) });
    }
}

/// Keeps a document's buffers for the thread's next parse, if small enough.
fn keep_spare(mut json: Box<nodelay_json>) {
    if json.items.capacity().max(json.tape.items.capacity()) > KEPT_ITEMS_MAX {
        return;
    }
    json.items.clear();
    SPARE.with(|spare| spare.set(Some(json)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(doc: &[u8]) -> Result<*mut nodelay_json, nodelay_code> {
        let mut out = std::ptr::null_mut();
        // SAFETY: `doc` is a live slice, `out` a local.
        match unsafe { nodelay_json_parse(doc.as_ptr(), doc.len(), &mut out) } {
            nodelay_code::NODELAY_OK => Ok(out),
            code => Err(code),
        }
    }

    #[test]
    fn strings_point_into_the_document_or_the_handle() {
        let doc = br#"{"plain": "x\u00e9", "n": [-7, 0.5]}"#.to_vec();
        let json = parse(&doc).unwrap();
        let mut count = 0;
        // SAFETY: a live handle; the items live until the free below.
        let items =
            unsafe { std::slice::from_raw_parts(nodelay_json_items(json, &mut count), count) };
        let kinds: Vec<_> = items.iter().map(|i| (i.kind, i.len)).collect();
        use nodelay_json_kind::*;
        assert_eq!(
            kinds,
            vec![
                (NODELAY_JSON_OBJECT, 2),
                (NODELAY_JSON_STRING, 5),
                (NODELAY_JSON_STRING, 3),
                (NODELAY_JSON_STRING, 1),
                (NODELAY_JSON_ARRAY, 2),
                (NODELAY_JSON_INT, 0),
                (NODELAY_JSON_FLOAT, 0),
            ]
        );
        // SAFETY: string items hold `len` bytes at `str`; numbers their field.
        unsafe {
            assert_eq!(items[1].value.str, doc[2..].as_ptr());
            let escaped = std::slice::from_raw_parts(items[2].value.str, 3);
            assert_eq!(escaped, "xé".as_bytes());
            assert_eq!((items[2].ascii, items[1].ascii), (0, 1));
            assert_eq!(items[5].value.integer, -7);
            assert_eq!(items[6].value.real, 0.5);
            nodelay_json_free(json);
        }
    }

    #[test]
    fn a_reused_handle_gives_each_document_its_own_strings() {
        for doc in [
            &br#"["a\tb", "c"]"#[..],
            br#"["\u00e9\n", "dd"]"#,
            br#"["x"]"#,
        ] {
            let json = parse(doc).unwrap();
            let mut count = 0;
            // SAFETY: a live handle; its items and strings live until the free.
            unsafe {
                let items = std::slice::from_raw_parts(nodelay_json_items(json, &mut count), count);
                let texts: Vec<&[u8]> = items[1..]
                    .iter()
                    .map(|i| std::slice::from_raw_parts(i.value.str, i.len as usize))
                    .collect();
                let want: Vec<&[u8]> = match doc.len() {
                    13 => vec![b"a\tb", b"c"],
                    18 => vec!["é\n".as_bytes(), b"dd"],
                    _ => vec![b"x"],
                };
                assert_eq!(texts, want);
                nodelay_json_free(json);
            }
        }
    }

    #[test]
    fn what_the_fast_path_leaves_is_a_code_of_its_own() {
        assert_eq!(
            parse(b"[1,]").err(),
            Some(nodelay_code::NODELAY_E_JSON_UNSUPPORTED)
        );
        assert_eq!(
            parse(b"").err(),
            Some(nodelay_code::NODELAY_E_JSON_UNSUPPORTED)
        );
        let mut out = std::ptr::null_mut();
        // SAFETY: a NULL document with a length is refused before any read.
        let code = unsafe { nodelay_json_parse(std::ptr::null(), 3, &mut out) };
        assert_eq!(code, nodelay_code::NODELAY_E_INVALID_ARGUMENT);
    }
}
