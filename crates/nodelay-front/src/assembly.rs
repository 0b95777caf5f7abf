//! Request assembly: the header fields a request is sent with, from the
//! caller's fields, the cookie jar's `Cookie` value and the client's default
//! fields. The rule, written once for every front: the caller's fields come
//! first and win; the jar's `Cookie` is added only when the caller has none
//! ([`crate::cookies::request_cookie`]); a client default (`User-Agent`,
//! `Accept-Encoding`, ...) is added only when no field of that name is there.

/// Whether `fields` has a field called `name` (ASCII case-insensitive, as
/// field names are on the wire).
pub fn has_field(fields: &[(&str, &str)], name: &str) -> bool {
    fields.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// Appends to `fields` the jar's `cookie` value (already decided by
/// [`crate::cookies::request_cookie`]; `None` or empty adds nothing), then
/// each of the client's `defaults` whose name `fields` does not have.
pub fn assemble<'a>(
    fields: &mut Vec<(&'a str, &'a str)>,
    cookie: Option<&'a str>,
    defaults: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    if let Some(value) = cookie.filter(|v| !v.is_empty()) {
        fields.push(("Cookie", value));
    }
    for (name, value) in defaults {
        if !has_field(fields, name) {
            fields.push((name, value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callers_fields_win_and_defaults_fill_the_rest() {
        let mut fields = vec![("user-agent", "mine/1"), ("X-A", "1")];
        assemble(
            &mut fields,
            Some("s=1"),
            [("User-Agent", "nodelay/0"), ("Accept-Encoding", "gzip")],
        );
        assert_eq!(
            fields,
            [
                ("user-agent", "mine/1"),
                ("X-A", "1"),
                ("Cookie", "s=1"),
                ("Accept-Encoding", "gzip")
            ]
        );
    }

    #[test]
    fn an_empty_cookie_adds_nothing() {
        let mut fields = vec![];
        assemble(&mut fields, Some(""), []);
        assemble(&mut fields, None, []);
        assert!(fields.is_empty());
    }
}
