//! The Set-Cookie attributes the jar reads by RFC 6265 §5.2 itself instead of
//! taking the `cookie` crate's reading: `Expires`, whose dates that crate
//! matches against a few fixed formats where the RFC has an algorithm
//! (`date.rs`), and `Domain`, whose value it trims of all whitespace where the
//! RFC trims only the ends.

use time::OffsetDateTime;

use super::date::parse_cookie_date;

/// What the jar takes from a Set-Cookie field's attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JarAttributes {
    /// The last `Expires` whose value is a cookie date (§5.2.1 ignores the
    /// others; §5.3 step 3 takes the last one of those left).
    pub expires: Option<OffsetDateTime>,
    /// The `Domain` attribute names no host at all (whitespace inside it),
    /// so no request host can domain-match it and §5.3 step 6 ignores the
    /// whole cookie.
    pub domain_matches_nothing: bool,
}

/// The `WSP` bytes §5.2 strips from both ends of an attribute's name and value.
fn trim_wsp(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// Reads the attributes of one Set-Cookie field value (§5.2: everything after
/// the first `;`, split at `;`, each `name=value` or a bare name).
pub(crate) fn read(set_cookie: &str) -> JarAttributes {
    let mut expires = None;
    let mut domain = None;
    let attributes = set_cookie.split_once(';').map_or("", |(_, rest)| rest);
    for attribute in attributes.split(';') {
        let (name, value) = attribute.split_once('=').unwrap_or((attribute, ""));
        let (name, value) = (trim_wsp(name), trim_wsp(value));
        if name.eq_ignore_ascii_case("expires") {
            if let Some(date) = parse_cookie_date(value) {
                expires = Some(date);
            }
        } else if name.eq_ignore_ascii_case("domain") && !value.is_empty() {
            domain = Some(value); // §5.2.3: an empty value is ignored
        }
    }
    // §5.2.3: one leading "." is dropped; what is left is compared with hosts.
    let domain_matches_nothing = domain
        .map(|d| d.strip_prefix('.').unwrap_or(d))
        .is_some_and(|d| d.chars().any(char::is_whitespace));
    JarAttributes {
        expires,
        domain_matches_nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expires(set_cookie: &str) -> Option<i64> {
        read(set_cookie).expires.map(OffsetDateTime::unix_timestamp)
    }

    #[test]
    fn the_last_valid_expires_wins() {
        assert_eq!(expires("a=1"), None);
        assert_eq!(
            expires("a=1; Expires=Thu, 01 Jan 1970 00:00:01 GMT"),
            Some(1)
        );
        assert_eq!(
            expires("a=1; expires=1 Jan 1970 00:00:01; EXPIRES=1 Jan 1970 00:00:02"),
            Some(2)
        );
        // An invalid later one is ignored, not a reset.
        assert_eq!(
            expires("a=1; Expires=1 Jan 1970 00:00:01; Expires=never"),
            Some(1)
        );
        // Whitespace around the name and the value is not part of them.
        assert_eq!(expires("a=1;  Expires \t=\t 1 Jan 1970 00:00:03 "), Some(3));
        // The name-value pair is never an attribute.
        assert_eq!(expires("Expires=1 Jan 1970 00:00:04"), None);
    }

    #[test]
    fn a_domain_with_inner_whitespace_matches_nothing() {
        let nothing = |s: &str| read(s).domain_matches_nothing;
        assert!(nothing("a=1; Domain=  .  example.org"));
        assert!(nothing("a=1; Domain=exa mple.org"));
        assert!(nothing("a=1; Domain=.example.org; Domain=. example.org"));
        assert!(!nothing("a=1; Domain=  .example.org  "));
        assert!(!nothing("a=1; Domain=example.org"));
        assert!(!nothing("a=1; Domain="));
        // An empty later Domain is ignored: the earlier one stands.
        assert!(nothing("a=1; Domain=a b.org; Domain="));
        assert!(!nothing("a=1"));
    }
}
