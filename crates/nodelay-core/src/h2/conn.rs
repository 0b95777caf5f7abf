//! One HTTP/2 connection: the handshake with our settings, the task that
//! drives the connection's frames on the process runtime, and its lifetime:
//! it counts as one of the client's connections while open, closes (GOAWAY)
//! when idle past the keep-alive expiry or when the last handle to it goes.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::client::{Connection, SendRequest};
use tokio::time::Sleep;

use super::goaway::{GoAway, GoAwaySeen, Watched};
use super::limits::{
    CONNECTION_WINDOW_BYTES, HEADER_TABLE_BYTES, INITIAL_MAX_SEND_STREAMS,
    MAX_CONCURRENT_RESET_STREAMS, MAX_FRAME_BYTES, MAX_HEADER_LIST_BYTES,
    MAX_LOCAL_ERROR_RESET_STREAMS, MAX_SEND_BUFFER_BYTES, STREAM_WINDOW_BYTES,
};
use crate::aconnect::AsyncTransport;
use crate::error::{Error, ErrorKind};
use crate::pool::SlotLease as Lease;

/// A live HTTP/2 connection: cloned by every request that uses it (the clone is
/// a handle; the frames are driven by one task, and by callers in a hurry, see
/// [`Driver::flush_now`]). When the last handle goes (the pool forgot the
/// connection: `Client::close`, the client dropped, a replacement made) no new
/// stream can start and the connection says GOAWAY once its streams end.
#[derive(Clone)]
pub(crate) struct H2Conn {
    handle: Arc<Handle>,
    /// Tells connections of one origin apart, so a request that saw one die
    /// does not discard its already-made replacement.
    pub id: u64,
}

/// Shuts the connection down when the last [`H2Conn`] clone drops.
struct Handle(Arc<Driver>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.shut_down(false);
    }
}

/// How a connection lives: its idle expiry, and the client's connection slot
/// it holds until it ends.
pub(crate) struct Lifetime {
    /// Close after this long without an open stream; `None`: never.
    pub idle_expiry: Option<Duration>,
    /// Released when the connection has ended.
    pub slot: Option<Lease>,
}

/// A sender for one new stream and the guard counting it as open.
pub(crate) type OpenStream = (SendRequest<Bytes>, StreamGuard);

/// A stream counted as open on its connection until dropped (it lives in the
/// response, so a body still being read keeps the connection from expiring).
pub(crate) struct StreamGuard(Arc<Driver>);

impl StreamGuard {
    /// The latest GOAWAY the server sent on the stream's connection.
    pub fn goaway(&self) -> Option<GoAway> {
        self.0.goaway.get()
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if self.0.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since.fetch_max(self.0.now(), Ordering::AcqRel);
        }
    }
}

impl H2Conn {
    /// Sends the preface and our SETTINGS, and spawns the connection task.
    /// Returns the connection with its first stream, already counted as open.
    pub async fn handshake(
        io: AsyncTransport,
        id: u64,
        lifetime: Lifetime,
    ) -> Result<(H2Conn, OpenStream), Error> {
        let mut builder = h2::client::Builder::new();
        builder
            .initial_window_size(STREAM_WINDOW_BYTES)
            .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
            .max_frame_size(MAX_FRAME_BYTES)
            .max_header_list_size(MAX_HEADER_LIST_BYTES)
            .header_table_size(HEADER_TABLE_BYTES)
            .max_concurrent_reset_streams(MAX_CONCURRENT_RESET_STREAMS)
            .max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESET_STREAMS))
            .max_send_buffer_size(MAX_SEND_BUFFER_BYTES)
            .initial_max_send_streams(INITIAL_MAX_SEND_STREAMS)
            // We never accept pushed streams (RFC 9113 §8.4): nothing would read them.
            .enable_push(false);
        let goaway = Arc::new(GoAwaySeen::default());
        let io = Watched::new(io, Arc::clone(&goaway));
        let (send, connection) = builder.handshake::<_, Bytes>(io).await.map_err(|e| {
            Error::new(ErrorKind::Connect, format!("HTTP/2 handshake failed: {e}")).with_source(e)
        })?;
        let driver = Arc::new(Driver {
            connection: Mutex::new(Some(Box::pin(connection))),
            task: Mutex::new(None),
            closed: AtomicBool::new(false),
            sender: Mutex::new(Some(send.clone())),
            send_queued: AtomicBool::new(false),
            active: AtomicUsize::new(1),
            born: Instant::now(),
            idle_since: AtomicU64::new(0),
            idle_expiry: lifetime.idle_expiry,
            goaway,
            answered: AtomicBool::new(false),
        });
        let task = Arc::clone(&driver);
        let slot = lifetime.slot;
        let mut idle_timer = None;
        let mut deferred = None;
        // The outcome reaches every stream as its own error; the task only
        // records that the connection is gone. The slot lease lives (and is
        // released) with the task, i.e. exactly as long as the connection.
        tokio::spawn(std::future::poll_fn(move |cx| {
            let _held = &slot;
            task.poll_task(cx, &mut idle_timer, &mut deferred)
        }));
        let first = StreamGuard(Arc::clone(&driver));
        let conn = H2Conn {
            handle: Arc::new(Handle(driver)),
            id,
        };
        Ok((conn, (send, first)))
    }

    /// The latest GOAWAY the server sent, if any.
    pub fn goaway(&self) -> Option<GoAway> {
        self.handle.0.goaway.get()
    }

    /// Records that a response head arrived on this connection.
    pub fn mark_answered(&self) {
        self.handle.0.answered.store(true, Ordering::Relaxed);
    }

    /// Whether any response head arrived on this connection: the server
    /// made progress on it.
    pub fn answered_any(&self) -> bool {
        self.handle.0.answered.load(Ordering::Relaxed)
    }

    /// Whether new streams may still go on this connection: not after our
    /// shut-down, its end, or the server's GOAWAY (h2 would refuse them).
    pub fn is_open(&self) -> bool {
        let driver = &self.handle.0;
        !driver.closed.load(Ordering::Acquire) && !driver.goaway.any()
    }

    /// A sender for one new stream, and the guard that counts the stream as
    /// open; `None` once the connection no longer takes new streams.
    pub fn open_stream(&self) -> Option<OpenStream> {
        let driver = &self.handle.0;
        let sender = driver.sender.lock().unwrap_or_else(|e| e.into_inner());
        let send = sender.as_ref()?.clone();
        driver.active.fetch_add(1, Ordering::AcqRel);
        Some((send, StreamGuard(Arc::clone(driver))))
    }

    /// Gets the frames a request just queued written. A blocked sync caller
    /// (parked in `block_on`, on its own thread) and a lone request write them
    /// at once (`Driver::flush_now`). A request running as a task on the
    /// runtime while other streams are open (a batch, many async tasks) only
    /// marks them: the connection task then writes the frames of every
    /// request queued meanwhile in one `writev` (`Driver::poll_task`) instead
    /// of one `writev` per request.
    pub fn flush(&self) {
        let driver = &self.handle.0;
        if crate::executor::parks_with_deadlines() || driver.active.load(Ordering::Acquire) <= 1 {
            driver.flush_now();
        } else {
            driver.send_queued.store(true, Ordering::Release);
        }
    }
}

type Driven = Pin<Box<Connection<Watched<AsyncTransport>, Bytes>>>;

/// The connection future, polled by its task on the runtime and, to send a
/// request without waiting for that task to be scheduled, by the request's own
/// thread. Whoever polls it does so with the task's waker, so every wake-up the
/// connection asks for (socket readiness, new frames to send) goes to the task
/// and none is lost when a caller stops polling.
struct Driver {
    /// `None` once the connection ended.
    connection: Mutex<Option<Driven>>,
    /// The task's waker, from its latest poll.
    task: Mutex<Option<Waker>>,
    /// No new streams: shut down, or ended.
    closed: AtomicBool,
    /// The one sender new streams are cloned from; `None` after shut-down.
    /// Once it and every stream are gone, h2 sends GOAWAY(NO_ERROR) and ends
    /// the connection by itself.
    sender: Mutex<Option<SendRequest<Bytes>>>,
    /// Frames were queued by a task on the runtime and left for the
    /// connection task to write ([`H2Conn::flush`]).
    send_queued: AtomicBool,
    /// Streams opened and not yet dropped ([`StreamGuard`]).
    active: AtomicUsize,
    /// Origin of the nanosecond clock below.
    born: Instant,
    /// When `active` last fell to 0, in nanoseconds since `born`.
    idle_since: AtomicU64,
    idle_expiry: Option<Duration>,
    /// What the server said in GOAWAY frames ([`Watched`] records it).
    goaway: Arc<GoAwaySeen>,
    /// Whether a response head arrived on this connection.
    answered: AtomicBool,
}

impl Driver {
    fn now(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Stops new streams (for good). With `only_if_idle`, only when no stream
    /// is open; returns whether it shut down.
    fn shut_down(&self, only_if_idle: bool) -> bool {
        let mut sender = self.sender.lock().unwrap_or_else(|e| e.into_inner());
        // Under the sender lock: no stream can open between the check and the take.
        if only_if_idle && self.active.load(Ordering::Acquire) > 0 {
            return false;
        }
        self.closed.store(true, Ordering::Release);
        // Dropping the last sender wakes the connection task (h2 does), which
        // then sends GOAWAY once no stream is left.
        let last = sender.take();
        drop(sender);
        drop(last);
        true
    }

    /// Polls the connection with `cx`; marks it closed when it ends.
    fn drive(&self, slot: &mut Option<Driven>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(connection) = slot.as_mut() else {
            return Poll::Ready(());
        };
        if connection.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        *slot = None;
        self.closed.store(true, Ordering::Release);
        Poll::Ready(())
    }

    /// The connection task's poll. When requests queued frames without
    /// writing them (`send_queued`), the task first steps aside until its
    /// worker has run every other ready task (tokio's `yield_now` defers the
    /// wake-up until the worker's run queue is empty): the other requests of
    /// a batch woken by the same read then queue theirs too, and one poll
    /// writes them all. Wake-ups that come while it waits (h2 waking it for
    /// the next request, socket readiness, which tokio keeps until read) are
    /// ignored: the deferred wake-up is bound to come and drives everything.
    fn poll_task(
        &self,
        cx: &mut Context<'_>,
        idle_timer: &mut Option<Pin<Box<Sleep>>>,
        deferred: &mut Option<Arc<DeferredWake>>,
    ) -> Poll<()> {
        *self.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        if let Some(wake) = deferred {
            if !wake.fired.load(Ordering::Acquire) {
                return Poll::Pending;
            }
            *deferred = None;
        } else if self.send_queued.swap(false, Ordering::AcqRel) {
            let wake = Arc::new(DeferredWake {
                fired: AtomicBool::new(false),
                task: cx.waker().clone(),
            });
            let waker = Waker::from(Arc::clone(&wake));
            // Polled once, `yield_now` hands `waker` to the worker's deferred
            // list and is done with; the future itself is not needed again.
            let yielded = std::pin::pin!(tokio::task::yield_now());
            let _ = yielded.poll(&mut Context::from_waker(&waker));
            *deferred = Some(wake);
            return Poll::Pending;
        }
        self.expire_when_idle(cx, idle_timer);
        let mut slot = self.connection.lock().unwrap_or_else(|e| e.into_inner());
        self.drive(&mut slot, cx)
    }

    /// Keeps one timer per connection (not one per request): when it fires,
    /// the connection shuts down if it has been idle for the expiry, else the
    /// timer moves to when it will have been.
    fn expire_when_idle(&self, cx: &mut Context<'_>, idle_timer: &mut Option<Pin<Box<Sleep>>>) {
        let Some(expiry) = self.idle_expiry else {
            return;
        };
        if self.closed.load(Ordering::Acquire) {
            *idle_timer = None;
            return;
        }
        loop {
            let timer = idle_timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(expiry)));
            if timer.as_mut().poll(cx).is_pending() {
                return;
            }
            let now = Instant::now();
            let next = if self.active.load(Ordering::Acquire) > 0 {
                now + expiry
            } else {
                let idle_since = Duration::from_nanos(self.idle_since.load(Ordering::Acquire));
                let due = self.born + idle_since + expiry;
                if due <= now && self.shut_down(true) {
                    *idle_timer = None;
                    return;
                }
                due.max(now + Duration::from_millis(1))
            };
            timer.as_mut().reset(next.into());
        }
    }

    /// Polls the connection once from the calling thread, if nobody else is:
    /// the frames a caller just queued leave now instead of after a thread
    /// switch to the runtime. Must run inside the runtime's context.
    fn flush_now(&self) {
        self.send_queued.store(false, Ordering::Release);
        let Some(waker) = self.task.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return;
        };
        // Busy: whoever holds it is polling and sends our frames too.
        let Ok(mut slot) = self.connection.try_lock() else {
            return;
        };
        if self
            .drive(&mut slot, &mut Context::from_waker(&waker))
            .is_ready()
        {
            // Let the task see the end and finish.
            waker.wake();
        }
    }
}

/// The connection task's deferred wake-up (see `Driver::poll_task`): records
/// that it came, so the wake-ups before it can be told apart and ignored.
struct DeferredWake {
    fired: AtomicBool,
    task: Waker,
}

impl Wake for DeferredWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.fired.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}
