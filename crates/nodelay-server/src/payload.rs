//! Prebuilt static payloads, shared as `Bytes` so serving one is a reference-count
//! increment, never a copy or an allocation.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use bytes::Bytes;

use crate::limits::{INITIAL_PATTERN_BYTES, JSON_CACHE_ENTRIES, MAX_PAYLOAD_BYTES};

/// [`MAX_PAYLOAD_BYTES`] as a buffer length: growth never overshoots the limit.
const MAX_PATTERN_BYTES: usize = MAX_PAYLOAD_BYTES as usize;

/// The repeating alphabet of `/bytes` and `/chunked` bodies: byte `i` of every body
/// is `PATTERN[i % 36]`, so a client can check any prefix without the server.
pub const PATTERN: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Builds `n` bytes of [`PATTERN`].
pub fn pattern(n: usize) -> Vec<u8> {
    let mut buf = Vec::with_capacity(n);
    buf.extend_from_slice(PATTERN);
    // Doubling keeps the length a multiple of 36, so each copy stays in phase.
    while buf.len() < n {
        // The last copy may be partial: a prefix of an in-phase buffer is in phase.
        let grow = buf.len().min(n - buf.len());
        buf.extend_from_within(..grow);
    }
    buf.truncate(n);
    buf
}

/// The payload caches of one server.
#[derive(Debug)]
pub(crate) struct Payloads {
    /// One pattern buffer; every `/bytes/{n}` body is a slice of it, because a
    /// prefix of the pattern is the pattern. Grows (doubling) on a larger request.
    pattern: Mutex<Bytes>,
    /// `/json/{n}` documents by requested size, at most [`JSON_CACHE_ENTRIES`].
    json: Mutex<HashMap<u64, Bytes>>,
}

impl Default for Payloads {
    fn default() -> Self {
        Payloads {
            pattern: Mutex::new(Bytes::from(pattern(INITIAL_PATTERN_BYTES))),
            json: Mutex::new(HashMap::new()),
        }
    }
}

impl Payloads {
    /// `n` bytes of [`PATTERN`]; the caller has checked `n` against the limit.
    pub(crate) fn bytes(&self, n: usize) -> Bytes {
        {
            let shared = lock(&self.pattern);
            if n <= shared.len() {
                return shared.slice(..n);
            }
        }
        // Build outside the lock: a 1 GiB buffer takes a while, and other requests
        // keep using the old (still valid) buffer meanwhile.
        let current = lock(&self.pattern).len();
        let doubled = current.saturating_mul(2).min(MAX_PATTERN_BYTES);
        let built = Bytes::from(pattern(n.max(doubled)));
        let mut shared = lock(&self.pattern);
        if built.len() > shared.len() {
            *shared = built;
        }
        shared.slice(..n)
    }

    /// A JSON document of at least `n` bytes (see [`json_document`]), cached.
    pub(crate) fn json(&self, n: u64) -> Bytes {
        if let Some(doc) = lock(&self.json).get(&n) {
            return doc.clone();
        }
        let doc = Bytes::from(json_document(n));
        let mut cache = lock(&self.json);
        if cache.len() < JSON_CACHE_ENTRIES {
            cache.insert(n, doc.clone());
        }
        doc
    }
}

/// Builds `{"id": 1, "ok": true, "items": [...]}` with as many items as needed for
/// the document to be at least `n` bytes long.
pub fn json_document(n: u64) -> String {
    const HEAD: &str = r#"{"id": 1, "ok": true, "items": ["#;
    const TAIL: &str = "]}";
    let target = usize::try_from(n).unwrap_or(usize::MAX);
    let mut doc = String::with_capacity(target.saturating_add(64));
    doc.push_str(HEAD);
    let mut i: u64 = 0;
    while doc.len() + TAIL.len() < target {
        if i > 0 {
            doc.push_str(", ");
        }
        // Writing into a String cannot fail.
        let _ = write!(doc, r#"{{"i":{i},"name":"item-{i}","tags":["a","b"]}}"#);
        i += 1;
    }
    doc.push_str(TAIL);
    doc
}

/// Locks a cache mutex. A panic while holding it cannot leave the data half
/// written (each critical section is one assignment), so poisoning is ignored.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_in_phase_at_every_length() {
        for n in [0, 1, 35, 36, 37, 71, 72, 73, 1000, 4099] {
            let p = pattern(n);
            assert_eq!(p.len(), n);
            assert!(p.iter().enumerate().all(|(i, &b)| b == PATTERN[i % 36]));
        }
    }

    #[test]
    fn bytes_grow_past_the_initial_buffer() {
        let payloads = Payloads::default();
        let n = INITIAL_PATTERN_BYTES + 5;
        let b = payloads.bytes(n);
        assert_eq!(b.len(), n);
        assert_eq!(b[n - 1], PATTERN[(n - 1) % 36]);
        assert_eq!(payloads.bytes(10).as_ref(), b"abcdefghij");
    }

    #[test]
    fn json_document_is_at_least_n_and_well_formed() {
        assert_eq!(json_document(0), r#"{"id": 1, "ok": true, "items": []}"#);
        for n in [1, 100, 1000, 10_000] {
            let doc = json_document(n);
            assert!(doc.len() as u64 >= n);
            assert!(doc.ends_with("]}"));
        }
        assert!(json_document(120).contains(r#"{"i":1,"name":"item-1","tags":["a","b"]}"#));
    }
}
