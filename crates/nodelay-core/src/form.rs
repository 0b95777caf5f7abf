//! `application/x-www-form-urlencoded` bodies, byte-identical to Python's
//! `urllib.parse.urlencode` (what requests and httpx send), in one pass.

/// Bytes sent as themselves: ASCII letters, digits and `_.-~` (RFC 3986
/// unreserved, as `quote_plus` leaves them). Space becomes `+`.
const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'~')
}

/// `is_unreserved` for every byte value (one load per byte).
static UNRESERVED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_unreserved(b as u8);
        b += 1;
    }
    table
};

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `text` percent-encoded: runs of unreserved bytes are copied in one
/// piece (a push per byte was ~23 instructions per byte, callgrind). The
/// output never needs more than 3 bytes per input byte: reserved once, so
/// the copies and pushes never grow the buffer.
fn push_encoded(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(3 * bytes.len());
    let mut run_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if UNRESERVED[usize::from(b)] {
            continue;
        }
        out.extend_from_slice(&bytes[run_start..i]);
        run_start = i + 1;
        if b == b' ' {
            out.push(b'+');
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0x0f)]]);
        }
    }
    out.extend_from_slice(&bytes[run_start..]);
}

/// Encodes `pairs` as `name=value&name=value`, UTF-8 percent-encoded.
pub fn urlencode<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    for (i, (name, value)) in pairs.into_iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        push_encoded(&mut out, name);
        out.push(b'=');
        push_encoded(&mut out, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::urlencode;

    #[test]
    fn matches_python_urlencode() {
        // urllib.parse.urlencode([("a b", "1&2"), ("é", "~*/+")]) in CPython 3.11:
        let expected = b"a+b=1%262&%C3%A9=~%2A%2F%2B";
        assert_eq!(urlencode([("a b", "1&2"), ("é", "~*/+")]), expected);
        assert_eq!(urlencode(std::iter::empty()), b"");
    }
}
