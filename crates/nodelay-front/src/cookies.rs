//! The glue between a request and the client's cookie jar: which `Cookie`
//! value a request gets, and storing a response's Set-Cookie fields. The jar
//! itself (RFC 6265 rules, cookies.txt) is `nodelay_core::cookies`.

use nodelay_core::cookies::CookieJar;

use crate::Head;

/// Whether a request header name is `Cookie` (ASCII case-insensitive).
/// `None` for a non-ASCII name: some languages' lowercasing maps a few
/// non-ASCII letters to ASCII ones (Python: KELVIN SIGN → `k`), so the front
/// decides those with its language's own rule, as its users would.
pub fn is_cookie_name(name: &str) -> Option<bool> {
    name.is_ascii().then(|| name.eq_ignore_ascii_case("cookie"))
}

/// The `Cookie` value to add to a request to `url`, or `None` when there is
/// nothing to add: the jar has no cookie for it, or the request carries its
/// own `Cookie` header (the caller's wins). `has_own_cookie` is only asked
/// when the jar has a value, so an empty jar costs neither a URL parse nor a
/// header scan.
pub fn request_cookie<E>(
    jar: &CookieJar,
    url: &str,
    has_own_cookie: impl FnOnce() -> Result<bool, E>,
) -> Result<Option<String>, E> {
    let Some(value) = jar.header_for_str(url).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    Ok((!has_own_cookie()?).then_some(value))
}

/// [`request_cookie`] for a request that also carries per-request cookies
/// (`extra`, name and value, as a client's `cookies=` argument): the jar's
/// cookies for `url` with those of `extra` replacing the ones of the same
/// name, then the rest of `extra` in order; still nothing when the request
/// has its own `Cookie` header (the caller's header wins over both).
pub fn request_cookie_with<E>(
    jar: &CookieJar,
    url: &str,
    extra: &[(&str, &str)],
    has_own_cookie: impl FnOnce() -> Result<bool, E>,
) -> Result<Option<String>, E> {
    if extra.is_empty() {
        return request_cookie(jar, url, has_own_cookie);
    }
    if has_own_cookie()? {
        return Ok(None);
    }
    let from_jar = jar.header_for_str(url).unwrap_or_default();
    Ok(Some(merge_cookies(&from_jar, extra)))
}

/// `jar_value` (a `Cookie` value, `name=value` pieces joined by `"; "`)
/// without the cookies `extra` names, then every cookie of `extra`.
fn merge_cookies(jar_value: &str, extra: &[(&str, &str)]) -> String {
    let replaced = |piece: &str| {
        let name = piece.split_once('=').map_or(piece, |(name, _)| name);
        extra.iter().any(|(n, _)| *n == name)
    };
    let kept = jar_value
        .split("; ")
        .filter(|piece| !piece.is_empty() && !replaced(piece));
    let added = extra.iter().map(|(name, value)| format!("{name}={value}"));
    let pieces: Vec<String> = kept.map(str::to_owned).chain(added).collect();
    pieces.join("; ")
}

/// Stores the Set-Cookie fields of a response from `url` in `jar`; true when
/// the jar changed (the front then autosaves or notifies). A head without
/// Set-Cookie returns at once, without parsing the URL.
pub fn store_response(jar: &CookieJar, head: &Head, url: &str) -> bool {
    let mut values = head.values("set-cookie").peekable();
    if values.peek().is_none() {
        return false;
    }
    jar.store_response_str(url, values).is_some_and(|n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_name_rule() {
        assert_eq!(is_cookie_name("Cookie"), Some(true));
        assert_eq!(is_cookie_name("COOKIE"), Some(true));
        assert_eq!(is_cookie_name("Cookies"), Some(false));
        assert_eq!(is_cookie_name("coo\u{212a}ie"), None);
    }

    #[test]
    fn request_cookie_respects_an_own_header_and_an_empty_jar() {
        let jar = CookieJar::new();
        let never = || -> Result<bool, ()> { panic!("asked with an empty jar") };
        assert_eq!(request_cookie(&jar, "http://a.test/", never), Ok(None));
        jar.store_response_str("http://a.test/", [&b"s=1"[..]]);
        let own = || Ok::<_, ()>(true);
        let none = || Ok::<_, ()>(false);
        assert_eq!(request_cookie(&jar, "http://a.test/x", own), Ok(None));
        assert_eq!(
            request_cookie(&jar, "http://a.test/x", none),
            Ok(Some("s=1".to_owned()))
        );
        assert_eq!(request_cookie(&jar, "http://b.test/", none), Ok(None));
    }

    #[test]
    fn per_request_cookies_replace_the_jars_of_the_same_name() {
        let jar = CookieJar::new();
        jar.store_response_str("http://a.test/", [&b"s=1"[..], &b"t=2"[..]]);
        let none = || Ok::<_, ()>(false);
        let own = || Ok::<_, ()>(true);
        let extra = [("t", "9"), ("u", "3")];
        assert_eq!(
            request_cookie_with(&jar, "http://a.test/", &extra, none),
            Ok(Some("s=1; t=9; u=3".to_owned()))
        );
        assert_eq!(
            request_cookie_with(&jar, "http://b.test/", &extra, none),
            Ok(Some("t=9; u=3".to_owned()))
        );
        assert_eq!(
            request_cookie_with(&jar, "http://a.test/", &extra, own),
            Ok(None)
        );
        assert_eq!(
            request_cookie_with(&jar, "http://a.test/", &[], none),
            Ok(Some("s=1; t=2".to_owned()))
        );
    }
}
