//! Opening TCP connections within the connect deadline, interruptible by
//! Ctrl-C.
//!
//! `TcpStream::connect_timeout` retries its internal `poll` on `EINTR`, so a
//! signal cannot end it: Ctrl-C during a connect to an address that never
//! answers would wait for the whole connect timeout. We connect without
//! blocking and wait for the outcome with our own `poll`, which hands every
//! `EINTR` to the request's [`Interrupt`].

use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::deadline::{Budget, Deadlines, Phase};
use crate::dial::Dial;
use crate::error::{Error, ErrorKind};
use crate::interrupt::{interrupted, Interrupt};
use crate::resolve::resolve;
use crate::target::Origin;
use crate::timing::{self, ConnectTimings};
use crate::tls::TlsSetup;
use crate::transport::Transport;

/// Connects to the Unix domain socket at `path` within the connect deadline
/// (shared with `aconnect.rs`, which hands the stream to tokio). The stream
/// is carried as a `TcpStream`: the exchange code only reads, writes, polls,
/// shuts down and sets timeouts on it, which the kernel does alike for both
/// socket families; `TCP_NODELAY` is not set (it has no meaning there).
pub(crate) fn connect_uds(
    path: &std::path::Path,
    origin: &Origin,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<TcpStream, Error> {
    let budget = match deadlines.budget(deadlines.timeouts.connect) {
        Budget::Expired => return Err(connect_timed_out(origin, deadlines)),
        Budget::Wait(t) => t,
    };
    let failed = |e: io::Error| {
        Error::new(
            ErrorKind::Connect,
            format!("failed to connect to {}: {e}", path.display()),
        )
        .with_source(e)
    };
    let address = SockAddr::unix(path).map_err(failed)?;
    let attempt = (|| -> Result<TcpStream, Attempt> {
        let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        set_nonblocking(&socket, true)?;
        match socket.connect(&address) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
                wait_connected(&socket, budget, interrupt)?;
            }
            Err(e) => return Err(e.into()),
        }
        set_nonblocking(&socket, false)?;
        Ok(TcpStream::from(socket))
    })();
    match attempt {
        Ok(stream) => Ok(stream),
        Err(Attempt::Interrupted) => Err(interrupted()),
        Err(Attempt::Failed(e)) if e.kind() == io::ErrorKind::TimedOut => {
            Err(connect_timed_out(origin, deadlines).with_source(e))
        }
        Err(Attempt::Failed(e)) => Err(failed(e)),
    }
}

/// Resolves the origin and connects to the first address that answers, each
/// attempt bounded by what is left of the connect (and total) deadline.
/// `TCP_NODELAY` is set on success: we always send whole requests in one write,
/// so Nagle can only add latency.
pub(crate) fn connect(
    origin: &Origin,
    tls: &TlsSetup,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<Transport, Error> {
    // Clock reads only when asked for (`nodelay get -v`).
    let started = timing::enabled().then(Instant::now);
    let dial = tls.dial();
    let (tcp, resolved) = match &dial.uds {
        Some(path) => (connect_uds(path, origin, deadlines, interrupt)?, started),
        None => {
            let addrs = resolve(&origin.host, origin.port, deadlines, interrupt)?;
            let resolved = started.map(|_| Instant::now());
            let local = dial.local_address;
            (
                connect_tcp(origin, addrs, local, deadlines, interrupt)?,
                resolved,
            )
        }
    };
    let connected = started.map(|_| Instant::now());
    let transport = if origin.scheme == "https" {
        Transport::Tls(Box::new(tls.handshake(
            &origin.host,
            tcp,
            deadlines,
            interrupt,
        )?))
    } else {
        Transport::Plain(tcp)
    };
    if let (Some(started), Some(resolved), Some(connected)) = (started, resolved, connected) {
        timing::note(ConnectTimings {
            dns: Some(resolved - started),
            tcp: connected - resolved,
            tls: (origin.scheme == "https").then(|| connected.elapsed()),
        });
    }
    Ok(transport)
}

/// A TCP connection to `origin` (or to the Unix socket `dial` names), with no
/// TLS: the first hop to a SOCKS proxy.
pub(crate) fn dial_tcp(
    origin: &Origin,
    dial: &Dial,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<TcpStream, Error> {
    match &dial.uds {
        Some(path) => connect_uds(path, origin, deadlines, interrupt),
        None => {
            let addrs = resolve(&origin.host, origin.port, deadlines, interrupt)?;
            connect_tcp(origin, addrs, dial.local_address, deadlines, interrupt)
        }
    }
}

fn connect_tcp(
    origin: &Origin,
    addrs: Vec<SocketAddr>,
    local: Option<IpAddr>,
    deadlines: &Deadlines,
    interrupt: &dyn Interrupt,
) -> Result<TcpStream, Error> {
    let mut last_error: Option<io::Error> = None;
    for addr in addrs {
        let budget = match deadlines.budget(deadlines.timeouts.connect) {
            Budget::Expired => break,
            Budget::Wait(t) => t,
        };
        match connect_addr(addr, local, budget, interrupt) {
            Ok(stream) => {
                stream.set_nodelay(true).map_err(|e| {
                    Error::new(
                        ErrorKind::Connect,
                        format!("setting TCP_NODELAY failed: {e}"),
                    )
                })?;
                return Ok(stream);
            }
            Err(Attempt::Interrupted) => return Err(interrupted()),
            Err(Attempt::Failed(e)) => last_error = Some(e),
        }
    }
    Err(match last_error {
        Some(e) if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::WouldBlock => {
            connect_timed_out(origin, deadlines).with_source(e)
        }
        Some(e) => Error::new(
            ErrorKind::Connect,
            format!("failed to connect to {}:{}: {e}", origin.host, origin.port),
        )
        .with_source(e),
        None => connect_timed_out(origin, deadlines),
    })
}

/// The connect timeout's error for `origin` (shared with `aconnect.rs`).
pub(crate) fn connect_timed_out(origin: &Origin, deadlines: &Deadlines) -> Error {
    let doing = format!("connecting to {}:{}", origin.host, origin.port);
    deadlines.timed_out(Phase::connect(&doing))
}

enum Attempt {
    Failed(io::Error),
    Interrupted,
}

impl From<io::Error> for Attempt {
    fn from(e: io::Error) -> Self {
        Attempt::Failed(e)
    }
}

/// One connect attempt to `addr`, within `budget` (`None`: no limit), from
/// `local` when given (bound first; a family mismatch fails this attempt).
/// The socket is created close-on-exec (socket2 does so on every platform
/// that has the flag) and handed back in blocking mode.
fn connect_addr(
    addr: SocketAddr,
    local: Option<IpAddr>,
    budget: Option<Duration>,
    interrupt: &dyn Interrupt,
) -> Result<TcpStream, Attempt> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if let Some(ip) = local {
        socket.bind(&SockAddr::from(SocketAddr::new(ip, 0)))?;
    }
    set_nonblocking(&socket, true)?;
    match socket.connect(&SockAddr::from(addr)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            wait_connected(&socket, budget, interrupt)?;
        }
        Err(e) => return Err(e.into()),
    }
    set_nonblocking(&socket, false)?;
    Ok(socket.into())
}

/// Switches blocking mode with one `ioctl(FIONBIO)`; socket2's
/// `set_nonblocking` reads the flags first (two `fcntl` each way: four
/// syscalls per new connection instead of two, workload j).
fn set_nonblocking(socket: &Socket, on: bool) -> io::Result<()> {
    let mut value = libc::c_int::from(on);
    // SAFETY: FIONBIO reads one int through the pointer, which points to a
    // live local; the descriptor is open (owned by `socket`).
    if unsafe { libc::ioctl(socket.as_raw_fd(), libc::FIONBIO, &mut value) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until a non-blocking connect finishes: its outcome is the socket's
/// pending error once it is writable (or reports an error/hang-up).
fn wait_connected(
    socket: &Socket,
    budget: Option<Duration>,
    interrupt: &dyn Interrupt,
) -> Result<(), Attempt> {
    let until = budget.map(|b| Instant::now() + b);
    loop {
        let wait_ms: libc::c_int = match until {
            None => -1,
            Some(until) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::from(io::ErrorKind::TimedOut).into());
                }
                // Rounded up: a sub-millisecond rest must not become a
                // zero-timeout poll that spins.
                left.as_micros()
                    .div_ceil(1000)
                    .min(libc::c_int::MAX as u128) as libc::c_int
            }
        };
        let mut fds = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: `fds` is a valid pollfd array of length 1 for the duration
        // of the call, and the fd stays open (borrowed from `socket`).
        let ready = unsafe { libc::poll(&mut fds, 1, wait_ms) };
        if ready < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e.into());
            }
            if interrupt.should_abort() {
                return Err(Attempt::Interrupted);
            }
            continue;
        }
        if ready == 0 {
            continue; // the deadline check at the top decides
        }
        return match socket.take_error()? {
            Some(e) => Err(e.into()),
            None => Ok(()),
        };
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn connects_to_a_listening_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stream = connect_addr(
            addr,
            None,
            Some(Duration::from_secs(5)),
            &crate::interrupt::NeverInterrupt,
        )
        .unwrap_or_else(|_| panic!("connect failed"));
        assert_eq!(stream.peer_addr().unwrap(), addr);
        let (_, from) = listener.accept().unwrap();
        assert_eq!(from, stream.local_addr().unwrap());
    }

    #[test]
    fn a_refused_connect_is_an_error() {
        // Bound but not listening: the port is ours and nobody accepts on it.
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        socket
            .bind(&SockAddr::from(
                "127.0.0.1:0".parse::<SocketAddr>().unwrap(),
            ))
            .unwrap();
        let addr = socket.local_addr().unwrap().as_socket().unwrap();
        match connect_addr(
            addr,
            None,
            Some(Duration::from_secs(5)),
            &crate::interrupt::NeverInterrupt,
        ) {
            Err(Attempt::Failed(e)) => assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused),
            Err(Attempt::Interrupted) => panic!("not interrupted"),
            Ok(_) => panic!("connected to a socket that does not listen"),
        }
    }

    /// Answers "abort" on the first `EINTR`, and counts the questions.
    struct AbortOnSignal(AtomicUsize);

    impl Interrupt for AbortOnSignal {
        fn should_abort(&self) -> bool {
            self.0.fetch_add(1, Ordering::SeqCst);
            true
        }
    }

    extern "C" fn ignore(_: libc::c_int) {}

    #[test]
    fn a_signal_ends_a_connect_that_hangs() {
        let Some(addr) = blackholed() else {
            eprintln!("no address that leaves a connect hanging here: skipped");
            return;
        };
        // A handler installed without SA_RESTART, as Python installs its own,
        // so the signal interrupts `poll` with EINTR.
        // SAFETY: the action struct is zeroed then filled; `ignore` is an
        // async-signal-safe extern "C" fn that does nothing.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());
        }
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as usize;
        let signaller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            // SAFETY: `me` is the test thread, alive until joined below.
            unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR1) };
        });
        let interrupt = AbortOnSignal(AtomicUsize::new(0));
        let started = Instant::now();
        let outcome = connect_addr(addr, None, Some(Duration::from_secs(30)), &interrupt);
        signaller.join().unwrap();
        assert!(matches!(outcome, Err(Attempt::Interrupted)));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(interrupt.0.load(Ordering::SeqCst), 1);
    }

    /// An address whose connect neither succeeds nor fails quickly on this
    /// machine: a listener with a full accept queue drops further SYNs on
    /// Linux (net.ipv4.tcp_abort_on_overflow = 0), so the next connect waits.
    fn blackholed() -> Option<SocketAddr> {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
        socket
            .bind(&SockAddr::from(
                "127.0.0.1:0".parse::<SocketAddr>().unwrap(),
            ))
            .ok()?;
        socket.listen(0).ok()?;
        let addr = socket.local_addr().ok()?.as_socket()?;
        // Fill the queue; keep the listener (and the fillers) open for the
        // rest of the process: leaked on purpose, a test helper.
        let mut fillers = Vec::new();
        for _ in 0..8 {
            let filler = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
            filler.set_nonblocking(true).ok()?;
            let _ = filler.connect(&SockAddr::from(addr));
            fillers.push(filler);
        }
        std::thread::sleep(Duration::from_millis(50));
        let probe = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
        let hangs = probe
            .connect_timeout(&SockAddr::from(addr), Duration::from_millis(300))
            .is_err_and(|e| e.kind() == io::ErrorKind::TimedOut);
        std::mem::forget((socket, fillers, probe));
        hangs.then_some(addr)
    }
}
