//! Name resolution within the connect deadline.
//!
//! The system resolver (`getaddrinfo`) has no timeout of its own: a dead DNS
//! server would hold a request for the resolver's retries (tens of seconds)
//! whatever `Timeout(connect=...)` says. So, like curl's threaded resolver, a
//! lookup with a deadline runs on a short-lived thread and the caller waits
//! for it at most until the deadline. IP literals never need a lookup.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::deadline::{Budget, Deadlines};
use crate::error::{Error, ErrorKind};
use crate::limits::MAX_PENDING_LOOKUPS;

/// Lookups whose thread is still running (the caller may have given up).
static PENDING_LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// The addresses of `host:port`, resolved before the connect deadline.
pub(crate) fn resolve(
    host: &str,
    port: u16,
    deadlines: &Deadlines,
) -> Result<Vec<SocketAddr>, Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let budget = match deadlines.budget(deadlines.timeouts.connect) {
        Budget::Expired => return Err(timed_out(host)),
        Budget::Wait(None) => return lookup(host, port).map_err(|e| failed(host, e)),
        Budget::Wait(Some(budget)) => budget,
    };
    // Counted before spawning so a storm of lookups against a dead resolver
    // cannot pile up unbounded threads.
    if PENDING_LOOKUPS.fetch_add(1, Ordering::AcqRel) >= MAX_PENDING_LOOKUPS {
        PENDING_LOOKUPS.fetch_sub(1, Ordering::AcqRel);
        return Err(Error::new(
            ErrorKind::Connect,
            format!(
                "failed to resolve {host}: {MAX_PENDING_LOOKUPS} earlier lookups are still \
                 unanswered (is the DNS server reachable?)"
            ),
        ));
    }
    let (tx, rx) = mpsc::sync_channel(1);
    let name = host.to_owned();
    let spawned = std::thread::Builder::new()
        .name("nodelay-dns".into())
        .spawn(move || {
            let result = lookup(&name, port);
            PENDING_LOOKUPS.fetch_sub(1, Ordering::AcqRel);
            // The caller may have timed out and dropped the receiver: fine.
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        PENDING_LOOKUPS.fetch_sub(1, Ordering::AcqRel);
        return Err(failed(host, e));
    }
    match rx.recv_timeout(budget) {
        Ok(result) => result.map_err(|e| failed(host, e)),
        Err(_) => Err(timed_out(host)),
    }
}

fn lookup(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    Ok((host, port).to_socket_addrs()?.collect())
}

fn failed(host: &str, e: io::Error) -> Error {
    Error::new(ErrorKind::Connect, format!("failed to resolve {host}: {e}")).with_source(e)
}

fn timed_out(host: &str) -> Error {
    Error::new(
        ErrorKind::ConnectTimeout,
        format!("timed out resolving {host}"),
    )
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::deadline::Timeouts;

    fn deadlines(connect: Option<Duration>) -> Deadlines {
        Deadlines::start(
            Timeouts {
                connect,
                ..Timeouts::default()
            },
            Instant::now(),
        )
    }

    #[test]
    fn ip_literals_need_no_lookup() {
        let d = deadlines(Some(Duration::ZERO));
        assert_eq!(
            resolve("127.0.0.1", 80, &d).unwrap(),
            vec!["127.0.0.1:80".parse().unwrap()]
        );
        assert_eq!(
            resolve("::1", 8080, &d).unwrap(),
            vec!["[::1]:8080".parse().unwrap()]
        );
    }

    #[test]
    fn localhost_resolves_on_a_thread_within_the_deadline() {
        let d = deadlines(Some(Duration::from_secs(10)));
        let addrs = resolve("localhost", 8080, &d).unwrap();
        assert!(addrs
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 8080));
        assert!(!addrs.is_empty());
    }

    #[test]
    fn an_expired_budget_fails_before_any_lookup() {
        let d = deadlines(Some(Duration::ZERO));
        let err = resolve("localhost", 80, &d).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectTimeout);
    }

    #[test]
    fn an_unknown_name_is_a_connect_error() {
        // `.invalid` is reserved never to resolve (RFC 6761 section 6.4).
        let d = deadlines(Some(Duration::from_secs(10)));
        let err = resolve("no-such-host.invalid", 80, &d).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Connect | ErrorKind::ConnectTimeout),
            "{err:?}"
        );
    }
}
