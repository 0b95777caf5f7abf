//! The pool's bookkeeping, with no I/O and no waiting: per-origin LIFO
//! stacks of idle connections, the count of open connections against
//! `max_connections`, the keep-alive cap, idle expiry against a clock the
//! caller reads, and the fork generation the connections belong to.
//!
//! Every operation is a few field updates under the caller's lock. What to
//! do with a connection that leaves the pool (close it, abandon it after a
//! fork, check it is alive) and whom to wake when a slot frees up are the
//! caller's business (`mod.rs`, the blocking face in `blocking.rs`, the
//! tokio face in `asynchronous.rs`).

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

use crate::target::FxBuild;

/// Pool bounds; `None` means unbounded / never expires.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    /// Connections open at once, idle and busy, HTTP/2 included.
    pub max_connections: Option<usize>,
    /// Idle connections kept for reuse; more are closed on return.
    pub max_keepalive: Option<usize>,
    /// How long an idle connection is kept before it is closed.
    pub keepalive_expiry: Option<Duration>,
}

impl PoolConfig {
    /// Whether any connection is kept idle at all (neither a keep-alive
    /// bound of 0 nor an expiry of 0).
    pub(crate) fn keeps_idle(&self) -> bool {
        self.max_keepalive != Some(0) && self.keepalive_expiry != Some(Duration::ZERO)
    }
}

/// An idle connection and when it went idle.
struct Entry<C> {
    conn: C,
    since: Instant,
    /// For a connection kept beyond the keep-alive cap: when it closes
    /// unless reused before.
    surplus_until: Option<Instant>,
}

impl<C> Entry<C> {
    fn expired(&self, now: Instant, expiry: Option<Duration>) -> bool {
        expiry.is_some_and(|expiry| now.saturating_duration_since(self.since) > expiry)
            || self.surplus_until.is_some_and(|until| now > until)
    }
}

/// What [`PoolState::pop_idle`] found.
pub(crate) enum Popped<C> {
    /// The most recently used idle connection: its slot now belongs to the
    /// caller, who checks it is alive before use.
    Fresh(C),
    /// An idle connection past its expiry: its slot is freed, the caller
    /// closes it (and wakes a waiter).
    Expired(C),
}

/// What [`PoolState::open_slot`] did.
pub(crate) enum Opened<C> {
    /// A slot is the caller's.
    Slot,
    /// A slot is the caller's, made by closing this least recently used
    /// idle connection (of any origin): the caller closes it.
    Evicted(C),
    /// Every slot is held by a connection in use: wait.
    Full,
}

/// What [`PoolState::checkin`] did with a connection given back.
pub(crate) enum CheckedIn<C> {
    Kept,
    /// Kept beyond the keep-alive cap until this instant: the caller has
    /// [`PoolState::take_surplus_expired`] run then (nothing else may touch
    /// the pool meanwhile).
    Surplus(Instant),
    /// Not kept (the keep-alive cap, a zero expiry, or its peer closed it):
    /// its slot is freed, the caller closes it.
    Closed(C),
    /// It belongs to an earlier fork generation (the slots were reset since):
    /// nothing was counted, the caller disposes of it as an inherited one.
    Foreign(C),
}

pub(crate) struct PoolState<K, C> {
    idle: HashMap<K, Vec<Entry<C>>, FxBuild>,
    idle_count: usize,
    /// Connections open: idle plus checked out plus slots leased elsewhere.
    open: usize,
    generation: u64,
    config: PoolConfig,
    /// How long a connection coming back beyond the keep-alive cap is kept
    /// (zero: closed at once).
    surplus_grace: Duration,
}

impl<K: Eq + Hash + Clone, C> PoolState<K, C> {
    pub fn new(config: PoolConfig, generation: u64, surplus_grace: Duration) -> Self {
        PoolState {
            idle: HashMap::default(),
            idle_count: 0,
            open: 0,
            generation,
            config,
            surplus_grace,
        }
    }

    /// The fork generation whose connections are counted.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn idle_count(&self) -> usize {
        self.idle_count
    }

    #[cfg(test)]
    pub fn open(&self) -> usize {
        self.open
    }

    /// Starts over in fork generation `generation`: every count goes to zero
    /// (checked-out connections belong to threads that do not exist in a
    /// child) and the inherited idle connections are handed to the caller,
    /// who must not use them.
    pub fn reset(&mut self, generation: u64) -> impl Iterator<Item = C> + '_ {
        self.idle_count = 0;
        self.open = 0;
        self.generation = generation;
        self.idle
            .drain()
            .flat_map(|(_, stack)| stack.into_iter().map(|entry| entry.conn))
    }

    /// The most recently used idle connection for `key` that `fits` the
    /// caller (a driver takes only connections it can drive), or one past
    /// its expiry at `now` (call again for the next one), or `None`.
    pub fn pop_idle(
        &mut self,
        key: &K,
        now: Instant,
        fits: impl Fn(&C) -> bool,
    ) -> Option<Popped<C>> {
        let stack = self.idle.get_mut(key)?;
        // The top fits in all but rare cases: one look.
        let at = stack.iter().rposition(|entry| fits(&entry.conn))?;
        let entry = stack.remove(at);
        self.idle_count -= 1;
        if entry.expired(now, self.config.keepalive_expiry) {
            self.open -= 1;
            return Some(Popped::Expired(entry.conn));
        }
        Some(Popped::Fresh(entry.conn))
    }

    /// Takes a slot for a new connection: a free one, or one freed by
    /// evicting the least recently used idle connection of any origin.
    pub fn open_slot(&mut self) -> Opened<C> {
        if self
            .config
            .max_connections
            .is_none_or(|max| self.open < max)
        {
            self.open += 1;
            return Opened::Slot;
        }
        // The bottom of a LIFO stack is its least recently used connection.
        let Some(stack) = self.idle.values_mut().find(|s| !s.is_empty()) else {
            return Opened::Full;
        };
        let evicted = stack.remove(0);
        self.idle_count -= 1;
        Opened::Evicted(evicted.conn)
    }

    /// Counts a connection made without a slot (one ALPN handed over from
    /// the HTTP/2 path) as open; returns the generation it belongs to.
    pub fn adopt(&mut self) -> u64 {
        self.open += 1;
        self.generation
    }

    /// Frees the slot of a connection of `generation` that closed (or a
    /// lease that ended); a slot of an earlier generation was already
    /// forgotten.
    pub fn release(&mut self, generation: u64) {
        if generation == self.generation {
            self.open = self.open.saturating_sub(1);
        }
    }

    /// Gives back a connection of `generation` for `key` whose response was
    /// read whole, at `now`; `alive` false for one its peer closed meanwhile.
    /// Beyond the keep-alive cap a connection is kept for the surplus grace
    /// only: a burst of answers followed by a burst of requests (many
    /// requests in flight) then reuses its connections instead of closing
    /// and reopening those above the cap, while a server that stops
    /// accepting at a connection limit still sees them close soon after
    /// the burst (docs/pool.md, "Keep-alive default").
    pub fn checkin(
        &mut self,
        key: &K,
        conn: C,
        generation: u64,
        now: Instant,
        alive: bool,
    ) -> CheckedIn<C> {
        if generation != self.generation {
            return CheckedIn::Foreign(conn);
        }
        let within_cap = self
            .config
            .max_keepalive
            .is_none_or(|max| self.idle_count < max);
        let keep =
            alive && self.config.keeps_idle() && (within_cap || !self.surplus_grace.is_zero());
        if !keep {
            self.open -= 1;
            return CheckedIn::Closed(conn);
        }
        let surplus_until = (!within_cap).then(|| now + self.surplus_grace);
        let entry = Entry {
            conn,
            since: now,
            surplus_until,
        };
        match self.idle.get_mut(key) {
            Some(stack) => stack.push(entry),
            // The first connection of an origin: the only allocation.
            None => {
                self.idle.insert(key.clone(), vec![entry]);
            }
        }
        self.idle_count += 1;
        match surplus_until {
            Some(until) => CheckedIn::Surplus(until),
            None => CheckedIn::Kept,
        }
    }

    /// Takes out the surplus connections whose grace ended by `now` (their
    /// slots are freed), and tells when the next of those left ends.
    pub fn take_surplus_expired(&mut self, now: Instant) -> (Vec<C>, Option<Instant>) {
        let mut taken = Vec::new();
        let mut next: Option<Instant> = None;
        for stack in self.idle.values_mut() {
            let expired =
                stack.extract_if(.., |entry| entry.surplus_until.is_some_and(|t| now > t));
            taken.extend(expired.map(|entry| entry.conn));
            for until in stack.iter().filter_map(|entry| entry.surplus_until) {
                next = Some(next.map_or(until, |next| next.min(until)));
            }
        }
        self.idle_count -= taken.len();
        self.open -= taken.len();
        (taken, next)
    }

    /// Takes out every idle connection `closed` says is closed (the reaper's
    /// marks); their slots are freed.
    pub fn take_idle_where(&mut self, closed: impl Fn(&C) -> bool) -> Vec<C> {
        let mut taken = Vec::new();
        for stack in self.idle.values_mut() {
            taken.extend(
                stack
                    .extract_if(.., |entry| closed(&entry.conn))
                    .map(|entry| entry.conn),
            );
        }
        self.idle_count -= taken.len();
        self.open -= taken.len();
        taken
    }

    /// Takes out every idle connection; their slots are freed.
    pub fn take_all_idle(&mut self) -> Vec<C> {
        let taken: Vec<C> = self
            .idle
            .drain()
            .flat_map(|(_, stack)| stack.into_iter().map(|entry| entry.conn))
            .collect();
        self.idle_count = 0;
        self.open -= taken.len();
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection, by number.
    type State = PoolState<&'static str, u32>;

    fn config(max: Option<usize>, keep: Option<usize>, expiry_ms: Option<u64>) -> PoolConfig {
        PoolConfig {
            max_connections: max,
            max_keepalive: keep,
            keepalive_expiry: expiry_ms.map(Duration::from_millis),
        }
    }

    fn any(_: &u32) -> bool {
        true
    }

    fn opened(state: &mut State) -> bool {
        matches!(state.open_slot(), Opened::Slot)
    }

    fn fresh(popped: Option<Popped<u32>>) -> Option<u32> {
        match popped {
            Some(Popped::Fresh(c)) => Some(c),
            Some(Popped::Expired(c)) => panic!("{c} expired"),
            None => None,
        }
    }

    #[test]
    fn idle_connections_come_back_last_in_first_out_per_origin() {
        let t0 = Instant::now();
        let mut s = State::new(config(None, None, None), 0, Duration::ZERO);
        for _ in 0..3 {
            assert!(opened(&mut s));
        }
        assert!(matches!(s.checkin(&"a", 1, 0, t0, true), CheckedIn::Kept));
        assert!(matches!(s.checkin(&"a", 2, 0, t0, true), CheckedIn::Kept));
        assert!(matches!(s.checkin(&"b", 3, 0, t0, true), CheckedIn::Kept));
        assert_eq!((s.idle_count(), s.open()), (3, 3));
        assert_eq!(fresh(s.pop_idle(&"a", t0, any)), Some(2));
        assert_eq!(fresh(s.pop_idle(&"a", t0, any)), Some(1));
        assert_eq!(fresh(s.pop_idle(&"a", t0, any)), None);
        assert_eq!(fresh(s.pop_idle(&"b", t0, any)), Some(3));
        // Popped connections still hold their slots.
        assert_eq!((s.idle_count(), s.open()), (0, 3));
    }

    #[test]
    fn a_driver_takes_the_most_recent_idle_connection_it_can_drive() {
        let t0 = Instant::now();
        let mut s = State::new(config(None, None, None), 0, Duration::ZERO);
        for c in 1..=3 {
            assert!(opened(&mut s));
            s.checkin(&"a", c, 0, t0, true);
        }
        // Odd numbers stand for the connections this driver cannot take.
        let even = |c: &u32| c.is_multiple_of(2);
        assert_eq!(fresh(s.pop_idle(&"a", t0, even)), Some(2));
        assert_eq!(fresh(s.pop_idle(&"a", t0, even)), None);
        assert_eq!(fresh(s.pop_idle(&"a", t0, any)), Some(3));
        assert_eq!(s.idle_count(), 1);
    }

    #[test]
    fn max_connections_bounds_open_and_evicts_the_least_recently_used_idle_one() {
        let t0 = Instant::now();
        let mut s = State::new(config(Some(2), None, None), 0, Duration::ZERO);
        assert!(opened(&mut s));
        assert!(opened(&mut s));
        assert!(matches!(s.open_slot(), Opened::Full));
        s.checkin(&"a", 1, 0, t0, true);
        s.checkin(&"a", 2, 0, t0, true);
        // Both slots are held by idle connections of "a": a request for
        // another origin closes the older one and takes its slot.
        assert!(matches!(s.open_slot(), Opened::Evicted(1)));
        assert_eq!((s.idle_count(), s.open()), (1, 2));
        s.release(0);
        assert!(opened(&mut s));
        assert!(matches!(s.open_slot(), Opened::Evicted(2)));
        assert!(matches!(s.open_slot(), Opened::Full));
    }

    #[test]
    fn the_keepalive_cap_closes_what_comes_back_beyond_it() {
        let t0 = Instant::now();
        let mut s = State::new(config(None, Some(1), None), 0, Duration::ZERO);
        assert!(opened(&mut s));
        assert!(opened(&mut s));
        assert!(matches!(s.checkin(&"a", 1, 0, t0, true), CheckedIn::Kept));
        assert!(matches!(
            s.checkin(&"a", 2, 0, t0, true),
            CheckedIn::Closed(2)
        ));
        assert_eq!((s.idle_count(), s.open()), (1, 1));
    }

    #[test]
    fn beyond_the_cap_a_connection_is_kept_for_the_surplus_grace_only() {
        let t0 = Instant::now();
        let grace = Duration::from_millis(100);
        let mut s = State::new(config(None, Some(1), None), 0, grace);
        for _ in 0..3 {
            assert!(opened(&mut s));
        }
        assert!(matches!(s.checkin(&"a", 1, 0, t0, true), CheckedIn::Kept));
        let until = t0 + grace;
        assert!(matches!(s.checkin(&"a", 2, 0, t0, true), CheckedIn::Surplus(u) if u == until));
        // A request within the grace takes the surplus one (the most recent).
        assert_eq!(fresh(s.pop_idle(&"a", until, any)), Some(2));
        assert!(matches!(
            s.checkin(&"a", 2, 0, t0, true),
            CheckedIn::Surplus(_)
        ));
        assert!(matches!(
            s.checkin(&"b", 3, 0, t0, true),
            CheckedIn::Surplus(_)
        ));
        assert_eq!((s.idle_count(), s.open()), (3, 3));
        // Nothing ends before the grace does.
        let (taken, next) = s.take_surplus_expired(until);
        assert!(taken.is_empty());
        assert_eq!(next, Some(until));
        let (mut taken, next) = s.take_surplus_expired(until + Duration::from_millis(1));
        taken.sort();
        assert_eq!((taken, next), (vec![2, 3], None));
        assert_eq!((s.idle_count(), s.open()), (1, 1));
        // Past its grace, a surplus connection is not handed out either.
        assert!(opened(&mut s));
        s.checkin(&"a", 4, 0, t0, true);
        assert!(matches!(
            s.pop_idle(&"a", until + Duration::from_millis(1), any),
            Some(Popped::Expired(4))
        ));
    }

    #[test]
    fn a_connection_closed_by_its_peer_or_a_zero_expiry_is_not_kept() {
        let t0 = Instant::now();
        let mut s = State::new(config(None, None, None), 0, Duration::ZERO);
        assert!(opened(&mut s));
        assert!(matches!(
            s.checkin(&"a", 1, 0, t0, false),
            CheckedIn::Closed(1)
        ));
        let mut s = State::new(config(None, None, Some(0)), 0, Duration::ZERO);
        assert!(opened(&mut s));
        assert!(matches!(
            s.checkin(&"a", 1, 0, t0, true),
            CheckedIn::Closed(1)
        ));
        assert_eq!(s.open(), 0);
    }

    #[test]
    fn idle_connections_expire_by_the_injected_clock() {
        let t0 = Instant::now();
        let mut s = State::new(config(None, None, Some(5_000)), 0, Duration::ZERO);
        assert!(opened(&mut s));
        assert!(opened(&mut s));
        s.checkin(&"a", 1, 0, t0, true);
        s.checkin(&"a", 2, 0, t0 + Duration::from_secs(3), true);
        let later = t0 + Duration::from_millis(5_001);
        // 2 went idle 2 s before `later`; 1 went idle 5.001 s before it.
        assert_eq!(fresh(s.pop_idle(&"a", later, any)), Some(2));
        assert!(matches!(
            s.pop_idle(&"a", later, any),
            Some(Popped::Expired(1))
        ));
        assert_eq!((s.idle_count(), s.open()), (0, 1));
        // Exactly at the expiry a connection is still good.
        s.checkin(&"a", 2, 0, t0, true);
        assert_eq!(
            fresh(s.pop_idle(&"a", t0 + Duration::from_secs(5), any)),
            Some(2)
        );
    }

    #[test]
    fn a_fork_forgets_every_slot_and_hands_over_the_inherited_idle_ones() {
        let t0 = Instant::now();
        let mut s = State::new(config(Some(3), None, None), 7, Duration::ZERO);
        for _ in 0..3 {
            assert!(opened(&mut s));
        }
        s.checkin(&"a", 1, 7, t0, true);
        let mut inherited: Vec<u32> = s.reset(8).collect();
        inherited.sort();
        assert_eq!(inherited, [1]);
        assert_eq!((s.idle_count(), s.open(), s.generation()), (0, 0, 8));
        // What the parent's threads had checked out neither comes back nor
        // frees a slot of the child.
        assert!(matches!(
            s.checkin(&"a", 2, 7, t0, true),
            CheckedIn::Foreign(2)
        ));
        s.release(7);
        assert_eq!(s.open(), 0);
        assert_eq!(s.adopt(), 8);
        assert_eq!(s.open(), 1);
    }

    #[test]
    fn reaped_and_cleared_idle_connections_free_their_slots() {
        let t0 = Instant::now();
        let mut s = State::new(config(Some(4), None, None), 0, Duration::ZERO);
        for c in 1..=4u32 {
            assert!(opened(&mut s));
            s.checkin(&if c.is_multiple_of(2) { "a" } else { "b" }, c, 0, t0, true);
        }
        let mut reaped = s.take_idle_where(|&c| c > 2);
        reaped.sort();
        assert_eq!(reaped, [3, 4]);
        assert_eq!((s.idle_count(), s.open()), (2, 2));
        let mut rest = s.take_all_idle();
        rest.sort();
        assert_eq!(rest, [1, 2]);
        assert_eq!((s.idle_count(), s.open()), (0, 0));
    }
}
