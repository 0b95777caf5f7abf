//! The pool's blocking face: checkout and checkin for the HTTP/1.1 driver
//! that runs on the caller's thread. A checkout that finds every slot busy
//! waits on the pool's condition variable, which any release wakes (a
//! thread's, a task's, or an HTTP/2 connection's lease).

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

use super::handover::{fits_blocking, into_blocking};
use super::state::PoolState;
use super::{Claim, Driven, Idle, Pool, SlotGuard};
use crate::conn::Connection;
use crate::deadline::Deadlines;
use crate::error::Error;
use crate::interrupt::{Interrupt, SIGNAL_CHECK_INTERVAL};
use crate::proxy::ConnKey;
use crate::reaper::Watch;
use crate::target::Origin;
use crate::transport::Transport;
use crate::tunnel::connect_route;

/// A connection checked out of the pool. Dropping it closes the connection and
/// frees its slot; [`PooledConn::return_to_pool`] gives it back for reuse instead.
pub(crate) struct PooledConn {
    /// Always `Some` until `Pool::checkin` takes it.
    conn: Option<Connection>,
    pub reused: bool,
    pool: Arc<Pool>,
    key: ConnKey,
    generation: u64,
    /// The socket's descriptor, for the reaper.
    fd: std::os::fd::RawFd,
    /// Set once the connection has been idle in the pool (`checkin`).
    watch: Option<Watch>,
}

impl PooledConn {
    pub fn conn(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("connection present until checkin")
    }

    pub fn conn_ref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("connection present until checkin")
    }

    /// Gives the connection back to its pool for reuse.
    pub fn return_to_pool(self) {
        let pool = Arc::clone(&self.pool);
        pool.checkin(self);
    }
}

impl Drop for PooledConn {
    fn drop(&mut self) {
        if self.conn.take().is_some() {
            self.pool.release_slot(&self.key, self.generation);
        }
    }
}

impl Pool {
    fn pooled(
        self: &Arc<Self>,
        conn: Connection,
        reused: bool,
        key: &ConnKey,
        generation: u64,
        watch: Option<Watch>,
    ) -> PooledConn {
        let fd = conn.transport().tcp().as_raw_fd();
        self.used(fd);
        PooledConn {
            fd,
            conn: Some(conn),
            reused,
            pool: Arc::clone(self),
            key: key.clone(),
            generation,
            watch,
        }
    }

    /// Takes over a connection made elsewhere (the HTTP/2 connect, when ALPN
    /// chose HTTP/1.1) as if checked out now. It counts as open from here on;
    /// it was made without waiting for a slot (its HTTP/2 lease ended when
    /// ALPN answered).
    pub fn adopt(self: &Arc<Self>, key: ConnKey, transport: Transport) -> PooledConn {
        let generation = self.lock().adopt(&key);
        self.pooled(Connection::new(transport), false, &key, generation, None)
    }

    /// Takes an idle live connection for `key` (origin and route), or opens a
    /// new one when a slot is free, or waits for one until the pool deadline
    /// (`PoolTimeout`). `fresh` skips the idle connections (the retry after a
    /// stale one).
    pub fn checkout(
        self: &Arc<Self>,
        key: &ConnKey,
        deadlines: &Deadlines,
        fresh: bool,
        interrupt: &dyn Interrupt,
    ) -> Result<PooledConn, Error> {
        let mut wait_until: Option<Option<Instant>> = None;
        loop {
            match self.claim(key, fresh, fits_blocking, into_blocking, |state| state) {
                Claim::Reuse {
                    conn,
                    generation,
                    watch,
                } => return Ok(self.pooled(conn, true, key, generation, watch)),
                Claim::Connect(generation) => {
                    // The guard frees the slot if connecting fails.
                    let slot = SlotGuard::new(self, key, generation);
                    let stream = connect_route(key, &self.tls, deadlines, interrupt)?;
                    slot.disarm();
                    return Ok(self.pooled(Connection::new(stream), false, key, generation, None));
                }
                Claim::Wait(state, bound) => {
                    let until =
                        *wait_until.get_or_insert_with(|| deadlines.until(deadlines.timeouts.pool));
                    if !self.wait_for_slot(state, until, interrupt)? {
                        return Err(Pool::wait_timed_out(deadlines, key, bound));
                    }
                }
            }
        }
    }

    /// Waits on the condition variable until a release wakes us (`true`),
    /// `until` passes (`false`: the caller's `PoolTimeout`) or a signal asks
    /// to stop. A condition variable wait sees no EINTR: a caller that
    /// Ctrl-C can stop waits in slices and asks between them (without the
    /// lock: the check takes the GIL, which a thread queued on this lock may
    /// hold).
    fn wait_for_slot(
        &self,
        state: MutexGuard<'_, PoolState<ConnKey, Idle>>,
        until: Option<Instant>,
        interrupt: &dyn Interrupt,
    ) -> Result<bool, Error> {
        let left = until.map(|until| until.saturating_duration_since(Instant::now()));
        if left.is_some_and(|left| left.is_zero()) {
            return Ok(false);
        }
        let polling = interrupt.needs_polling();
        let wait = match left {
            Some(left) if polling => Some(left.min(SIGNAL_CHECK_INTERVAL)),
            None if polling => Some(SIGNAL_CHECK_INTERVAL),
            other => other,
        };
        self.waiting_threads.fetch_add(1, Ordering::Relaxed);
        let (state, timed_out) = match wait {
            None => (
                self.freed.wait(state).unwrap_or_else(|p| p.into_inner()),
                false,
            ),
            Some(wait) => {
                let (state, result) = self
                    .freed
                    .wait_timeout(state, wait)
                    .unwrap_or_else(|p| p.into_inner());
                (state, result.timed_out())
            }
        };
        self.waiting_threads.fetch_sub(1, Ordering::Relaxed);
        drop(state);
        if polling && timed_out && interrupt.should_abort() {
            return Err(crate::interrupt::interrupted());
        }
        Ok(true)
    }

    /// Waits on the calling thread for a rate-limit token for a request to
    /// `origin` (see [`Pool::take_token`]); at once without a rate limit or
    /// with a token in the bucket. The sleep is cut in slices when Ctrl-C
    /// must be able to stop it.
    pub fn admit(
        &self,
        origin: &Origin,
        deadlines: &Deadlines,
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        let Some(at) = self.take_token(origin, deadlines)? else {
            return Ok(());
        };
        let polling = interrupt.needs_polling();
        loop {
            let left = at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            if !polling {
                std::thread::sleep(left);
                continue;
            }
            std::thread::sleep(left.min(SIGNAL_CHECK_INTERVAL));
            if interrupt.should_abort() {
                return Err(crate::interrupt::interrupted());
            }
        }
    }

    /// Returns a connection whose response was read completely.
    pub fn checkin(&self, mut pooled: PooledConn) {
        let Some(conn) = pooled.conn.take() else {
            return;
        };
        Pool::give_back(
            &pooled.pool,
            &pooled.key,
            Driven::Blocking(conn),
            pooled.fd,
            pooled.generation,
            pooled.watch.take(),
        );
    }
}
