//! The rate limit's bookkeeping, with no I/O and no waiting: a token bucket
//! per host (or one for the whole client), refilled from the monotonic clock
//! the caller reads at each request. No timer thread: the tokens a bucket
//! holds are computed when a request asks for one.
//!
//! A request that finds the bucket empty reserves the next token anyway (the
//! count goes below zero) and is told how long to wait for it; the waiting
//! itself (a sleep on the caller's thread, a tokio sleep) is the pool faces'
//! business. Reserving instead of retrying means waiters never race each
//! other for a token: each gets its own instant, in the order they asked,
//! and nobody has to be woken. A request whose token would come after its
//! deadline reserves nothing and fails at once.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

use crate::limits::{DEFAULT_RATE_BURST_WINDOW, RATE_BUCKETS_PRUNE_AT};
use crate::target::FxBuild;

/// How many requests a client may start per second, and how many at once
/// after a quiet spell (the burst).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    per_second: f64,
    burst: u32,
    per_host: bool,
}

impl RateLimit {
    /// `per_second` requests per second (finite, above zero), `burst` at
    /// once at most (`None`: [`DEFAULT_RATE_BURST_WINDOW`]'s worth of
    /// tokens, at least 1), counted per origin when `per_host`, else for
    /// all the client's requests together. The error says which argument
    /// is wrong.
    pub fn new(per_second: f64, burst: Option<u32>, per_host: bool) -> Result<Self, String> {
        if !per_second.is_finite() || per_second <= 0.0 {
            return Err(format!(
                "per_second must be a number above 0, got {per_second}"
            ));
        }
        let burst = match burst {
            Some(0) => return Err("burst must be at least 1".to_owned()),
            Some(burst) => burst,
            None => default_burst(per_second),
        };
        Ok(RateLimit {
            per_second,
            burst,
            per_host,
        })
    }

    /// Requests per second, in the long run.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    /// Requests that may start at once after a quiet spell.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Whether each origin has its own budget (else one for the client).
    pub fn per_host(&self) -> bool {
        self.per_host
    }
}

/// A fifth of a second's worth of tokens, at least 1: a burst after a quiet
/// spell adds that little to what a window of a second or two sees.
fn default_burst(per_second: f64) -> u32 {
    let tokens = (per_second * DEFAULT_RATE_BURST_WINDOW.as_secs_f64()).floor();
    // Saturating: `as` clamps a float beyond u32's range.
    (tokens as u32).max(1)
}

/// Tokens at an instant; below zero when requests reserved tokens still to come.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(limit: &RateLimit, now: Instant) -> Self {
        Bucket {
            tokens: f64::from(limit.burst),
            at: now,
        }
    }

    /// The tokens at `now` (the clock never runs backwards here: an earlier
    /// `now` from another thread adds nothing).
    fn refill(&mut self, limit: &RateLimit, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * limit.per_second).min(f64::from(limit.burst));
        self.at = self.at.max(now);
    }

    fn is_full(&self, limit: &RateLimit) -> bool {
        self.tokens >= f64::from(limit.burst)
    }
}

/// The buckets of one client.
pub(crate) struct Rates<K> {
    limit: RateLimit,
    /// Per host when `limit.per_host`; else the one bucket sits under no key.
    buckets: HashMap<K, Bucket, FxBuild>,
    shared: Option<Bucket>,
    /// The bucket count at which the next new host prunes the full ones:
    /// twice what a prune left (at least [`RATE_BUCKETS_PRUNE_AT`]), so
    /// sweeps stay rare when most buckets are in use.
    prune_at: usize,
}

impl<K: Eq + Hash + Clone> Rates<K> {
    pub fn new(limit: RateLimit) -> Self {
        Rates {
            limit,
            buckets: HashMap::default(),
            shared: None,
            prune_at: RATE_BUCKETS_PRUNE_AT,
        }
    }

    pub fn limit(&self) -> &RateLimit {
        &self.limit
    }

    /// Reserves a token for a request to `host` at `now`: `Ok` with how long
    /// the request waits for it (zero: go now), or `Err` with that wait when
    /// the token would come after `until` (nothing is reserved then).
    pub fn reserve(
        &mut self,
        host: &K,
        now: Instant,
        until: Option<Instant>,
    ) -> Result<Duration, Duration> {
        let limit = self.limit;
        if limit.per_host && !self.buckets.contains_key(host) {
            self.prune(now);
        }
        let bucket = if limit.per_host {
            // The first request to a host: the only allocation.
            self.buckets
                .entry(host.clone())
                .or_insert_with(|| Bucket::full(&limit, now))
        } else {
            self.shared.get_or_insert_with(|| Bucket::full(&limit, now))
        };
        bucket.refill(&limit, now);
        let wait = if bucket.tokens >= 1.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((1.0 - bucket.tokens) / limit.per_second)
        };
        if until.is_some_and(|until| now + wait > until) {
            return Err(wait);
        }
        bucket.tokens -= 1.0;
        Ok(wait)
    }

    /// Drops the buckets that are full at `now` (they carry nothing a new
    /// bucket would not), once the map holds many: a crawl of a million
    /// hosts must not keep a million buckets.
    fn prune(&mut self, now: Instant) {
        if self.buckets.len() < self.prune_at {
            return;
        }
        let limit = self.limit;
        self.buckets.retain(|_, bucket| {
            bucket.refill(&limit, now);
            !bucket.is_full(&limit)
        });
        self.prune_at = (2 * self.buckets.len()).max(RATE_BUCKETS_PRUNE_AT);
    }

    #[cfg(test)]
    fn bucket_count(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reservation's wait in whole microseconds (the float arithmetic
    /// leaves nanoseconds of noise).
    fn us(reserved: Result<Duration, Duration>) -> Result<u128, u128> {
        let round = |d: Duration| (d.as_nanos() + 500) / 1000;
        reserved.map(round).map_err(round)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn rates(per_second: f64, burst: Option<u32>, per_host: bool) -> Rates<&'static str> {
        Rates::new(RateLimit::new(per_second, burst, per_host).unwrap())
    }

    #[test]
    fn the_default_burst_is_a_fifth_of_a_second_of_tokens_and_at_least_one() {
        let burst = |r| RateLimit::new(r, None, true).unwrap().burst();
        assert_eq!(burst(100.0), 20);
        assert_eq!(burst(50.0), 10);
        assert_eq!(burst(7.0), 1);
        assert_eq!(burst(0.5), 1);
        assert_eq!(RateLimit::new(100.0, Some(3), true).unwrap().burst(), 3);
    }

    #[test]
    fn bad_arguments_name_themselves() {
        assert!(RateLimit::new(0.0, None, true)
            .unwrap_err()
            .contains("per_second"));
        assert!(RateLimit::new(f64::NAN, None, true)
            .unwrap_err()
            .contains("per_second"));
        assert!(RateLimit::new(-1.0, None, true)
            .unwrap_err()
            .contains("per_second"));
        assert!(RateLimit::new(10.0, Some(0), true)
            .unwrap_err()
            .contains("burst"));
    }

    #[test]
    fn a_burst_goes_at_once_then_requests_are_spaced_by_the_rate() {
        let t0 = Instant::now();
        let mut r = rates(10.0, Some(3), true);
        for _ in 0..3 {
            assert_eq!(us(r.reserve(&"a", t0, None)), Ok(0));
        }
        // The 4th, 5th and 6th requests at t0 each get the next token: 100 ms apart.
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(100000));
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(200000));
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(300000));
        // At t0 + 300 ms the three reserved tokens have come and gone: the
        // next one is 100 ms away.
        assert_eq!(us(r.reserve(&"a", t0 + ms(300), None)), Ok(100000));
    }

    #[test]
    fn requests_over_a_window_stay_within_rate_times_window_plus_burst() {
        // Asking as fast as allowed for 10 s of injected clock: every request
        // goes at its reserved instant.
        let t0 = Instant::now();
        let mut r = rates(50.0, None, true);
        let mut now = t0;
        let mut starts = Vec::new();
        while now < t0 + Duration::from_secs(10) {
            let wait = r.reserve(&"a", now, None).unwrap();
            now += wait;
            starts.push(now);
        }
        // Any 1 s window holds at most 50 + the burst (10) starts.
        for (i, start) in starts.iter().enumerate() {
            let within = starts[i..]
                .iter()
                .take_while(|t| **t < *start + Duration::from_secs(1))
                .count();
            assert!(within <= 60, "{within} starts in 1 s from {i}");
        }
        // 10 s at 50/s, plus the initial burst.
        assert!((505..=511).contains(&starts.len()), "{}", starts.len());
    }

    #[test]
    fn hosts_have_their_own_buckets_unless_the_limit_is_for_the_client() {
        let t0 = Instant::now();
        let mut r = rates(10.0, Some(1), true);
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(0));
        assert_eq!(us(r.reserve(&"b", t0, None)), Ok(0));
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(100000));
        let mut r = rates(10.0, Some(1), false);
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(0));
        assert_eq!(us(r.reserve(&"b", t0, None)), Ok(100000));
    }

    #[test]
    fn a_token_beyond_the_deadline_is_not_reserved() {
        let t0 = Instant::now();
        let mut r = rates(10.0, Some(1), true);
        assert_eq!(us(r.reserve(&"a", t0, None)), Ok(0));
        assert_eq!(us(r.reserve(&"a", t0, Some(t0 + ms(50)))), Err(100000));
        // Nothing was taken: the next request still waits 100 ms, not 200.
        assert_eq!(us(r.reserve(&"a", t0, Some(t0 + ms(100)))), Ok(100000));
    }

    #[test]
    fn an_idle_spell_refills_up_to_the_burst_only() {
        let t0 = Instant::now();
        let mut r = rates(10.0, Some(2), true);
        for _ in 0..2 {
            r.reserve(&"a", t0, None).unwrap();
        }
        let later = t0 + Duration::from_secs(60);
        assert_eq!(us(r.reserve(&"a", later, None)), Ok(0));
        assert_eq!(us(r.reserve(&"a", later, None)), Ok(0));
        assert_eq!(us(r.reserve(&"a", later, None)), Ok(100000));
    }

    #[test]
    fn full_buckets_are_pruned_once_there_are_many() {
        let t0 = Instant::now();
        let hosts: Vec<&'static str> = (0..RATE_BUCKETS_PRUNE_AT + 1)
            .map(|i| &*Box::leak(format!("h{i}").into_boxed_str()))
            .collect();
        let mut r = rates(10.0, Some(1), true);
        for host in &hosts[..RATE_BUCKETS_PRUNE_AT] {
            r.reserve(host, t0, None).unwrap();
        }
        assert_eq!(r.bucket_count(), RATE_BUCKETS_PRUNE_AT);
        // One host keeps a debt: its bucket stays.
        r.reserve(&hosts[0], t0 + ms(100), None).unwrap();
        r.reserve(&hosts[0], t0 + ms(100), None).unwrap();
        // 150 ms later every other bucket refilled: a new host prunes them.
        r.reserve(&hosts[RATE_BUCKETS_PRUNE_AT], t0 + ms(150), None)
            .unwrap();
        assert_eq!(r.bucket_count(), 2);
        // The host that owes a token kept its bucket: the debt stands.
        assert_eq!(us(r.reserve(&hosts[0], t0 + ms(150), None)), Ok(150000));
    }
}
