//! The pool's bookkeeping, with no I/O and no waiting: per-origin LIFO
//! stacks of idle connections, the count of open connections against
//! `max_connections` (and per origin against `max_per_host`), the
//! keep-alive cap, idle expiry against a clock the caller reads, and the
//! fork generation the connections belong to.
//!
//! Every operation is a few field updates under the caller's lock. What to
//! do with a connection that leaves the pool (close it, abandon it after a
//! fork, check it is alive) and whom to wake when a slot frees up are the
//! caller's business (`mod.rs`, the blocking face in `blocking.rs`, the
//! tokio face in `asynchronous.rs`).

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

use super::rate::RateLimit;
use crate::target::FxBuild;

/// Pool bounds; `None` means unbounded / never expires (the `Default`:
/// nothing bounded).
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolConfig {
    /// Connections open at once, idle and busy, HTTP/2 included.
    pub max_connections: Option<usize>,
    /// Idle connections kept for reuse; more are closed on return.
    pub max_keepalive: Option<usize>,
    /// How long an idle connection is kept before it is closed.
    pub keepalive_expiry: Option<Duration>,
    /// Connections open at once to one origin (scheme, host, port; through
    /// a proxy, one route to it), idle, busy and being opened.
    pub max_per_host: Option<usize>,
    /// How many requests may start per second (`pool/rate.rs`).
    pub rate: Option<RateLimit>,
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
    /// idle connection (of any origin, or of the caller's origin when that
    /// one is at `max_per_host`): the caller closes it.
    Evicted(C),
    /// A bound is reached by connections in use: wait.
    Full(Bound),
}

/// Which bound a checkout waits on (named in its `PoolTimeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// `max_connections`, over all origins.
    Pool,
    /// `max_per_host`, this many connections to the caller's origin.
    Host(usize),
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
    /// The same, per origin; kept only under a `max_per_host` (no map
    /// update on the path of a pool without one). An origin with none open
    /// has no entry.
    open_per_host: HashMap<K, usize, FxBuild>,
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
            open_per_host: HashMap::default(),
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

    #[cfg(test)]
    fn open_to(&self, key: &K) -> usize {
        self.open_per_host.get(key).copied().unwrap_or(0)
    }

    /// Counts one more connection open to `key`.
    fn opened(&mut self, key: &K) {
        self.open += 1;
        if self.config.max_per_host.is_some() {
            match self.open_per_host.get_mut(key) {
                Some(n) => *n += 1,
                // The first connection to an origin: the only allocation.
                None => {
                    self.open_per_host.insert(key.clone(), 1);
                }
            }
        }
    }

    /// Counts one connection fewer open to `key`.
    fn closed(&mut self, key: &K) {
        self.open = self.open.saturating_sub(1);
        if self.config.max_per_host.is_some() {
            if let Some(n) = self.open_per_host.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    self.open_per_host.remove(key);
                }
            }
        }
    }

    /// Starts over in fork generation `generation`: every count goes to zero
    /// (checked-out connections belong to threads that do not exist in a
    /// child) and the inherited idle connections are handed to the caller,
    /// who must not use them.
    pub fn reset(&mut self, generation: u64) -> impl Iterator<Item = C> + '_ {
        self.idle_count = 0;
        self.open = 0;
        self.open_per_host.clear();
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
        let entry = if at + 1 == stack.len() {
            stack.pop()?
        } else {
            stack.remove(at)
        };
        self.idle_count -= 1;
        if entry.expired(now, self.config.keepalive_expiry) {
            self.closed(key);
            return Some(Popped::Expired(entry.conn));
        }
        Some(Popped::Fresh(entry.conn))
    }

    /// The first idle connection, of any origin, that is unexpired at `now`
    /// and `matches`.
    pub fn find_idle(&self, now: Instant, matches: impl Fn(&C) -> bool) -> Option<&C> {
        let expiry = self.config.keepalive_expiry;
        self.idle
            .values()
            .flatten()
            .find(|entry| !entry.expired(now, expiry) && matches(&entry.conn))
            .map(|entry| &entry.conn)
    }

    /// Takes a slot for a new connection to `key`: a free one, or one freed
    /// by evicting the least recently used idle connection of any origin.
    /// When `key`'s origin is at `max_per_host`, only one of its own idle
    /// connections (one the caller's driver cannot take, or passed over by
    /// a fresh retry) can make room; its slot passes to the caller.
    pub fn open_slot(&mut self, key: &K) -> Opened<C> {
        if let Some(max) = self.config.max_per_host {
            if self.open_per_host.get(key).is_some_and(|&n| n >= max) {
                let Some(stack) = self.idle.get_mut(key).filter(|s| !s.is_empty()) else {
                    return Opened::Full(Bound::Host(max));
                };
                // The bottom of a LIFO stack is its least recently used connection.
                let evicted = stack.remove(0);
                self.idle_count -= 1;
                return Opened::Evicted(evicted.conn);
            }
        }
        if self
            .config
            .max_connections
            .is_none_or(|max| self.open < max)
        {
            self.opened(key);
            return Opened::Slot;
        }
        let Some((owner, stack)) = self.idle.iter_mut().find(|(_, s)| !s.is_empty()) else {
            return Opened::Full(Bound::Pool);
        };
        let evicted = stack.remove(0);
        self.idle_count -= 1;
        if self.config.max_per_host.is_some() {
            // The slot changes hands between origins.
            let owner = owner.clone();
            self.closed(&owner);
            self.opened(key);
        }
        Opened::Evicted(evicted.conn)
    }

    /// Counts a connection to `key` made without a slot (one ALPN handed
    /// over from the HTTP/2 path) as open; returns the generation it
    /// belongs to.
    pub fn adopt(&mut self, key: &K) -> u64 {
        self.opened(key);
        self.generation
    }

    /// Frees the slot of a connection to `key` of `generation` that closed
    /// (or a lease that ended); a slot of an earlier generation was already
    /// forgotten.
    pub fn release(&mut self, key: &K, generation: u64) {
        if generation == self.generation {
            self.closed(key);
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
            self.closed(key);
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
        let mut next: Option<Instant> = None;
        let taken = self.take_idle_by(|stack| {
            let expired: Vec<C> = stack
                .extract_if(.., |entry| entry.surplus_until.is_some_and(|t| now > t))
                .map(|entry| entry.conn)
                .collect();
            for until in stack.iter().filter_map(|entry| entry.surplus_until) {
                next = Some(next.map_or(until, |next| next.min(until)));
            }
            expired
        });
        (taken, next)
    }

    /// Takes out every idle connection `closed` says is closed (the reaper's
    /// marks); their slots are freed.
    pub fn take_idle_where(&mut self, closed: impl Fn(&C) -> bool) -> Vec<C> {
        self.take_idle_by(|stack| {
            stack
                .extract_if(.., |entry| closed(&entry.conn))
                .map(|entry| entry.conn)
                .collect()
        })
    }

    /// Takes out every idle connection; their slots are freed.
    pub fn take_all_idle(&mut self) -> Vec<C> {
        let taken = self.take_idle_by(|stack| stack.drain(..).map(|entry| entry.conn).collect());
        self.idle.clear();
        taken
    }

    /// Takes out of each origin's stack what `take` extracts from it, and
    /// frees their slots.
    fn take_idle_by(&mut self, mut take: impl FnMut(&mut Vec<Entry<C>>) -> Vec<C>) -> Vec<C> {
        let mut taken = Vec::new();
        let mut emptied = Vec::new();
        for (key, stack) in self.idle.iter_mut() {
            let from_here = take(stack);
            if self.config.max_per_host.is_some() && !from_here.is_empty() {
                emptied.push((key.clone(), from_here.len()));
            }
            taken.extend(from_here);
        }
        self.idle_count -= taken.len();
        self.open -= taken.len();
        for (key, n) in emptied {
            if let Some(open) = self.open_per_host.get_mut(&key) {
                *open -= n;
                if *open == 0 {
                    self.open_per_host.remove(&key);
                }
            }
        }
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
            ..PoolConfig::default()
        }
    }

    fn any(_: &u32) -> bool {
        true
    }

    fn opened(state: &mut State) -> bool {
        matches!(state.open_slot(&"a"), Opened::Slot)
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
        assert!(matches!(s.open_slot(&"a"), Opened::Full(Bound::Pool)));
        s.checkin(&"a", 1, 0, t0, true);
        s.checkin(&"a", 2, 0, t0, true);
        // Both slots are held by idle connections of "a": a request for
        // another origin closes the older one and takes its slot.
        assert!(matches!(s.open_slot(&"b"), Opened::Evicted(1)));
        assert_eq!((s.idle_count(), s.open()), (1, 2));
        s.release(&"a", 0);
        assert!(opened(&mut s));
        assert!(matches!(s.open_slot(&"b"), Opened::Evicted(2)));
        assert!(matches!(s.open_slot(&"b"), Opened::Full(Bound::Pool)));
    }

    fn per_host(max: Option<usize>, per_host: usize) -> PoolConfig {
        PoolConfig {
            max_connections: max,
            max_per_host: Some(per_host),
            ..PoolConfig::default()
        }
    }

    #[test]
    fn max_per_host_counts_busy_idle_and_opening_connections_of_one_origin() {
        let t0 = Instant::now();
        let mut s = State::new(per_host(None, 2), 0, Duration::ZERO);
        // Two slots taken for "a" (being opened, then busy): a third waits,
        // naming the bound; another origin is not held back.
        assert!(matches!(s.open_slot(&"a"), Opened::Slot));
        assert!(matches!(s.open_slot(&"a"), Opened::Slot));
        assert!(matches!(s.open_slot(&"a"), Opened::Full(Bound::Host(2))));
        assert!(matches!(s.open_slot(&"b"), Opened::Slot));
        assert_eq!((s.open_to(&"a"), s.open_to(&"b"), s.open()), (2, 1, 3));
        // An idle connection of "a" still counts.
        s.checkin(&"a", 1, 0, t0, true);
        assert!(matches!(s.open_slot(&"a"), Opened::Evicted(1)));
        assert_eq!(s.open_to(&"a"), 2);
        // A connection that closes frees its origin's slot.
        s.release(&"a", 0);
        assert_eq!(s.open_to(&"a"), 1);
        assert!(matches!(s.open_slot(&"a"), Opened::Slot));
        assert!(matches!(s.open_slot(&"a"), Opened::Full(Bound::Host(2))));
    }

    #[test]
    fn at_max_per_host_only_the_origins_own_idle_connection_makes_room() {
        let t0 = Instant::now();
        let mut s = State::new(per_host(Some(3), 1), 0, Duration::ZERO);
        assert!(matches!(s.open_slot(&"a"), Opened::Slot));
        assert!(matches!(s.open_slot(&"b"), Opened::Slot));
        s.checkin(&"b", 2, 0, t0, true);
        // "b"'s idle connection does not make room for a second one to "a".
        assert!(matches!(s.open_slot(&"a"), Opened::Full(Bound::Host(1))));
        assert_eq!(s.idle_count(), 1);
        s.checkin(&"a", 1, 0, t0, true);
        // "a"'s own idle connection (one this driver cannot take, say) does.
        assert!(matches!(s.open_slot(&"a"), Opened::Evicted(1)));
        assert_eq!((s.open_to(&"a"), s.open_to(&"b"), s.open()), (1, 1, 2));
    }

    #[test]
    fn an_eviction_for_the_global_bound_moves_the_slot_between_origins() {
        let t0 = Instant::now();
        let mut s = State::new(per_host(Some(2), 2), 0, Duration::ZERO);
        assert!(matches!(s.open_slot(&"a"), Opened::Slot));
        assert!(matches!(s.open_slot(&"a"), Opened::Slot));
        s.checkin(&"a", 1, 0, t0, true);
        assert!(matches!(s.open_slot(&"b"), Opened::Evicted(1)));
        assert_eq!((s.open_to(&"a"), s.open_to(&"b"), s.open()), (1, 1, 2));
        assert!(matches!(s.open_slot(&"b"), Opened::Full(Bound::Pool)));
    }

    #[test]
    fn every_way_out_of_the_pool_frees_the_origins_slot() {
        let t0 = Instant::now();
        let grace = Duration::from_millis(100);
        let mut s = State::new(
            PoolConfig {
                max_keepalive: Some(1),
                keepalive_expiry: Some(Duration::from_secs(5)),
                max_per_host: Some(10),
                ..PoolConfig::default()
            },
            0,
            grace,
        );
        for _ in 0..5 {
            assert!(matches!(s.open_slot(&"a"), Opened::Slot));
            assert_eq!(s.adopt(&"b"), 0);
        }
        assert_eq!((s.open_to(&"a"), s.open_to(&"b")), (5, 5));
        // Closed at checkin (its peer closed it), kept, surplus.
        assert!(matches!(
            s.checkin(&"a", 1, 0, t0, false),
            CheckedIn::Closed(1)
        ));
        assert!(matches!(s.checkin(&"a", 2, 0, t0, true), CheckedIn::Kept));
        assert!(matches!(
            s.checkin(&"a", 3, 0, t0, true),
            CheckedIn::Surplus(_)
        ));
        assert_eq!(s.open_to(&"a"), 4);
        let (surplus, _) = s.take_surplus_expired(t0 + grace + Duration::from_millis(1));
        assert_eq!(surplus, [3]);
        assert_eq!(s.open_to(&"a"), 3);
        // Expired at checkout.
        assert!(matches!(
            s.pop_idle(&"a", t0 + Duration::from_secs(6), any),
            Some(Popped::Expired(2))
        ));
        assert_eq!(s.open_to(&"a"), 2);
        // Reaped, cleared.
        s.checkin(&"b", 4, 0, t0, true);
        assert_eq!(s.take_idle_where(|&c| c == 4), [4]);
        assert_eq!(s.open_to(&"b"), 4);
        s.checkin(&"b", 5, 0, t0, true);
        assert_eq!(s.take_all_idle(), [5]);
        assert_eq!((s.open_to(&"a"), s.open_to(&"b"), s.open()), (2, 3, 5));
        // A fork forgets them all.
        let _ = s.reset(1).count();
        assert_eq!((s.open_to(&"a"), s.open_to(&"b"), s.open()), (0, 0, 0));
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
        s.release(&"a", 7);
        assert_eq!(s.open(), 0);
        assert_eq!(s.adopt(&"a"), 8);
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
