//! Proxy configuration, resolved once per client, and the per-request route:
//! direct, forwarded through an HTTP proxy (absolute-form request target) or
//! tunnelled with CONNECT.
//!
//! A client without proxies has no `Proxies` at all, so its requests pay
//! nothing for this module (not even a NO_PROXY lookup).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use url::{Host, Url};

use crate::error::{Error, ErrorKind};
use crate::no_proxy::NoProxy;
use crate::target::{Origin, Target};

/// Default port of a proxy URL without one: the scheme's (as requests,
/// urllib3 and httpx do; curl's 1080 is the SOCKS habit).
fn default_proxy_port(scheme: &str) -> u16 {
    if scheme == "https" {
        443
    } else {
        80
    }
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
    pub fn parse(raw: &str) -> Result<Proxy, Error> {
        let with_scheme;
        // `proxy:3128` is an http proxy, as for curl and requests.
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
            other => {
                return Err(Error::new(
                    ErrorKind::UnsupportedProtocol,
                    format!(
                        "unsupported proxy scheme '{other}://' in {} \
                         (http:// and https:// proxies are supported)",
                        mask_userinfo(raw)
                    ),
                ))
            }
        };
        let host = match url.host() {
            Some(Host::Domain(d)) if !d.is_empty() => d.to_owned(),
            Some(Host::Ipv4(ip)) => ip.to_string(),
            Some(Host::Ipv6(ip)) => ip.to_string(),
            _ => return Err(invalid("no host")),
        };
        let authorization = if url.username().is_empty() && url.password().is_none() {
            None
        } else {
            let user = percent_decode(url.username());
            let password = percent_decode(url.password().unwrap_or(""));
            let mut credentials = user;
            credentials.push(b':');
            credentials.extend_from_slice(&password);
            Some(format!("Basic {}", base64(&credentials)))
        };
        Ok(Proxy {
            origin: Origin {
                scheme,
                host: host.into(),
                port: url.port().unwrap_or(default_proxy_port(scheme)),
            },
            authorization,
        })
    }

    /// The `Proxy-Authorization` value from the proxy URL's credentials.
    pub fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }
}

/// `scheme://host:port` only: credentials never reach messages or reprs.
impl fmt::Display for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Origin { scheme, host, port } = &self.origin;
        if host.contains(':') {
            write!(f, "{scheme}://[{host}]:{port}")
        } else {
            write!(f, "{scheme}://{host}:{port}")
        }
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
}

impl Route {
    /// The request target and headers of a request on this route.
    /// Forwarded: absolute-form target (RFC 9112 §3.2.2) and the proxy's
    /// credentials, unless the caller set `Proxy-Authorization` itself.
    /// Tunnelled: the origin sees an ordinary request, and a caller's
    /// `Proxy-Authorization` is dropped: inside the tunnel it would reach
    /// the origin, not the proxy.
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
            Route::Tunnel(_) => {
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
    http: Option<Arc<Proxy>>,
    https: Option<Arc<Proxy>>,
    no_proxy: NoProxy,
}

impl Proxies {
    /// `None` when no proxy is configured (the client then never routes).
    pub fn new(settings: &ProxySettings) -> Result<Option<Proxies>, Error> {
        let parse = |raw: &Option<String>| -> Result<Option<Arc<Proxy>>, Error> {
            match raw.as_deref().map(str::trim) {
                None | Some("") => Ok(None),
                Some(raw) => Proxy::parse(raw).map(|p| Some(Arc::new(p))),
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
            Some(p) if tunnel => Route::Tunnel(Arc::clone(p)),
            Some(p) => Route::Forward(Arc::clone(p)),
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
    fn userinfo_is_masked() {
        assert_eq!(
            mask_userinfo("http://u:secret@proxy:3128/x"),
            "http://***@proxy:3128/x"
        );
        assert_eq!(mask_userinfo("http://proxy:3128"), "http://proxy:3128");
        assert_eq!(mask_userinfo("u:p@proxy"), "***@proxy");
    }
}
