//! Where a request goes: the origin (pool key) and what goes on the wire.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use url::{Host, Url};

use crate::error::{Error, ErrorKind};

/// Scheme, host and port: the pool key (RFC 6454 origin). The host is
/// lowercase (the URL parser normalises it) and IPv6 literals carry no brackets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// `"http"` or `"https"`.
    pub scheme: &'static str,
    /// Shared, so cloning an origin (once per request) is a refcount bump.
    pub host: Arc<str>,
    /// The port, the scheme's default when the URL gives none.
    pub port: u16,
}

/// A parsed request URL.
#[derive(Debug, Clone)]
pub struct Target {
    /// Scheme, host and port: which connections may carry the request.
    pub origin: Origin,
    /// Value for the `Host` header: host, plus `:port` when not the default.
    pub authority: String,
    /// Origin-form request target: path and `?query`, never the fragment.
    pub path_and_query: String,
}

impl Target {
    /// Parses an absolute `http`/`https` URL; anything else is an
    /// `InvalidUrl` or `UnsupportedProtocol` error, and a URL carrying tabs
    /// or newlines a `LocalProtocol` one (docs/hostile.md F25).
    pub fn parse(raw: &str) -> Result<Target, Error> {
        // The URL parser silently strips tabs and newlines; a URL carrying them
        // is an injection attempt and is refused before anything is sent
        // (docs/hostile.md F25).
        if raw.bytes().any(|b| matches!(b, b'\r' | b'\n' | b'\t' | 0)) {
            return Err(Error::new(
                ErrorKind::LocalProtocol,
                "CR, LF, TAB or NUL in URL",
            ));
        }
        let url = Url::parse(raw).map_err(|e| match e {
            url::ParseError::RelativeUrlWithoutBase => Error::new(
                ErrorKind::UnsupportedProtocol,
                "Request URL is missing an 'http://' or 'https://' protocol.",
            ),
            other => Error::new(
                ErrorKind::InvalidUrl,
                format!("invalid URL {raw:?}: {other}"),
            )
            .with_source(other),
        })?;
        let scheme = match url.scheme() {
            "http" => "http",
            "https" => "https",
            other => {
                return Err(Error::new(
                    ErrorKind::UnsupportedProtocol,
                    format!("Request URL has an unsupported protocol '{other}://'"),
                ))
            }
        };
        let (host, bracketed) = match url.host() {
            Some(Host::Domain(d)) if !d.is_empty() => (d.to_owned(), d.to_owned()),
            Some(Host::Ipv4(ip)) => (ip.to_string(), ip.to_string()),
            Some(Host::Ipv6(ip)) => (ip.to_string(), format!("[{ip}]")),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidUrl,
                    format!("URL has no host: {raw:?}"),
                ))
            }
        };
        let authority = match url.port() {
            Some(port) => format!("{bracketed}:{port}"),
            None => bracketed,
        };
        let port = url
            .port_or_known_default()
            .unwrap_or(if scheme == "https" { 443 } else { 80 });
        let mut path_and_query = String::with_capacity(raw.len());
        path_and_query.push_str(url.path());
        if let Some(q) = url.query() {
            path_and_query.push('?');
            path_and_query.push_str(q);
        }
        Ok(Target {
            origin: Origin {
                scheme,
                host: host.into(),
                port,
            },
            authority,
            path_and_query,
        })
    }
}

/// Distinct `scheme://authority` prefixes a client remembers; past this the
/// cache is emptied and refilled (a crawler touching thousands of hosts pays
/// one full parse per new host, as without a cache).
pub const TARGET_CACHE_MAX_ORIGINS: usize = 64;

/// Parsed origins by the exact `scheme://authority` text of the URL.
///
/// Parsing a URL with the `url` crate (IDNA, IPv4 forms, percent-encoding,
/// the serialisation it builds) was 40% of the user-space instructions of a
/// small keep-alive GET (callgrind, docs/performance.md). Requests to a known
/// origin whose path and query need no normalisation skip it: the origin and
/// `Host` value come from the cache, the path and query are taken verbatim.
/// Anything else (unknown origin, userinfo, backslashes, dot segments, bytes
/// the parser would percent-encode) takes the full parse, so the result is
/// always the same as `Target::parse`.
/// A parsed origin and its `Host` header value.
type KnownOrigin = (Origin, Box<str>);

#[derive(Default)]
pub struct TargetCache {
    /// Read-locked on every request (no writer once the origins are known):
    /// threads sharing a client never wait on each other here.
    origins: RwLock<HashMap<Box<str>, KnownOrigin, FxBuild>>,
}

impl TargetCache {
    /// Same result as `Target::parse(raw)`.
    pub fn parse(&self, raw: &str) -> Result<Target, Error> {
        let Some((prefix, rest)) = split_origin(raw) else {
            return Target::parse(raw);
        };
        let Some(path_and_query) = verbatim_path_and_query(rest) else {
            return Target::parse(raw);
        };
        let known = self
            .origins
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(prefix)
            .cloned();
        if let Some((origin, authority)) = known {
            return Ok(Target {
                origin,
                authority: authority.into(),
                path_and_query,
            });
        }
        let target = Target::parse(raw)?;
        let mut origins = self.origins.write().unwrap_or_else(|p| p.into_inner());
        if origins.len() >= TARGET_CACHE_MAX_ORIGINS {
            origins.clear();
        }
        origins.insert(
            prefix.into(),
            (target.origin.clone(), target.authority.as_str().into()),
        );
        Ok(target)
    }
}

/// `("http://host:port", rest)` for a URL whose scheme is exactly `http` or
/// `https` and whose authority holds only host-name/IP characters (no
/// userinfo, no percent-escapes, no IPv6 brackets): the authority ends where
/// the URL parser ends it, at `/`, `?` or `#` (a `\` sends us to the parser).
fn split_origin(raw: &str) -> Option<(&str, &str)> {
    let after = raw
        .strip_prefix("http://")
        .map(|r| (7, r))
        .or_else(|| raw.strip_prefix("https://").map(|r| (8, r)))?;
    let (scheme_len, rest) = after;
    let end = rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority = &rest.as_bytes()[..end];
    if authority.is_empty()
        || !authority
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':'))
    {
        return None;
    }
    Some(raw.split_at(scheme_len + end))
}

/// The origin-form target for what follows the authority, when the URL parser
/// would keep it byte for byte: `/` for an empty path, no fragment, only
/// printable ASCII that no percent-encode set of the parser touches, no dot
/// segments (also not as `%2e`). `None`: let the parser decide. One pass, no
/// allocation but the result.
fn verbatim_path_and_query(rest: &str) -> Option<String> {
    let bytes = rest.as_bytes();
    let end = bytes.iter().position(|&b| b == b'#').unwrap_or(bytes.len());
    let kept = &bytes[..end];
    let mut in_query = false;
    // Bytes of the current path segment that are dots (`.` or `%2e`), and
    // whether it holds anything else; a segment of only 1 or 2 dots is a dot
    // segment the parser would resolve.
    let mut dots = 0usize;
    let mut other = false;
    let mut i = 0;
    while i < kept.len() {
        let b = kept[i];
        if !(0x21..=0x7e).contains(&b)
            || matches!(
                b,
                b'"' | b'<' | b'>' | b'`' | b'{' | b'}' | b'\\' | b'\'' | b'^' | b'|'
            )
        {
            return None;
        }
        if !in_query {
            match b {
                b'/' | b'?' => {
                    if !other && (dots == 1 || dots == 2) {
                        return None;
                    }
                    dots = 0;
                    other = false;
                    in_query = b == b'?';
                }
                b'.' => dots += 1,
                b'%' if kept.get(i + 1) == Some(&b'2')
                    && matches!(kept.get(i + 2), Some(b'e' | b'E')) =>
                {
                    return None; // an encoded dot: the parser's business
                }
                _ => other = true,
            }
        }
        i += 1;
    }
    if !in_query && !other && (dots == 1 || dots == 2) {
        return None;
    }
    let mut out = String::with_capacity(end + 1);
    if kept.first() != Some(&b'/') {
        out.push('/');
    }
    // Only printable ASCII was kept above.
    out.push_str(&rest[..end]);
    Some(out)
}

/// FxHash (rustc's): a fast hasher for the small, trusted-shape keys of the
/// client's maps (origins and their URL prefixes, at most a few dozen); SipHash
/// cost more than the whole map lookup on the per-request path.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.add(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        // The tail byte by byte: a `copy_from_slice` of a variable length is
        // a `memcpy` call (most of a short key's hashing cost, callgrind).
        let tail = words.remainder();
        if !tail.is_empty() {
            let word = tail
                .iter()
                .rev()
                .fold(0u64, |word, &b| (word << 8) | u64::from(b));
            self.add(word);
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// `HashMap` hasher of the client's small maps (see `FxHasher`).
pub(crate) type FxBuild = std::hash::BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    fn same(url: &str, cache: &TargetCache) {
        let full = Target::parse(url);
        let cached = cache.parse(url);
        match (full, cached) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.origin, b.origin, "{url}");
                assert_eq!(a.authority, b.authority, "{url}");
                assert_eq!(a.path_and_query, b.path_and_query, "{url}");
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{url}"),
            (a, b) => panic!("{url}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
        }
    }

    #[test]
    fn cached_targets_equal_full_parses() {
        let cache = TargetCache::default();
        let origins = [
            "http://127.0.0.1:8080",
            "http://Example.COM",
            "https://example.com:443",
            "http://example.com:80",
            "http://0x7f.1",
            "http://xn--bcher-kva.example",
            "http://a..b",
            "http://[::1]:8080",
            "http://user:pw@example.com",
            "http://exa%6dple.com",
            "http://example.com:99999",
            "http://",
            "https://bücher.example",
        ];
        let tails = [
            "",
            "/",
            "?",
            "?q=1",
            "#frag",
            "/#f",
            "/a/b/c",
            "/a//b",
            "/a/./b",
            "/a/../b",
            "/.",
            "/..",
            "/a/.",
            "/%2e/x",
            "/%2E%2E/x",
            "/%41",
            "/a b",
            "/a\"b",
            "/a<b>",
            "/a`b",
            "/{x}",
            "/a|b",
            "/a^b",
            "/a'b",
            "/?a'b",
            "/?a b",
            "/a\\b",
            "/é",
            "/?é",
            "/a?b/../c",
            "/a?b#c?d",
            "/~user/!$&()*+,;=:@",
            "/a%zz",
            "\\x",
            "/a\tb",
            "/a\rb",
            "/.a",
            "/a.",
            "/..a",
            "/a/..b/c",
            "/...",
            "/a/.?x",
            "/a/..?x",
            "?/../x",
            "/a?x/./y",
            "/%2",
            "/%2f",
            "/.%2e/",
            "/a/.#x",
            "//..",
            "/a%2E",
            "/a/%2e",
            "/a?%2e",
            "/.hidden/x",
        ];
        for _ in 0..2 {
            for origin in origins {
                for tail in tails {
                    same(&format!("{origin}{tail}"), &cache);
                }
            }
        }
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = TargetCache::default();
        for port in 0..(TARGET_CACHE_MAX_ORIGINS as u16 * 3) {
            let url = format!("http://127.0.0.1:{}/x", 1000 + port);
            assert_eq!(cache.parse(&url).unwrap().origin.port, 1000 + port);
            let len = cache.origins.read().unwrap().len();
            assert!(len <= TARGET_CACHE_MAX_ORIGINS);
        }
    }
}
