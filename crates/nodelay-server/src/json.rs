//! Just enough JSON writing for the introspection routes (RFC 8259), so the crate
//! needs no serialisation dependency. Output is compact and in insertion order.

use std::fmt::Write as _;

/// Appends `s` as a JSON string literal, quotes included (RFC 8259 §7).
pub(crate) fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Other control characters must be escaped; writing to a String cannot fail.
            c if c < '\u{20}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends an object of string values. A repeated key keeps its first position
/// and its last value, as a client's dict would.
pub(crate) fn push_str_map<'a>(
    out: &mut String,
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    let mut unique: Vec<(&str, &str)> = Vec::new();
    for (key, value) in pairs {
        match unique.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => unique.push((key, value)),
        }
    }
    out.push('{');
    for (i, (key, value)) in unique.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_str(out, key);
        out.push_str(": ");
        push_str(out, value);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_quotes_backslashes_and_controls() {
        let mut out = String::new();
        push_str(&mut out, "a\"b\\c\nd\u{1}é");
        assert_eq!(out, r#""a\"b\\c\nd\u0001é""#);
    }

    #[test]
    fn map_keeps_first_position_and_last_value() {
        let mut out = String::new();
        push_str_map(&mut out, [("a", "1"), ("b", "2"), ("a", "3")]);
        assert_eq!(out, r#"{"a": "3", "b": "2"}"#);
    }
}
