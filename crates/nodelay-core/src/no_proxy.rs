//! `NO_PROXY` matching: which targets bypass the proxy.
//!
//! There is no standard; we follow curl (lib/noproxy.c, CURLOPT_NOPROXY):
//! - entries are separated by commas and/or whitespace; empty entries are skipped;
//! - `*` alone bypasses every host;
//! - a domain matches itself and its subdomains (`example.com` matches
//!   `example.com` and `www.example.com`, not `notexample.com`);
//! - a leading dot (or `*.`) is ignored, so `.example.com` also matches
//!   `example.com` itself. Go's `httpproxy` differs here (there a leading dot
//!   means subdomains only); we chose curl's rule because it is the one the
//!   rest of our environment handling follows, and the wider match can only
//!   send traffic direct that the user listed as local;
//! - IPv4 and IPv6 literals (IPv6 with or without brackets) match the same
//!   address, CIDR blocks (`10.0.0.0/8`, `::1/128`) match the addresses in
//!   them; names are never resolved to match addresses (as curl and Go);
//! - `host:port` (and `[v6]:port`) entries match only that port;
//! - matching is case-insensitive and ignores a trailing dot on either side.
//!
//! Entries that cannot be parsed (a bad CIDR prefix, a port out of range)
//! are ignored, as curl and Go do: a typo must not disable the whole list.

use std::net::IpAddr;

/// A parsed `NO_PROXY` list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct NoProxy {
    /// `*`: every target goes direct.
    all: bool,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Entry {
    pattern: Pattern,
    /// Only this port matches, when given.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Pattern {
    /// Lowercase, without leading or trailing dots.
    Domain(String),
    Ip(IpAddr),
    /// Network address and prefix length in bits.
    Net(IpAddr, u8),
}

impl NoProxy {
    /// Parses a `NO_PROXY` value (see the module documentation for the rules).
    pub fn parse(raw: &str) -> NoProxy {
        let mut list = NoProxy::default();
        for item in raw.split(|c: char| c == ',' || c.is_ascii_whitespace()) {
            if item.is_empty() {
                continue;
            }
            if item == "*" {
                list.all = true;
                continue;
            }
            if let Some(entry) = parse_entry(&item.to_ascii_lowercase()) {
                list.entries.push(entry);
            }
        }
        list
    }

    /// True when nothing is bypassed.
    pub fn is_empty(&self) -> bool {
        !self.all && self.entries.is_empty()
    }

    /// Whether a request to `host:port` goes direct. `host` is a URL host as
    /// the URL parser gives it: lowercase, IPv6 without brackets.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.all {
            return true;
        }
        if self.entries.is_empty() {
            return false;
        }
        let host = host.strip_suffix('.').unwrap_or(host);
        let ip = host.parse::<IpAddr>().ok();
        self.entries.iter().any(|entry| {
            entry.port.is_none_or(|p| p == port)
                && match &entry.pattern {
                    Pattern::Domain(domain) => ip.is_none() && domain_matches(host, domain),
                    Pattern::Ip(addr) => ip == Some(*addr),
                    Pattern::Net(net, bits) => ip.is_some_and(|ip| in_network(ip, *net, *bits)),
                }
        })
    }
}

fn parse_entry(item: &str) -> Option<Entry> {
    if let Some((addr, bits)) = item.split_once('/') {
        let addr: IpAddr = unbracket(addr).parse().ok()?;
        let bits: u8 = bits.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        return (bits <= max).then_some(Entry {
            pattern: Pattern::Net(addr, bits),
            port: None,
        });
    }
    // A bare IPv6 literal is full of colons: try addresses before host:port.
    if let Ok(addr) = unbracket(item).parse::<IpAddr>() {
        return Some(Entry {
            pattern: Pattern::Ip(addr),
            port: None,
        });
    }
    let (host, port) = match item.rsplit_once(':') {
        Some((host, port)) => (host, Some(port.parse::<u16>().ok()?)),
        None => (item, None),
    };
    if let Ok(addr) = unbracket(host).parse::<IpAddr>() {
        return Some(Entry {
            pattern: Pattern::Ip(addr),
            port,
        });
    }
    if host.contains([':', '[', ']']) {
        return None;
    }
    let domain = host.strip_prefix('*').unwrap_or(host);
    let domain = domain.trim_start_matches('.').trim_end_matches('.');
    if domain.is_empty() {
        return None;
    }
    Some(Entry {
        pattern: Pattern::Domain(domain.to_owned()),
        port,
    })
}

fn unbracket(s: &str) -> &str {
    s.strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(s)
}

/// `host` is `domain` or a subdomain of it (a label boundary, not a suffix:
/// `example.com` does not match `notexample.com`).
fn domain_matches(host: &str, domain: &str) -> bool {
    match host.len().checked_sub(domain.len()) {
        Some(0) => host == domain,
        Some(n) => host.as_bytes()[n - 1] == b'.' && host.ends_with(domain),
        None => false,
    }
}

fn in_network(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => prefix_equal(&ip.octets(), &net.octets(), bits.into()),
        (IpAddr::V6(ip), IpAddr::V6(net)) => prefix_equal(&ip.octets(), &net.octets(), bits.into()),
        _ => false,
    }
}

/// The first `bits` bits of `a` and `b` are equal.
fn prefix_equal(a: &[u8], b: &[u8], bits: usize) -> bool {
    let whole = bits / 8;
    if a[..whole] != b[..whole] {
        return false;
    }
    let rest = bits % 8;
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    a[whole] & mask == b[whole] & mask
}
