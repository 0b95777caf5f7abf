//! Where a request goes: the origin (pool key) and what goes on the wire.

use std::sync::Arc;

use url::{Host, Url};

use crate::error::{Error, ErrorKind};

/// Scheme, host and port: the pool key (RFC 6454 origin). The host is
/// lowercase (the URL parser normalises it) and IPv6 literals carry no brackets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    pub scheme: &'static str,
    /// Shared, so cloning an origin (once per request) is a refcount bump.
    pub host: Arc<str>,
    pub port: u16,
}

/// A parsed request URL.
#[derive(Debug, Clone)]
pub struct Target {
    pub origin: Origin,
    /// Value for the `Host` header: host, plus `:port` when not the default.
    pub authority: String,
    /// Origin-form request target: path and `?query`, never the fragment.
    pub path_and_query: String,
}

impl Target {
    pub fn parse(raw: &str) -> Result<Target, Error> {
        // The URL parser silently strips tabs and newlines; a URL carrying them
        // is an injection attempt and is refused before anything is sent
        // (HOSTILE.md F25).
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
