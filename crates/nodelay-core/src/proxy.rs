//! Proxy configuration, resolved once per client, and the per-request route:
//! direct, forwarded through an HTTP proxy (absolute-form request target),
//! tunnelled with CONNECT, or through a SOCKS proxy (`socks.rs`).
//!
//! A client without proxies has no `Proxies` at all, so its requests pay
//! nothing for this module (not even a NO_PROXY lookup).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use url::{Host, Url};

use crate::error::{Error, ErrorKind};
use crate::no_proxy::NoProxy;
use crate::socks::{Credentials, SocksVersion, MAX_CREDENTIAL_BYTES};
use crate::target::{Origin, Target};

/// Port of a SOCKS proxy URL without one: the port IANA assigned to SOCKS
/// (curl's and PySocks' default).
pub(crate) const SOCKS_DEFAULT_PORT: u16 = 1080;

/// Default port of a proxy URL without one: the scheme's for HTTP proxies
/// (as requests, urllib3 and httpx do), 1080 for SOCKS ones.
fn default_proxy_port(scheme: &str) -> u16 {
    match scheme {
        "https" => 443,
        "http" => 80,
        _ => SOCKS_DEFAULT_PORT,
    }
}

/// The URL of a proxy, parsed, with the parts every kind of proxy needs: its
/// scheme, host, port and percent-decoded credentials.
struct ProxyUrl {
    origin: Origin,
    /// `(user, password)` when the URL has userinfo.
    credentials: Option<(Vec<u8>, Vec<u8>)>,
}

/// Parses a proxy URL of any kind we speak (`proxy:3128` alone is an http
/// proxy, as for curl and requests).
fn parse_proxy_url(raw: &str) -> Result<ProxyUrl, Error> {
    let with_scheme;
    let raw = if raw.contains("://") {
        raw
    } else {
        with_scheme = format!("http://{raw}");
        &with_scheme
    };
    let invalid = |why: &str| {
        Error::new(
            ErrorKind::InvalidUrl,
            format!("invalid proxy URL {}: {why}", mask_userinfo(raw)),
        )
    };
    if raw.bytes().any(|b| b.is_ascii_control()) {
        return Err(invalid("control characters"));
    }
    let url = Url::parse(raw).map_err(|e| invalid(&e.to_string()))?;
    let scheme = match url.scheme() {
        "http" => "http",
        "https" => "https",
        other => match SocksVersion::from_scheme(other) {
            Some(version) => version.scheme(),
            None => {
                return Err(Error::new(
                    ErrorKind::UnsupportedProtocol,
                    format!(
                        "unsupported proxy scheme '{other}://' in {} (http://, https://, \
                         socks5://, socks5h://, socks4:// and socks4a:// proxies are supported)",
                        mask_userinfo(raw)
                    ),
                ))
            }
        },
    };
    let host = match url.host() {
        Some(Host::Domain(d)) if !d.is_empty() => d.to_owned(),
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => ip.to_string(),
        _ => return Err(invalid("no host")),
    };
    let credentials = if url.username().is_empty() && url.password().is_none() {
        None
    } else {
        Some((
            percent_decode(url.username()),
            percent_decode(url.password().unwrap_or("")),
        ))
    };
    Ok(ProxyUrl {
        origin: Origin {
            scheme,
            host: host.into(),
            port: url.port().unwrap_or(default_proxy_port(scheme)),
        },
        credentials,
    })
}

/// The proxy settings of a client, as given (URLs and a NO_PROXY list).
/// The Python layer resolves the environment and explicit arguments into this.
#[derive(Debug, Clone, Default)]
pub struct ProxySettings {
    /// Proxy for `http://` targets, e.g. `http://user:pass@proxy:3128`.
    pub http: Option<String>,
    /// Proxy for `https://` targets (reached with CONNECT).
    pub https: Option<String>,
    /// Targets that go direct (NO_PROXY syntax, see `no_proxy.rs`).
    pub no_proxy: Option<String>,
}

/// One proxy server.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Proxy {
    /// Where the proxy listens; `scheme` is how we talk to it (`https`: TLS).
    pub origin: Origin,
    /// `Basic ...` from the URL's userinfo. Never displayed.
    authorization: Option<String>,
}

impl Proxy {
    /// An HTTP proxy from a `http://` or `https://` URL.
    #[cfg(test)]
    pub fn parse(raw: &str) -> Result<Proxy, Error> {
        match AnyProxy::parse(raw)? {
            AnyProxy::Http(proxy) => Ok(Arc::unwrap_or_clone(proxy)),
            AnyProxy::Socks(proxy) => Err(Error::new(
                ErrorKind::InvalidUrl,
                format!("{proxy} is not an HTTP proxy"),
            )),
        }
    }

    fn from_url(url: ProxyUrl) -> Proxy {
        let authorization = url.credentials.map(|(user, password)| {
            let mut credentials = user;
            credentials.push(b':');
            credentials.extend_from_slice(&password);
            format!("Basic {}", base64(&credentials))
        });
        Proxy {
            origin: url.origin,
            authorization,
        }
    }

    /// The `Proxy-Authorization` value from the proxy URL's credentials.
    pub fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }
}

/// `scheme://host:port` of a proxy, for messages: no credentials.
fn write_proxy_origin(f: &mut fmt::Formatter<'_>, origin: &Origin) -> fmt::Result {
    let Origin { scheme, host, port } = origin;
    if host.contains(':') {
        write!(f, "{scheme}://[{host}]:{port}")
    } else {
        write!(f, "{scheme}://{host}:{port}")
    }
}

/// `scheme://host:port` only: credentials never reach messages or reprs.
impl fmt::Display for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_proxy_origin(f, &self.origin)
    }
}

/// One SOCKS proxy (`socks5://`, `socks5h://`, `socks4://`, `socks4a://`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct SocksProxy {
    /// Where the proxy listens (`scheme` is the URL's, for messages).
    pub origin: Origin,
    pub version: SocksVersion,
    /// From the URL's userinfo (SOCKS4: the user is the USERID). Never displayed.
    pub credentials: Option<Credentials>,
}

impl SocksProxy {
    /// The proxy of a `socks*://` URL; credentials longer than the protocol
    /// carries are refused here, when the client is made.
    fn from_url(url: ProxyUrl, version: SocksVersion, raw: &str) -> Result<SocksProxy, Error> {
        if let Some((user, password)) = &url.credentials {
            for (field, what) in [(user, "username"), (password, "password")] {
                if field.len() > MAX_CREDENTIAL_BYTES {
                    return Err(Error::new(
                        ErrorKind::InvalidUrl,
                        format!(
                            "invalid proxy URL {}: the {what} is longer than \
                             {MAX_CREDENTIAL_BYTES} bytes (RFC 1929 §2)",
                            mask_userinfo(raw)
                        ),
                    ));
                }
            }
        }
        Ok(SocksProxy {
            origin: url.origin,
            version,
            credentials: url
                .credentials
                .map(|(user, password)| Credentials { user, password }),
        })
    }
}

/// `scheme://host:port` only: credentials never reach messages or reprs.
impl fmt::Display for SocksProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_proxy_origin(f, &self.origin)
    }
}

impl fmt::Debug for SocksProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SocksProxy")
            .field("url", &self.to_string())
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<masked>"),
            )
            .finish()
    }
}

/// A proxy of either kind, as a proxy URL names it.
#[derive(Debug, Clone)]
pub(crate) enum AnyProxy {
    Http(Arc<Proxy>),
    Socks(Arc<SocksProxy>),
}

impl AnyProxy {
    /// Parses a proxy URL; a bad URL or an unknown scheme is an error naming
    /// the URL with its credentials masked.
    pub fn parse(raw: &str) -> Result<AnyProxy, Error> {
        let url = parse_proxy_url(raw)?;
        Ok(match SocksVersion::from_scheme(url.origin.scheme) {
            Some(version) => AnyProxy::Socks(Arc::new(SocksProxy::from_url(url, version, raw)?)),
            None => AnyProxy::Http(Arc::new(Proxy::from_url(url))),
        })
    }
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("url", &self.to_string())
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<masked>"),
            )
            .finish()
    }
}

/// How a request reaches its origin. Part of the pool key: a tunnelled
/// connection is never lent to a direct request, nor the other way round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) enum Route {
    #[default]
    Direct,
    /// `http://` target: the request goes to the proxy in absolute form.
    Forward(Arc<Proxy>),
    /// `https://` target: CONNECT, then TLS with the origin inside the tunnel.
    Tunnel(Arc<Proxy>),
    /// Any target: the SOCKS handshake, then the connection is the origin's
    /// as if direct (TLS, ALPN and HTTP/2 included).
    Socks(Arc<SocksProxy>),
}

impl Route {
    /// The request target and headers of a request on this route.
    /// Forwarded: absolute-form target (RFC 9112 §3.2.2) and the proxy's
    /// credentials, unless the caller set `Proxy-Authorization` itself.
    /// Tunnelled (CONNECT or SOCKS): the origin sees an ordinary request, and
    /// a caller's `Proxy-Authorization` is dropped: inside the tunnel it
    /// would reach the origin, not the proxy.
    pub fn request_form<'a>(
        &'a self,
        target: &'a Target,
        headers: &'a [(&'a str, &'a str)],
    ) -> (Cow<'a, str>, Headers<'a>) {
        let is_proxy_auth = |(name, _): &&(&str, &str)| name.eq_ignore_ascii_case(PROXY_AUTH);
        match self {
            Route::Direct => (
                Cow::Borrowed(&target.path_and_query),
                Cow::Borrowed(headers),
            ),
            Route::Forward(proxy) => {
                let absolute = format!(
                    "{}://{}{}",
                    target.origin.scheme, target.authority, target.path_and_query
                );
                let headers = match proxy.authorization() {
                    Some(value) if !headers.iter().any(|h| is_proxy_auth(&h)) => {
                        let mut with = headers.to_vec();
                        with.push((PROXY_AUTH, value));
                        Cow::Owned(with)
                    }
                    _ => Cow::Borrowed(headers),
                };
                (Cow::Owned(absolute), headers)
            }
            Route::Tunnel(_) | Route::Socks(_) => {
                let headers = if headers.iter().any(|h| is_proxy_auth(&h)) {
                    Cow::Owned(
                        headers
                            .iter()
                            .filter(|h| !is_proxy_auth(h))
                            .copied()
                            .collect(),
                    )
                } else {
                    Cow::Borrowed(headers)
                };
                (Cow::Borrowed(&target.path_and_query), headers)
            }
        }
    }

    /// Whether a request on this route may use HTTP/2: the connection is
    /// the origin's own (direct, or a SOCKS tunnel), not an HTTP proxy's.
    pub fn allows_h2(&self) -> bool {
        matches!(self, Route::Direct | Route::Socks(_))
    }

    /// The pool key of a request to `origin` on this route.
    pub fn key(self, origin: &Origin) -> ConnKey {
        let origin = match &self {
            Route::Forward(proxy) => proxy.origin.clone(),
            _ => origin.clone(),
        };
        ConnKey {
            origin,
            route: self,
        }
    }
}

const PROXY_AUTH: &str = "Proxy-Authorization";

/// Request headers as `(name, value)` pairs, borrowed unless a route changed them.
type Headers<'a> = Cow<'a, [(&'a str, &'a str)]>;

/// The identity of a pooled connection: where its bytes go and how.
/// Forwarded requests share the proxy's connections whatever their origin
/// (the key's origin is the proxy's); tunnels are per origin.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ConnKey {
    pub origin: Origin,
    pub route: Route,
}

/// A client's parsed proxies.
#[derive(Debug)]
pub(crate) struct Proxies {
    http: Option<AnyProxy>,
    https: Option<AnyProxy>,
    no_proxy: NoProxy,
}

impl Proxies {
    /// `None` when no proxy is configured (the client then never routes).
    pub fn new(settings: &ProxySettings) -> Result<Option<Proxies>, Error> {
        let parse = |raw: &Option<String>| -> Result<Option<AnyProxy>, Error> {
            match raw.as_deref().map(str::trim) {
                None | Some("") => Ok(None),
                Some(raw) => AnyProxy::parse(raw).map(Some),
            }
        };
        let http = parse(&settings.http)?;
        let https = parse(&settings.https)?;
        if http.is_none() && https.is_none() {
            return Ok(None);
        }
        let no_proxy = settings
            .no_proxy
            .as_deref()
            .map(NoProxy::parse)
            .unwrap_or_default();
        Ok(Some(Proxies {
            http,
            https,
            no_proxy,
        }))
    }

    /// The route of a request to `origin`.
    pub fn route(&self, origin: &Origin) -> Route {
        let (proxy, tunnel) = match origin.scheme {
            "https" => (&self.https, true),
            _ => (&self.http, false),
        };
        match proxy {
            Some(_) if self.no_proxy.matches(&origin.host, origin.port) => Route::Direct,
            Some(AnyProxy::Socks(p)) => Route::Socks(Arc::clone(p)),
            Some(AnyProxy::Http(p)) if tunnel => Route::Tunnel(Arc::clone(p)),
            Some(AnyProxy::Http(p)) => Route::Forward(Arc::clone(p)),
            None => Route::Direct,
        }
    }
}

/// `raw` with any `user:password@` replaced by `***@`, for messages.
pub(crate) fn mask_userinfo(raw: &str) -> String {
    let start = raw.find("://").map_or(0, |i| i + 3);
    let authority_end = raw[start..]
        .find(['/', '?', '#'])
        .map_or(raw.len(), |i| start + i);
    match raw[start..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &raw[..start], &raw[start + at + 1..]),
        None => raw.to_owned(),
    }
}

fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' {
            if let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Standard base64 with padding (RFC 4648 §4), for the one Basic header a
/// proxy needs; a crate for 15 lines is not worth a dependency.
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn percent_decoding_of_userinfo() {
        assert_eq!(percent_decode("p%40ss%3Aw"), b"p@ss:w");
        assert_eq!(percent_decode("100%"), b"100%");
        assert_eq!(percent_decode("%zz"), b"%zz");
    }

    #[test]
    fn socks_urls_parse_with_their_version_port_and_credentials() {
        let cases = [
            ("socks5://p.test", SocksVersion::V5, 1080),
            ("socks5h://p.test:9050", SocksVersion::V5h, 9050),
            ("socks4://p.test", SocksVersion::V4, 1080),
            ("SOCKS4A://p.test:1", SocksVersion::V4a, 1),
        ];
        for (raw, version, port) in cases {
            let AnyProxy::Socks(proxy) = AnyProxy::parse(raw).unwrap() else {
                panic!("{raw} is a SOCKS proxy");
            };
            assert_eq!((proxy.version, proxy.origin.port), (version, port));
            assert!(proxy.credentials.is_none());
        }
        let AnyProxy::Socks(proxy) = AnyProxy::parse("socks5h://us%40r:p%3Ass@[::1]:1").unwrap()
        else {
            panic!("a SOCKS proxy");
        };
        let credentials = proxy.credentials.as_ref().unwrap();
        assert_eq!(
            (&credentials.user[..], &credentials.password[..]),
            (&b"us@r"[..], &b"p:ss"[..])
        );
        assert_eq!(proxy.to_string(), "socks5h://[::1]:1");
        assert!(!format!("{proxy:?}").contains("p:ss"));
    }

    #[test]
    fn socks_credentials_over_the_limit_are_refused_without_showing_them() {
        let long = "x".repeat(MAX_CREDENTIAL_BYTES + 1);
        let e = AnyProxy::parse(&format!("socks5://u:{long}@p.test")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUrl);
        assert!(
            e.to_string()
                .contains("the password is longer than 255 bytes"),
            "{e}"
        );
        assert!(!e.to_string().contains(&long));
        let at_limit = "x".repeat(MAX_CREDENTIAL_BYTES);
        assert!(AnyProxy::parse(&format!("socks5://{at_limit}:{at_limit}@p.test")).is_ok());
    }

    #[test]
    fn a_socks_route_keys_its_own_connections_and_may_use_h2() {
        let settings = ProxySettings {
            http: Some("socks5h://p.test".into()),
            https: Some("socks5h://p.test".into()),
            no_proxy: Some("direct.test".into()),
        };
        let proxies = Proxies::new(&settings).unwrap().unwrap();
        let origin = |host: &str| Origin {
            scheme: "https",
            host: host.into(),
            port: 443,
        };
        let route = proxies.route(&origin("a.test"));
        assert!(matches!(route, Route::Socks(_)));
        assert!(route.allows_h2());
        let key = route.key(&origin("a.test"));
        assert_eq!(key.origin, origin("a.test"));
        assert_ne!(key, Route::Direct.key(&origin("a.test")));
        assert_eq!(proxies.route(&origin("direct.test")), Route::Direct);
    }

    #[test]
    fn an_unknown_proxy_scheme_names_the_supported_ones() {
        let e = AnyProxy::parse("socks6://u:secret@p.test").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsupportedProtocol);
        assert!(e.to_string().contains("socks5h://"), "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn userinfo_is_masked() {
        assert_eq!(
            mask_userinfo("http://u:secret@proxy:3128/x"),
            "http://***@proxy:3128/x"
        );
        assert_eq!(mask_userinfo("http://proxy:3128"), "http://proxy:3128");
        assert_eq!(mask_userinfo("u:p@proxy"), "***@proxy");
    }
}
