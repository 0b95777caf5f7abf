//! The cookie jar: RFC 6265 storage and retrieval over `cookie_store`, with
//! public-suffix rejection, hard caps, and the Netscape `cookies.txt` format
//! that curl (`-b`/`-c`) and LWP read and write.
//!
//! One `CookieJar` is shared by every request of a client (and may be shared
//! by several clients): all state sits behind one mutex, and the only lock-free
//! field is the cookie count, so a request to an empty jar costs one atomic
//! load (no URL parse, no lock).
//!
//! Rules beyond `cookie_store`'s own (docs/hostile.md J33–J34):
//! - a `Domain` attribute that is a public suffix (`com`, `co.uk`,
//!   `github.io`) is ignored unless it is the request host itself (RFC 6265
//!   §5.3 step 5), so `Domain=.com` can never plant a cookie for every site;
//! - a Secure cookie is sent over https only, never over plain http, not even
//!   to loopback (which `cookie_store` counts as secure, like browsers do);
//! - a Secure cookie set by a plain-http response is ignored (RFC 6265bis
//!   §5.7 step 8, what curl and browsers do);
//! - at most [`MAX_COOKIES_PER_RESPONSE`] Set-Cookie fields of one response
//!   are looked at and at most [`MAX_COOKIES_PER_JAR`] cookies are kept;
//! - `Expires` is read with RFC 6265 §5.1.1's cookie-date algorithm
//!   (`cookies/date.rs`), and a `Domain` with whitespace inside makes the
//!   cookie ignored (§5.2.3, §5.3 step 6: no host matches it), both read by
//!   `cookies/attributes.rs` rather than the `cookie` crate.
//!
//! Cookies set by hand without a domain ("any host" cookies, requests' and
//! httpx's `jar.set(name, value)`) are sent to every host whose path matches;
//! they are not written to `cookies.txt` (the format has no such cookie).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use cookie::Cookie as RawCookie;
use cookie_store::{CookieDomain, CookieExpiration, CookieStore, StoreAction};
use time::OffsetDateTime;
use url::Url;

mod attributes;
mod date;

/// Set-Cookie fields of one response beyond this many are ignored. RFC 6265
/// §6.1 asks user agents to keep at least 50 cookies per domain; a response
/// sending more is hostile or broken (docs/hostile.md J34: 10,000 fields → capped).
pub const MAX_COOKIES_PER_RESPONSE: usize = 50;

/// A jar holding this many cookies refuses new ones (replacing or deleting an
/// existing cookie still works). RFC 6265 §6.1 asks for at least 3000 in
/// total; the cap bounds memory and the per-request matching cost.
pub const MAX_COOKIES_PER_JAR: usize = 3000;

/// A Set-Cookie value longer than this is ignored. RFC 6265 §6.1 asks for at
/// least 4096 bytes per cookie (name + value + attributes); browsers cap the
/// name and value at 4096 and attributes at 1024 each, so 8 KiB covers any
/// cookie a browser would keep.
pub const MAX_SET_COOKIE_BYTES: usize = 8 * 1024;

/// The header line of a Netscape cookie file (curl checks for it loosely,
/// LWP's `HTTP::Cookies::Netscape` requires it).
pub const NETSCAPE_HEADER: &str = "# Netscape HTTP Cookie File";

/// Prefix curl puts before the domain of an HttpOnly cookie in cookies.txt.
const HTTP_ONLY_PREFIX: &str = "#HttpOnly_";

/// The Public Suffix List (publicsuffix.org, MPL 2.0), embedded so that the
/// rules do not depend on the machine: Debian's `publicsuffix` package copy.
static PUBLIC_SUFFIX_LIST: &str = include_str!("../data/public_suffix_list.dat");

/// The parsed list, built on the first cookie that carries a Domain attribute
/// and shared by every jar (`cookie_store` would otherwise hold a copy per jar).
fn public_suffixes() -> &'static publicsuffix::List {
    static LIST: OnceLock<publicsuffix::List> = OnceLock::new();
    LIST.get_or_init(|| {
        PUBLIC_SUFFIX_LIST
            .parse()
            .expect("the embedded public suffix list parses")
    })
}

/// One cookie as the jar holds it, for listing, `get` and `cookies.txt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieInfo {
    /// The cookie's name.
    pub name: String,
    /// The cookie's value, as the server set it.
    pub value: String,
    /// The host (host-only cookie) or the domain (domain cookie), without a
    /// leading dot; empty for an "any host" cookie.
    pub domain: String,
    /// True when only `domain` itself gets the cookie, not its subdomains.
    pub host_only: bool,
    /// The path prefix of the URLs that get the cookie.
    pub path: String,
    /// Sent over https only.
    pub secure: bool,
    /// Set with `HttpOnly` (hidden from scripts; kept for `cookies.txt`).
    pub http_only: bool,
    /// Expiry in seconds since the Unix epoch; `None` for a session cookie.
    pub expires: Option<i64>,
}

/// What `CookieJar::set` stores.
#[derive(Debug, Clone, Default)]
pub struct NewCookie<'a> {
    /// The cookie's name.
    pub name: &'a str,
    /// The cookie's value.
    pub value: &'a str,
    /// Empty: an "any host" cookie. A leading dot is ignored.
    pub domain: &'a str,
    /// True: `domain` only; false: `domain` and its subdomains.
    pub host_only: bool,
    /// The path prefix of the URLs that get the cookie.
    pub path: &'a str,
    /// Sent over https only.
    pub secure: bool,
    /// Set with `HttpOnly` (hidden from scripts; kept for `cookies.txt`).
    pub http_only: bool,
    /// Expiry in seconds since the Unix epoch; `None` for a session cookie.
    pub expires: Option<i64>,
}

/// Cookies without a domain, keyed by (path, name).
type AnyHost = BTreeMap<(String, String), CookieInfo>;

struct State {
    store: CookieStore,
    any_host: AnyHost,
}

/// A thread-safe RFC 6265 cookie jar.
pub struct CookieJar {
    state: Mutex<State>,
    /// Cookies held (unexpired when last counted): zero means "nothing to send".
    len: AtomicUsize,
}

impl Default for CookieJar {
    fn default() -> Self {
        Self::new()
    }
}

impl CookieJar {
    /// An empty jar.
    pub fn new() -> Self {
        CookieJar {
            state: Mutex::new(State {
                store: CookieStore::new(),
                any_host: AnyHost::new(),
            }),
            len: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps half-updated in
        // a way that matters more than losing the jar, so keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True when the jar holds no cookie (one atomic load).
    pub fn is_empty(&self) -> bool {
        self.len.load(Ordering::Relaxed) == 0
    }

    /// Number of unexpired cookies.
    pub fn len(&self) -> usize {
        let mut state = self.lock();
        self.recount(&mut state)
    }

    /// Drops expired cookies and stores the new count.
    fn recount(&self, state: &mut State) -> usize {
        let expired: Vec<(String, String, String)> = state
            .store
            .iter_any()
            .filter(|c| c.is_expired())
            .map(|c| {
                (
                    String::from(&c.domain),
                    String::from(&c.path),
                    c.name().to_owned(),
                )
            })
            .collect();
        for (domain, path, name) in &expired {
            state.store.remove(domain, path, name);
        }
        let now = OffsetDateTime::now_utc().unix_timestamp();
        state
            .any_host
            .retain(|_, c| !matches!(c.expires, Some(t) if t <= now));
        let n = state.store.iter_any().count() + state.any_host.len();
        self.len.store(n, Ordering::Relaxed);
        n
    }

    /// The `Cookie` header value for a request to `url`, or `None` when no
    /// cookie applies. Returns at once, without parsing, when the jar is empty.
    pub fn header_for_str(&self, url: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let url = Url::parse(url).ok()?;
        self.header_for(&url)
    }

    /// The `Cookie` header value for a request to `url` (RFC 6265 §5.4):
    /// domain, path, expiry and Secure rules; longer paths first.
    pub fn header_for(&self, url: &Url) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let https = url.scheme() == "https";
        let state = self.lock();
        let mut found: Vec<(&str, &str, usize)> = state
            .store
            .matches(url)
            .into_iter()
            .filter(|c| https || !c.secure().unwrap_or(false))
            .map(|c| (c.name(), c.value(), String::from(&c.path).len()))
            .collect();
        let now = OffsetDateTime::now_utc().unix_timestamp();
        for cookie in state.any_host.values() {
            if (https || !cookie.secure)
                && !matches!(cookie.expires, Some(t) if t <= now)
                && path_matches(&cookie.path, url.path())
            {
                found.push((&cookie.name, &cookie.value, cookie.path.len()));
            }
        }
        if found.is_empty() {
            return None;
        }
        // Stable: equal path lengths keep the store's order.
        found.sort_by_key(|c| std::cmp::Reverse(c.2));
        let mut header = String::new();
        for (name, value, _) in found {
            if !header.is_empty() {
                header.push_str("; ");
            }
            header.push_str(name);
            header.push('=');
            header.push_str(value);
        }
        Some(header)
    }

    /// `store_response` for a URL given as text; `None` when it does not parse.
    pub fn store_response_str<'a, I>(&self, url: &str, values: I) -> Option<usize>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let url = Url::parse(url).ok()?;
        Some(self.store_response(&url, values))
    }

    /// Stores the Set-Cookie field values of a response to `url`. Returns how
    /// many cookies were added, replaced or deleted. Values that are not UTF-8
    /// or do not parse are skipped, as are fields past the per-response cap.
    pub fn store_response<'a, I>(&self, url: &Url, values: I) -> usize
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut state = self.lock();
        let mut changed = 0;
        for value in values.into_iter().take(MAX_COOKIES_PER_RESPONSE) {
            if value.len() > MAX_SET_COOKIE_BYTES {
                continue;
            }
            let Ok(text) = std::str::from_utf8(value) else {
                continue;
            };
            let Ok(mut raw) = RawCookie::parse(text) else {
                continue;
            };
            let attributes = attributes::read(text);
            if attributes.domain_matches_nothing {
                continue;
            }
            match attributes.expires {
                Some(expires) => raw.set_expires(expires),
                None => raw.unset_expires(),
            }
            if raw.secure() == Some(true) && url.scheme() != "https" {
                continue; // RFC 6265bis: Secure only from secure origins.
            }
            if insert(&mut state.store, &raw, url) {
                changed += 1;
            }
        }
        if changed > 0 {
            self.recount(&mut state);
        }
        changed
    }

    /// Stores one cookie given by the user (no Set-Cookie parsing rules beyond
    /// the caps: the user may set any domain, a public suffix included).
    pub fn set(&self, new: &NewCookie<'_>) -> bool {
        let mut state = self.lock();
        let domain = new.domain.trim_start_matches('.');
        let path = if new.path.starts_with('/') {
            new.path
        } else {
            "/"
        };
        let stored = if domain.is_empty() {
            let key = (path.to_owned(), new.name.to_owned());
            let full = self.len.load(Ordering::Relaxed) >= MAX_COOKIES_PER_JAR;
            if full && !state.any_host.contains_key(&key) {
                false
            } else {
                let info = CookieInfo {
                    name: new.name.to_owned(),
                    value: new.value.to_owned(),
                    domain: String::new(),
                    host_only: false,
                    path: path.to_owned(),
                    secure: new.secure,
                    http_only: new.http_only,
                    expires: new.expires,
                };
                state.any_host.insert(key, info);
                true
            }
        } else {
            match build_raw(new, domain, path) {
                Some((raw, url)) => insert_unchecked(&mut state.store, &raw, &url),
                None => false,
            }
        };
        self.recount(&mut state);
        stored
    }

    /// Every unexpired cookie, in the store's order (domains sorted).
    pub fn cookies(&self) -> Vec<CookieInfo> {
        let state = self.lock();
        let mut out: Vec<CookieInfo> = state.any_host.values().cloned().collect();
        out.extend(state.store.iter_unexpired().map(info));
        out
    }

    /// Removes the cookies named `name` (every one when `None`) whose domain
    /// (leading dot ignored) and path equal the given ones when those are
    /// given. Returns how many were removed.
    pub fn remove(&self, name: Option<&str>, domain: Option<&str>, path: Option<&str>) -> usize {
        let domain = domain.map(|d| d.trim_start_matches('.'));
        let keep = |c: &CookieInfo| {
            name.is_some_and(|n| n != c.name)
                || domain.is_some_and(|d| !d.eq_ignore_ascii_case(&c.domain))
                || path.is_some_and(|p| p != c.path)
        };
        let mut state = self.lock();
        let before = state.any_host.len();
        state.any_host.retain(|_, c| keep(c));
        let mut removed = before - state.any_host.len();
        let doomed: Vec<(String, String, String)> = state
            .store
            .iter_any()
            .filter(|c| !keep(&info(c)))
            .map(|c| {
                (
                    String::from(&c.domain),
                    String::from(&c.path),
                    c.name().to_owned(),
                )
            })
            .collect();
        for (d, p, n) in &doomed {
            if state.store.remove(d, p, n).is_some() {
                removed += 1;
            }
        }
        self.recount(&mut state);
        removed
    }

    /// Removes every cookie.
    pub fn clear(&self) {
        let mut state = self.lock();
        state.store.clear();
        state.any_host.clear();
        self.len.store(0, Ordering::Relaxed);
    }

    /// The persistent and session cookies in Netscape `cookies.txt` format
    /// (session cookies with expiry 0, as curl writes them). "Any host"
    /// cookies have no place in the format and are left out.
    pub fn to_netscape(&self) -> String {
        let mut out = String::from(NETSCAPE_HEADER);
        out.push_str("\n# Written by nodelay. Edit at your own risk.\n\n");
        for c in self.cookies() {
            if c.domain.is_empty() {
                continue;
            }
            // Tabs or newlines inside a field would break the line format.
            let fields = [&c.name, &c.value, &c.path, &c.domain];
            if fields.iter().any(|f| f.contains(['\t', '\n', '\r'])) {
                continue;
            }
            let _ = writeln!(
                out,
                "{}{}{}\t{}\t{}\t{}\t{}\t{}\t{}",
                if c.http_only { HTTP_ONLY_PREFIX } else { "" },
                if c.host_only { "" } else { "." },
                c.domain,
                if c.host_only { "FALSE" } else { "TRUE" },
                c.path,
                if c.secure { "TRUE" } else { "FALSE" },
                c.expires.unwrap_or(0).max(0),
                c.name,
                c.value,
            );
        }
        out
    }

    /// Adds the cookies of a Netscape `cookies.txt` text (as written by curl
    /// `-c`, LWP, browsers' exporters). Lines that do not parse and expired
    /// cookies are skipped; expiry 0, or an empty expiry field (what Python's
    /// `http.cookiejar.MozillaCookieJar` writes), means a session cookie.
    /// Returns how many cookies were stored.
    pub fn load_netscape(&self, text: &str) -> usize {
        let now = OffsetDateTime::now_utc().unix_timestamp();
        let mut loaded = 0;
        let mut state = self.lock();
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            let (http_only, line) = match line.strip_prefix(HTTP_ONLY_PREFIX) {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let [domain, subdomains, path, secure, expires, name, rest @ ..] = fields.as_slice()
            else {
                continue;
            };
            // A value may be absent (curl writes "name\t" for an empty value).
            let value = rest.first().copied().unwrap_or("");
            let expires = match expires.trim() {
                "" => 0,
                digits => match digits.parse::<i64>() {
                    Ok(t) => t,
                    Err(_) => continue,
                },
            };
            if expires != 0 && expires <= now {
                continue;
            }
            let new = NewCookie {
                name,
                value,
                domain,
                host_only: !subdomains.eq_ignore_ascii_case("TRUE"),
                path,
                secure: secure.eq_ignore_ascii_case("TRUE"),
                http_only,
                expires: (expires != 0).then_some(expires),
            };
            let domain = domain.trim_start_matches('.');
            if domain.is_empty() || name.is_empty() {
                continue;
            }
            if let Some((raw, url)) = build_raw(&new, domain, path) {
                if insert_unchecked(&mut state.store, &raw, &url) {
                    loaded += 1;
                }
            }
        }
        self.recount(&mut state);
        loaded
    }

    /// Writes the jar to `path` in `cookies.txt` format, atomically (a
    /// temporary file in the same directory, then a rename).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let text = self.to_netscape();
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }

    /// Adds the cookies of the `cookies.txt` file at `path`.
    pub fn load(&self, path: &Path) -> io::Result<usize> {
        let bytes = std::fs::read(path)?;
        Ok(self.load_netscape(&String::from_utf8_lossy(&bytes)))
    }
}

/// RFC 6265 §5.1.4 path-match of a request path against a cookie path.
fn path_matches(cookie_path: &str, request_path: &str) -> bool {
    request_path == cookie_path
        || (request_path.starts_with(cookie_path)
            && (cookie_path.ends_with('/')
                || request_path.as_bytes().get(cookie_path.len()) == Some(&b'/')))
}

/// A parsed Set-Cookie from `url`, through the public-suffix rule and the
/// per-jar cap, into the store. True when the store changed.
fn insert(store: &mut CookieStore, raw: &RawCookie<'_>, url: &Url) -> bool {
    let Ok(mut cookie) = cookie_store::Cookie::try_from_raw_cookie(raw, url) else {
        return false; // unparsable, or a Domain that does not cover the host
    };
    if matches!(cookie.domain, CookieDomain::Suffix(_))
        && cookie.domain.is_public_suffix(public_suffixes())
    {
        // RFC 6265 §5.3 step 5: a public-suffix domain is only acceptable as
        // the request host itself, and then the cookie becomes host-only.
        if !cookie.domain.host_is_identical(url) {
            return false;
        }
        match CookieDomain::host_only(url) {
            Ok(domain) => cookie.domain = domain,
            Err(_) => return false,
        }
    }
    insert_capped(store, cookie.into_owned(), url)
}

/// Inserts a user-made cookie (from `set` or a cookie file) without the
/// public-suffix rule: the user decides.
fn insert_unchecked(store: &mut CookieStore, raw: &RawCookie<'_>, url: &Url) -> bool {
    match cookie_store::Cookie::try_from_raw_cookie(raw, url) {
        Ok(cookie) => insert_capped(store, cookie.into_owned(), url),
        Err(_) => false,
    }
}

fn insert_capped(
    store: &mut CookieStore,
    cookie: cookie_store::Cookie<'static>,
    url: &Url,
) -> bool {
    let domain = String::from(&cookie.domain);
    let path = String::from(&cookie.path);
    if !store.contains_any(&domain, &path, cookie.name())
        && store.iter_any().count() >= MAX_COOKIES_PER_JAR
    {
        return false;
    }
    matches!(
        store.insert(cookie, url),
        Ok(StoreAction::Inserted | StoreAction::UpdatedExisting | StoreAction::ExpiredExisting)
    )
}

/// The Set-Cookie equivalent of a user-made cookie, and an https URL on its
/// domain and path to "receive" it from (https so that Secure is accepted).
fn build_raw(new: &NewCookie<'_>, domain: &str, path: &str) -> Option<(RawCookie<'static>, Url)> {
    if new.name.is_empty() || new.name.contains([';', '=', '\t', '\r', '\n']) {
        return None;
    }
    let mut raw = RawCookie::new(new.name.to_owned(), new.value.to_owned());
    if !new.host_only {
        raw.set_domain(domain.to_owned());
    }
    raw.set_path(path.to_owned());
    if new.secure {
        raw.set_secure(true);
    }
    if new.http_only {
        raw.set_http_only(true);
    }
    if let Some(t) = new.expires {
        raw.set_expires(OffsetDateTime::from_unix_timestamp(t).ok()?);
    }
    let host = if domain.contains(':') && !domain.starts_with('[') {
        format!("[{domain}]") // a bare IPv6 address
    } else {
        domain.to_owned()
    };
    let url = Url::parse(&format!("https://{host}{path}")).ok()?;
    Some((raw, url))
}

fn info(c: &cookie_store::Cookie<'static>) -> CookieInfo {
    let (domain, host_only) = match &c.domain {
        CookieDomain::HostOnly(d) => (d.clone(), true),
        CookieDomain::Suffix(d) => (d.clone(), false),
        CookieDomain::NotPresent | CookieDomain::Empty => (String::new(), true),
    };
    CookieInfo {
        name: c.name().to_owned(),
        value: c.value().to_owned(),
        domain,
        host_only,
        path: String::from(&c.path),
        secure: c.secure().unwrap_or(false),
        http_only: c.http_only().unwrap_or(false),
        expires: match c.expires {
            CookieExpiration::AtUtc(t) => Some(t.unix_timestamp()),
            CookieExpiration::SessionEnd => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn store(jar: &CookieJar, u: &str, values: &[&str]) -> usize {
        jar.store_response(&url(u), values.iter().map(|v| v.as_bytes()))
    }

    #[test]
    fn empty_jar_sends_nothing() {
        let jar = CookieJar::new();
        assert!(jar.is_empty());
        assert_eq!(jar.header_for_str("http://a.test/"), None);
    }

    #[test]
    fn host_only_and_domain_cookies() {
        let jar = CookieJar::new();
        let n = store(
            &jar,
            "http://www.example.com/",
            &["a=1; Path=/", "b=2; Domain=example.com; Path=/"],
        );
        assert_eq!(n, 2);
        assert_eq!(
            jar.header_for_str("http://www.example.com/x").as_deref(),
            Some("a=1; b=2")
        );
        assert_eq!(
            jar.header_for_str("http://sub.example.com/").as_deref(),
            Some("b=2")
        );
        assert_eq!(jar.header_for_str("http://other.test/"), None);
    }

    #[test]
    fn public_suffix_and_foreign_domains_are_ignored() {
        let jar = CookieJar::new();
        let n = store(
            &jar,
            "http://www.example.com/",
            &[
                "a=1; Domain=com",
                "b=2; Domain=.com",
                "c=3; Domain=co.uk",
                "d=4; Domain=other.com",
            ],
        );
        assert_eq!(n, 0);
        assert!(jar.is_empty());
        // A public suffix that is the host itself becomes host-only.
        assert_eq!(
            store(&jar, "http://github.io/", &["e=5; Domain=github.io"]),
            1
        );
        assert!(jar.cookies()[0].host_only);
        assert_eq!(jar.header_for_str("http://x.github.io/"), None);
    }

    #[test]
    fn secure_cookies_only_over_https() {
        let jar = CookieJar::new();
        assert_eq!(
            store(&jar, "https://127.0.0.1/", &["s=1; Secure; Path=/"]),
            1
        );
        assert_eq!(jar.header_for_str("http://127.0.0.1/"), None);
        assert_eq!(
            jar.header_for_str("https://127.0.0.1/").as_deref(),
            Some("s=1")
        );
        // Secure from plain http: ignored.
        assert_eq!(store(&jar, "http://127.0.0.1/", &["t=1; Secure"]), 0);
    }

    #[test]
    fn paths_and_expiry() {
        let jar = CookieJar::new();
        store(
            &jar,
            "http://a.test/",
            &["root=1; Path=/", "deep=2; Path=/x/y"],
        );
        assert_eq!(
            jar.header_for_str("http://a.test/x").as_deref(),
            Some("root=1")
        );
        assert_eq!(
            jar.header_for_str("http://a.test/x/y/z").as_deref(),
            Some("deep=2; root=1")
        );
        assert_eq!(
            jar.header_for_str("http://a.test/x/yz").as_deref(),
            Some("root=1")
        );
        assert_eq!(
            store(&jar, "http://a.test/", &["root=; Path=/; Max-Age=0"]),
            1
        );
        assert_eq!(
            store(
                &jar,
                "http://a.test/",
                &["deep=; Path=/x/y; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]
            ),
            1
        );
        assert_eq!(jar.header_for_str("http://a.test/x/y/z"), None);
        assert_eq!(jar.len(), 0);
    }

    #[test]
    fn expires_dates_by_the_cookie_date_algorithm() {
        let jar = CookieJar::new();
        // Formats the `cookie` crate's fixed patterns do not read.
        let persistent = [
            "a=1; Expires=Wed, 1 Jan 2031 00:00:00 GMT",
            "b=1; Expires=Wed, 01 Jan 2031 1:2:3 GMT",
            "c=1; Expires=Wednesday, 01-Jan-31 00:00:00 GMT",
            "d=1; Expires=Wed Jan  1 00:00:00 2031",
        ];
        assert_eq!(store(&jar, "http://a.test/", &persistent), 4);
        let expiries: Vec<Option<i64>> = jar.cookies().iter().map(|c| c.expires).collect();
        assert_eq!(
            expiries,
            [
                Some(1_924_992_000),
                Some(1_924_995_723),
                Some(1_924_992_000),
                Some(1_924_992_000)
            ]
        );
        // A past date in any of those shapes deletes the stored cookie.
        let deletions = [
            "a=; Expires=Thursday, 01-Jan-1970 00:00:00 GMT",
            "b=; Expires=Thu, 1 Jan 1970 0:0:0 GMT",
            "c=; Expires=Thu Jan  1 00:00:00 1970",
        ];
        assert_eq!(store(&jar, "http://a.test/", &deletions), 3);
        assert_eq!(jar.header_for_str("http://a.test/").as_deref(), Some("d=1"));
        // Garbage is no date: the cookie is a session cookie.
        assert_eq!(store(&jar, "http://a.test/", &["e=1; Expires=soon"]), 1);
        let e = jar.cookies().into_iter().find(|c| c.name == "e").unwrap();
        assert_eq!(e.expires, None);
    }

    #[test]
    fn a_domain_with_inner_whitespace_sets_no_cookie() {
        let jar = CookieJar::new();
        let n = store(
            &jar,
            "http://www.example.org/",
            &["a=1; Domain=  .  example.org", "b=1; Domain=example .org"],
        );
        assert_eq!(n, 0);
        assert!(jar.is_empty());
        // Whitespace at the ends only is trimmed: a domain cookie.
        assert_eq!(
            store(
                &jar,
                "http://www.example.org/",
                &["c=1; Domain=  .example.org  "]
            ),
            1
        );
        assert_eq!(
            jar.header_for_str("http://other.example.org/").as_deref(),
            Some("c=1")
        );
    }

    #[test]
    fn netscape_empty_expiry_is_a_session_cookie() {
        // The line `http.cookiejar.MozillaCookieJar.save(ignore_discard=True)`
        // writes for a session cookie: the expiry field is empty.
        let jar = CookieJar::new();
        let text = "# Netscape HTTP Cookie File\n\
                    example.org\tFALSE\t/\tFALSE\t\tsid\tabc\n\
                    example.org\tFALSE\t/\tFALSE\tsoon\tbad\tx\n";
        assert_eq!(jar.load_netscape(text), 1);
        let c = &jar.cookies()[0];
        assert_eq!(
            (c.name.as_str(), c.value.as_str(), c.expires),
            ("sid", "abc", None)
        );
    }

    #[test]
    fn caps() {
        let jar = CookieJar::new();
        let values: Vec<String> = (0..10_000).map(|i| format!("c{i}=v; Path=/")).collect();
        let n = jar.store_response(&url("http://a.test/"), values.iter().map(|v| v.as_bytes()));
        assert_eq!(n, MAX_COOKIES_PER_RESPONSE);
        for round in 0..100 {
            let values: Vec<String> = (0..50).map(|i| format!("r{round}x{i}=v")).collect();
            jar.store_response(&url("http://a.test/"), values.iter().map(|v| v.as_bytes()));
        }
        assert_eq!(jar.len(), MAX_COOKIES_PER_JAR);
        // Replacing an existing cookie still works when full.
        assert_eq!(store(&jar, "http://a.test/", &["c0=new; Path=/"]), 1);
    }

    #[test]
    fn netscape_round_trip() {
        let jar = CookieJar::new();
        store(
            &jar,
            "https://www.example.com/",
            &[
                "a=1; Path=/",
                "b=2; Domain=example.com; Path=/p; Secure; HttpOnly; Max-Age=3600",
            ],
        );
        jar.set(&NewCookie {
            name: "any",
            value: "x",
            path: "/",
            ..NewCookie::default()
        });
        let text = jar.to_netscape();
        assert!(text.starts_with(NETSCAPE_HEADER));
        assert!(text.contains("www.example.com\tFALSE\t/\tFALSE\t0\ta\t1\n"));
        assert!(text.contains("#HttpOnly_.example.com\tTRUE\t/p\tTRUE\t"));
        assert!(!text.contains("any"));
        let copy = CookieJar::new();
        assert_eq!(copy.load_netscape(&text), 2);
        let mut a = jar.cookies();
        a.retain(|c| !c.domain.is_empty());
        assert_eq!(copy.cookies(), a);
    }

    #[test]
    fn any_host_cookies_and_remove() {
        let jar = CookieJar::new();
        jar.set(&NewCookie {
            name: "k",
            value: "v",
            path: "/",
            ..NewCookie::default()
        });
        assert_eq!(
            jar.header_for_str("http://anything.test/a").as_deref(),
            Some("k=v")
        );
        assert_eq!(jar.remove(Some("k"), None, None), 1);
        assert!(jar.is_empty());
    }
}
