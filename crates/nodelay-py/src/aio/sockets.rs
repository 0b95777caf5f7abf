//! The loop's socket watcher: the plain connections of the requests the
//! loop's thread drives, watched by the event loop itself instead of tokio's
//! reactor (nodelay-core's `aio/watched.rs`, docs/async.md).
//!
//! An epoll instance of the bridge's own holds one-shot watches of those
//! sockets; the event loop watches that instance's descriptor
//! (`loop.add_reader`, once per loop: an epoll descriptor is readable while
//! one of its watches is ready). When the loop reports it readable, the bridge
//! takes the ready watches ([`LoopSockets::take_ready`]) and wakes their
//! requests right there, on the loop's thread: an answer reaches its request
//! without any other thread or system call than the loop's own `epoll_wait`,
//! this one's, and the `recv`.
//!
//! A watch is one-shot (`EPOLLONESHOT`): it wakes its task once and stays
//! registered, disarmed, until the next wait arms it again (`EPOLL_CTL_MOD`),
//! so an idle connection's socket never wakes the loop, and a request costs
//! one `epoll_ctl` per wait. Watches may be armed from any thread (a request
//! moved to a runtime task keeps its watched socket).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, MutexGuard};
use std::task::Waker;

use nodelay_core::aio::{Interest, Watcher};

/// Ready watches taken per `epoll_wait`: more wait for the next turn of the
/// loop (the descriptor stays readable).
const EVENTS_PER_TAKE: usize = 64;

/// The wakers waiting on one socket.
#[derive(Default)]
struct Watches {
    read: Option<Waker>,
    write: Option<Waker>,
    /// Added to the epoll set (later arming modifies the registration).
    registered: bool,
}

impl Watches {
    fn events(&self) -> u32 {
        let mut events = libc::EPOLLONESHOT as u32;
        if self.read.is_some() {
            events |= (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
        }
        if self.write.is_some() {
            events |= libc::EPOLLOUT as u32;
        }
        events
    }
}

pub(crate) struct LoopSockets {
    epoll: OwnedFd,
    watches: Mutex<HashMap<RawFd, Watches>>,
}

impl LoopSockets {
    /// A new, empty epoll instance (closed on `exec`).
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result is a
        // new descriptor that nothing else owns.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(LoopSockets {
            // SAFETY: `fd` was just created and is owned by nothing else.
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
            watches: Mutex::new(HashMap::new()),
        })
    }

    /// The descriptor the event loop watches.
    pub(crate) fn raw(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }

    fn watches(&self) -> MutexGuard<'_, HashMap<RawFd, Watches>> {
        self.watches.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn control(&self, op: libc::c_int, fd: RawFd, events: u32) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events,
            u64: fd as u64,
        };
        // SAFETY: `event` is a valid epoll_event for the duration of the call.
        let done = unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut event) };
        if done < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Takes the watches that are ready now (without waiting) and adds
    /// their wakers to `woken`, to be woken by the caller (no lock of this
    /// watcher held then). The caller keeps `woken` from one turn to the
    /// next, so a wake-up allocates nothing.
    pub(crate) fn take_ready(&self, woken: &mut Vec<Waker>) {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS_PER_TAKE];
        // SAFETY: `events` is a writable array of EVENTS_PER_TAKE entries.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                events.as_mut_ptr(),
                EVENTS_PER_TAKE as libc::c_int,
                0,
            )
        };
        if n <= 0 {
            return;
        }
        let failed = (libc::EPOLLHUP | libc::EPOLLERR) as u32;
        let mut watches = self.watches();
        for event in &events[..n as usize] {
            let fd = event.u64 as RawFd;
            let ready = event.events;
            let Some(entry) = watches.get_mut(&fd) else {
                continue; // forgotten meanwhile
            };
            let readable = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32 | failed;
            if ready & readable != 0 {
                woken.extend(entry.read.take());
            }
            if ready & (libc::EPOLLOUT as u32 | failed) != 0 {
                woken.extend(entry.write.take());
            }
            // The one-shot watch is spent: re-arm what still waits.
            if entry.read.is_some() || entry.write.is_some() {
                let events = entry.events();
                if self.control(libc::EPOLL_CTL_MOD, fd, events).is_err() {
                    woken.extend(entry.read.take());
                    woken.extend(entry.write.take());
                }
            }
        }
    }
}

impl Watcher for LoopSockets {
    fn watch(&self, fd: RawFd, interest: Interest, waker: &Waker) -> io::Result<()> {
        let mut watches = self.watches();
        let entry = watches.entry(fd).or_default();
        let slot = match interest {
            Interest::Read => &mut entry.read,
            Interest::Write => &mut entry.write,
        };
        match slot {
            Some(known) if known.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
        let events = entry.events();
        let (first, then) = if entry.registered {
            (libc::EPOLL_CTL_MOD, libc::EPOLL_CTL_ADD)
        } else {
            (libc::EPOLL_CTL_ADD, libc::EPOLL_CTL_MOD)
        };
        // The other operation when the set disagrees with the table (a
        // socket closed without being forgotten, its number reused).
        self.control(first, fd, events)
            .or_else(|_| self.control(then, fd, events))?;
        entry.registered = true;
        Ok(())
    }

    fn forget(&self, fd: RawFd) {
        let removed = self.watches().remove(&fd);
        if removed.is_some_and(|entry| entry.registered) {
            // Closing the socket would remove it from the set too, but only
            // once no other descriptor refers to it; a socket another driver
            // takes must not wake this loop.
            let _ = self.control(libc::EPOLL_CTL_DEL, fd, 0);
        }
    }
}
