//! Name resolution within the connect deadline.
//!
//! The system resolver (`getaddrinfo`) has no timeout of its own: a dead DNS
//! server would hold a request for the resolver's retries (tens of seconds)
//! whatever `Timeout(connect=...)` says. So, like curl's threaded resolver, a
//! lookup with a deadline runs on a short-lived thread and the caller waits
//! for it at most until the deadline. IP literals never need a lookup.
//!
//! A channel wait never sees `EINTR`, so a caller whose [`Interrupt`] can
//! answer (the main thread of a Python program) waits in slices of
//! [`SIGNAL_CHECK_INTERVAL`] and asks it between them: Ctrl-C during a slow
//! lookup ends the request within a slice, not at the connect deadline.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::deadline::{Budget, Deadlines, Phase};
use crate::error::{Error, ErrorKind};
use crate::interrupt::{Interrupt, SIGNAL_CHECK_INTERVAL};
use crate::limits::MAX_PENDING_LOOKUPS;

/// Lookups whose thread is still running (the caller may have given up).
static PENDING_LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// The addresses of `host:port`, resolved before the connect deadline.
pub(crate) fn resolve(
    host: &str,
    port: u16,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<Vec<SocketAddr>, Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let budget = match deadlines.budget(deadlines.timeouts.connect) {
        Budget::Expired => return Err(timed_out(host, deadlines)),
        Budget::Wait(None) if !interrupt.needs_polling() => {
            return lookup(host, port).map_err(|e| failed(host, e))
        }
        Budget::Wait(budget) => budget,
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
    match wait(&rx, budget, interrupt) {
        Waited::Answer(result) => result.map_err(|e| failed(host, e)),
        Waited::TimedOut => Err(timed_out(host, deadlines)),
        Waited::Interrupted => Err(crate::interrupt::interrupted()),
    }
}

enum Waited<T> {
    Answer(T),
    TimedOut,
    Interrupted,
}

/// Receives from `rx` within `budget` (`None`: no limit), asking `interrupt`
/// every [`SIGNAL_CHECK_INTERVAL`] when it can ever answer yes.
fn wait<T>(rx: &Receiver<T>, budget: Option<Duration>, interrupt: &dyn Interrupt) -> Waited<T> {
    let until = budget.map(|b| Instant::now() + b);
    let polling = interrupt.needs_polling();
    loop {
        let left = until.map(|u| u.saturating_duration_since(Instant::now()));
        let slice = match (left, polling) {
            (Some(left), false) => left,
            (Some(left), true) => left.min(SIGNAL_CHECK_INTERVAL),
            (None, _) => SIGNAL_CHECK_INTERVAL,
        };
        match rx.recv_timeout(slice) {
            Ok(answer) => return Waited::Answer(answer),
            // The lookup thread always sends before it ends: a hang-up means
            // it panicked. Treated as no answer.
            Err(RecvTimeoutError::Disconnected) => return Waited::TimedOut,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if polling && interrupt.should_abort() {
            return Waited::Interrupted;
        }
        if until.is_some_and(|u| Instant::now() >= u) {
            return Waited::TimedOut;
        }
    }
}

fn lookup(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    Ok((host, port).to_socket_addrs()?.collect())
}

fn failed(host: &str, e: io::Error) -> Error {
    Error::new(ErrorKind::Connect, format!("failed to resolve {host}: {e}")).with_source(e)
}

fn timed_out(host: &str, deadlines: &Deadlines) -> Error {
    deadlines.timed_out(Phase::connect(&format!("resolving {host}")))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::deadline::Timeouts;
    use crate::interrupt::NeverInterrupt;

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
            resolve("127.0.0.1", 80, &d, &NeverInterrupt).unwrap(),
            vec!["127.0.0.1:80".parse().unwrap()]
        );
        assert_eq!(
            resolve("::1", 8080, &d, &NeverInterrupt).unwrap(),
            vec!["[::1]:8080".parse().unwrap()]
        );
    }

    #[test]
    fn localhost_resolves_on_a_thread_within_the_deadline() {
        let d = deadlines(Some(Duration::from_secs(10)));
        let addrs = resolve("localhost", 8080, &d, &NeverInterrupt).unwrap();
        assert!(addrs
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 8080));
        assert!(!addrs.is_empty());
    }

    #[test]
    fn an_expired_budget_fails_before_any_lookup() {
        let d = deadlines(Some(Duration::ZERO));
        let err = resolve("localhost", 80, &d, &NeverInterrupt).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectTimeout);
    }

    #[test]
    fn an_unknown_name_is_a_connect_error() {
        // `.invalid` is reserved never to resolve (RFC 6761 section 6.4).
        let d = deadlines(Some(Duration::from_secs(10)));
        let err = resolve("no-such-host.invalid", 80, &d, &NeverInterrupt).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Connect | ErrorKind::ConnectTimeout),
            "{err:?}"
        );
    }

    /// Asks to abort on its `n`-th question; counts them.
    struct AbortAfter(usize, AtomicUsize);

    impl Interrupt for AbortAfter {
        fn should_abort(&self) -> bool {
            self.1.fetch_add(1, Ordering::SeqCst) + 1 >= self.0
        }
    }

    #[test]
    fn a_wait_for_an_answer_that_never_comes_is_interruptible() {
        // The sender is kept but never sends: a resolver that hangs.
        let (_tx, rx) = mpsc::sync_channel::<()>(1);
        let interrupt = AbortAfter(3, AtomicUsize::new(0));
        let started = Instant::now();
        let waited = wait(&rx, Some(Duration::from_secs(30)), &interrupt);
        assert!(matches!(waited, Waited::Interrupted));
        assert_eq!(interrupt.1.load(Ordering::SeqCst), 3);
        assert!(started.elapsed() < Duration::from_secs(5));
        // With no deadline at all, too.
        let interrupt = AbortAfter(1, AtomicUsize::new(0));
        assert!(matches!(wait(&rx, None, &interrupt), Waited::Interrupted));
    }

    #[test]
    fn a_wait_without_signal_checks_ends_at_the_deadline() {
        let (_tx, rx) = mpsc::sync_channel::<()>(1);
        let waited = wait(&rx, Some(Duration::from_millis(50)), &NeverInterrupt);
        assert!(matches!(waited, Waited::TimedOut));
        let (tx, rx) = mpsc::sync_channel(1);
        tx.send(7).unwrap();
        let interrupt = AbortAfter(1, AtomicUsize::new(0));
        assert!(matches!(wait(&rx, None, &interrupt), Waited::Answer(7)));
    }
}
