//! Many whole requests at once for a caller that waits for all of them: the
//! runner behind Python's `Client.get_many` / `Client.map` and the C ABI's
//! `nodelay_request_many` (the Perl and Ruby fronts' `get_many`).
//!
//! A front copies its requests into owned [`Job`]s and gives them to a
//! [`Batch`] over its client (a [`Host`]). [`Batch::start`] runs `runners`
//! runners, each taking the next job index from a shared counter, running
//! that request and storing its outcome in that index's slot, so outcomes
//! come back in input order whatever order the answers arrive in. The front
//! waits with [`Started::wait`] in slices of its signal-check interval,
//! without its interpreter lock, and between slices runs its language's
//! signal handlers; one that raises makes it call [`Started::abort`].
//!
//! The runners are futures on the process runtime (`tasks.rs`): HTTP/1.1 on
//! the async driver, HTTP/2 multiplexed on the client's shared connection, so
//! 32 requests in flight cost no OS thread each. A client with proxies keeps
//! OS-thread runners over the blocking engine (`threads.rs`): the async
//! driver connects directly only.
//!
//! Each request is what a single request of the front is: the jar's `Cookie`
//! value unless the request has its own ([`crate::cookies::request_cookie`],
//! read as the request starts), the fields assembled by
//! [`crate::assembly::assemble`], the body read whole and decoded under the
//! host's size cap, the Set-Cookie fields stored as each response arrives.

mod tasks;
mod threads;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nodelay_core::cookies::CookieJar;
use nodelay_core::{Client, EncodedHeaders, Error, Timeouts};

use crate::assembly::assemble;
use crate::cookies::{request_cookie, store_response};
use crate::Head;

/// Upper bound on requests in flight per batch, whatever `concurrency` asks
/// for: each one usually holds its own connection (and, on the threaded path
/// of proxied clients, an OS thread); more than this is a misuse that would
/// exhaust the process's descriptors.
pub const MAX_BATCH_CONCURRENCY: usize = 1024;

/// What a batch needs of the front's client; a front implements it on the
/// object that keeps its client alive (the batch holds it until the last
/// runner is done, which may be after the caller gave up waiting).
pub trait Host: Send + Sync + 'static {
    /// The engine client that sends the requests.
    fn client(&self) -> &Client;
    /// Cap on a decoded (decompressed) body, in bytes.
    fn max_decoded_size(&self) -> u64;
    /// The cookie jar requests read and responses fill; `None`: no cookies.
    fn jar(&self) -> Option<&CookieJar>;
}

/// One request, owned: the runners run without the front's interpreter lock,
/// so nothing here borrows from the caller's objects.
pub struct Job {
    /// Shared by consecutive requests with the same method (a front that
    /// knows they are the same gives one `Arc`).
    pub method: Arc<str>,
    /// Shared by consecutive requests to the same URL: a batch polling one
    /// URL prepares it once per runner (see `tasks.rs`).
    pub url: Arc<str>,
    /// Shared by the requests given the same header list.
    pub headers: Arc<HeaderSet>,
    /// The request body; `None`: none.
    pub body: Option<Vec<u8>>,
}

/// The header fields of a job, shared by the jobs given the same list.
pub struct HeaderSet {
    pairs: Vec<(String, String)>,
    /// The fields validated and encoded once, for a client whose requests
    /// all go out as direct HTTP/1.1 (`Client::prepare_encoded`); `None`:
    /// each request encodes them (and reports a bad field itself).
    encoded: Option<EncodedHeaders>,
    /// The list has its own `Cookie` field (the jar's is then not added).
    has_cookie: bool,
}

impl HeaderSet {
    /// The fields a request is sent with besides the jar's `Cookie` (the
    /// client's defaults already assembled in, [`crate::assembly::assemble`]
    /// with no cookie); `has_cookie`: one of them is a `Cookie` field, by the
    /// front's own rule for names ([`crate::cookies::is_cookie_name`]).
    /// `encode`: also encode them now, for every job that shares them
    /// (what [`Batch::encodes_headers`] says for the client).
    pub fn new(pairs: Vec<(String, String)>, has_cookie: bool, encode: bool) -> HeaderSet {
        let encoded = encode
            .then(|| {
                let views: Vec<(&str, &str)> = pairs
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                EncodedHeaders::new(&views).ok()
            })
            .flatten();
        HeaderSet {
            pairs,
            encoded,
            has_cookie,
        }
    }
}

/// A response read whole (body decoded), its connection given back.
pub struct Done {
    /// The head as received, looked up lazily.
    pub head: Head,
    /// The decoded body.
    pub body: Vec<u8>,
    /// From the start of the request to its last body byte.
    pub elapsed: Duration,
}

/// What became of one job.
pub type Outcome = Result<Done, Error>;

/// The jobs, their outcomes and what the runners share.
pub struct Batch<H: Host> {
    host: H,
    jobs: Vec<Job>,
    timeouts: Timeouts,
    /// When the whole batch must be over, and its length (named in the
    /// timeout message of a request it cut short).
    deadline: Option<(Instant, Duration)>,
    /// The next job index to take.
    next: AtomicUsize,
    /// Set on an interrupt, or on the first failure when `stop_on_error`: no
    /// new request starts, and a blocking call interrupted by a signal gives
    /// up.
    cancel: AtomicBool,
    stop_on_error: bool,
    /// Outcome of each job, by index (each slot is written once, by one runner).
    outcomes: Vec<Mutex<Option<Outcome>>>,
    /// A response's Set-Cookie fields changed the jar.
    cookies_changed: AtomicBool,
}

impl<H: Host> Batch<H> {
    /// A batch of `jobs` over `host`'s client, each request bounded by
    /// `timeouts` and, with a `deadline`, by what is left of it when it
    /// starts (a request that cannot finish in time fails with the total
    /// timeout's error naming the deadline). `stop_on_error`: the first
    /// failure stops the batch (requests not started are not sent; their
    /// outcome is `None`).
    pub fn new(
        host: H,
        jobs: Vec<Job>,
        timeouts: Timeouts,
        deadline: Option<Duration>,
        stop_on_error: bool,
    ) -> Arc<Self> {
        let outcomes = (0..jobs.len()).map(|_| Mutex::new(None)).collect();
        Arc::new(Batch {
            host,
            jobs,
            timeouts,
            deadline: deadline.map(|length| (Instant::now() + length, length)),
            next: AtomicUsize::new(0),
            cancel: AtomicBool::new(false),
            stop_on_error,
            outcomes,
            cookies_changed: AtomicBool::new(false),
        })
    }

    /// Whether a [`HeaderSet`] for `client` should be encoded once
    /// (`HeaderSet::new`'s `encode`): its requests all go out as direct
    /// HTTP/1.1, so their fields are encoded the same way.
    pub fn encodes_headers(client: &Client) -> bool {
        client.is_direct_http1()
    }

    /// The host given to [`Batch::new`].
    pub fn host(&self) -> &H {
        &self.host
    }

    /// Starts `runners` runners (no more than there are jobs; the front
    /// bounds `runners` by [`MAX_BATCH_CONCURRENCY`]) and returns at once.
    pub fn start(self: &Arc<Self>, runners: usize) -> Started<H> {
        let runners = runners.clamp(1, self.jobs.len().max(1));
        let running = Running::new(runners);
        if self.jobs.is_empty() {
            for _ in 0..runners {
                running.finished_one();
            }
            return Started::new(self, running, Vec::new(), None);
        }
        if self.host.client().has_proxies() {
            threads::start(self, running, runners)
        } else {
            tasks::start(self, running, runners)
        }
    }

    /// Every job's outcome, in input order (each taken once): `None` for a
    /// job never sent (the batch stopped or was aborted first).
    pub fn take_outcomes(&self) -> Vec<Option<Outcome>> {
        self.outcomes
            .iter()
            .map(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take())
            .collect()
    }

    /// Whether a response's Set-Cookie fields changed the jar (the front
    /// then autosaves or notifies once for the whole batch).
    pub fn cookies_changed(&self) -> bool {
        self.cookies_changed.load(Ordering::Relaxed)
    }

    /// The next job to run, unless the batch is cancelled or all are taken.
    fn take_next(&self) -> Option<(usize, &Job)> {
        if self.cancel.load(Ordering::Relaxed) {
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        self.jobs.get(index).map(|job| (index, job))
    }

    /// Stores a job's outcome; a failure stops the batch when asked to.
    fn store(&self, index: usize, outcome: Outcome) {
        if outcome.is_err() && self.stop_on_error {
            self.cancel.store(true, Ordering::Relaxed);
        }
        *self.outcomes[index]
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(outcome);
    }

    /// The timeouts of a request starting now: the batch's, with the total
    /// cut to what is left of the deadline when that comes first.
    fn timeouts_now(&self) -> Timeouts {
        let Some((deadline, length)) = self.deadline else {
            return self.timeouts;
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if self.timeouts.total.is_some_and(|total| total <= left) {
            return self.timeouts;
        }
        Timeouts {
            total: Some(left),
            total_configured: Some(length),
            ..self.timeouts
        }
    }

    /// The jar's `Cookie` value for `job` (read as the request starts),
    /// unless the request carries its own `Cookie` header or there is no jar.
    fn cookie_for(&self, job: &Job) -> Option<String> {
        let jar = self.host.jar()?;
        request_cookie(jar, &job.url, || Ok::<_, ()>(job.headers.has_cookie))
            .ok()
            .flatten()
    }

    /// Stores the response's Set-Cookie fields in the jar and makes the
    /// outcome.
    fn done(&self, job: &Job, head: Head, body: Vec<u8>, elapsed: Duration) -> Done {
        if let Some(jar) = self.host.jar() {
            if store_response(jar, &head, &job.url) {
                self.cookies_changed.store(true, Ordering::Relaxed);
            }
        }
        Done {
            head,
            body,
            elapsed,
        }
    }
}

/// `(name, value)` views of a job's headers plus the jar's cookie, assembled
/// by the front's rule ([`crate::assembly::assemble`]; the client's default
/// fields are already in the job's list).
fn header_pairs<'a>(job: &'a Job, cookie: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(job.headers.pairs.len() + 1);
    pairs.extend(
        job.headers
            .pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str())),
    );
    assemble(&mut pairs, cookie, []);
    pairs
}

/// Runners still running; the last one to finish wakes the caller. One
/// wake-up per batch: a message per response would wake the waiting thread
/// (and switch to it) a thousand times for a thousand requests.
struct Running {
    count: Mutex<usize>,
    all_done: Condvar,
}

impl Running {
    fn new(count: usize) -> Arc<Self> {
        Arc::new(Running {
            count: Mutex::new(count),
            all_done: Condvar::new(),
        })
    }

    fn finished_one(&self) {
        let mut count = self.count.lock().unwrap_or_else(|p| p.into_inner());
        *count -= 1;
        if *count == 0 {
            self.all_done.notify_all();
        }
    }
}

/// A started batch: what the waiting caller holds.
pub struct Started<H: Host> {
    batch: Arc<Batch<H>>,
    running: Arc<Running>,
    /// The runtime tasks, aborted by [`Started::abort`] (empty for thread
    /// runners, which stop at the cancel flag).
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// A runner thread could not be started (the batch was cancelled).
    spawn_error: Option<std::io::Error>,
}

impl<H: Host> Started<H> {
    fn new(
        batch: &Arc<Batch<H>>,
        running: Arc<Running>,
        tasks: Vec<tokio::task::JoinHandle<()>>,
        spawn_error: Option<std::io::Error>,
    ) -> Self {
        Started {
            batch: Arc::clone(batch),
            running,
            tasks,
            spawn_error,
        }
    }

    /// Waits up to `slice` for every runner to be done; true when they are.
    /// Called without the front's interpreter lock, in slices of its
    /// signal-check interval.
    pub fn wait(&self, slice: Duration) -> bool {
        let count = self.running.count.lock().unwrap_or_else(|p| p.into_inner());
        let (count, _) = self
            .running
            .all_done
            .wait_timeout_while(count, slice, |c| *c > 0)
            .unwrap_or_else(|p| p.into_inner());
        *count == 0
    }

    /// Waits for every runner, asking `interrupted` every `slice`; when it
    /// answers true the batch is aborted and this returns false.
    pub fn wait_unless(&self, slice: Duration, mut interrupted: impl FnMut() -> bool) -> bool {
        loop {
            if self.wait(slice) {
                return true;
            }
            if interrupted() {
                self.abort();
                return false;
            }
        }
    }

    /// Stops the batch now: no request starts any more, the runtime tasks
    /// are dropped (an HTTP/1.1 connection in use is closed, never pooled
    /// half-used; an HTTP/2 stream is reset), and thread runners give up at
    /// their next interrupt check, finishing in the background.
    pub fn abort(&self) {
        self.batch.cancel.store(true, Ordering::Relaxed);
        for task in &self.tasks {
            task.abort();
        }
    }

    /// The error that kept a runner thread from starting, once every runner
    /// that did start is done.
    pub fn spawn_error(&mut self) -> Option<std::io::Error> {
        self.spawn_error.take()
    }
}
