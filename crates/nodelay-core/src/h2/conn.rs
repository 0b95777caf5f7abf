//! One HTTP/2 connection: the handshake with our settings, and the task that
//! drives the connection's frames on the process runtime.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use h2::client::{Connection, SendRequest};

use super::limits::{
    CONNECTION_WINDOW_BYTES, HEADER_TABLE_BYTES, INITIAL_MAX_SEND_STREAMS,
    MAX_CONCURRENT_RESET_STREAMS, MAX_FRAME_BYTES, MAX_HEADER_LIST_BYTES,
    MAX_LOCAL_ERROR_RESET_STREAMS, MAX_SEND_BUFFER_BYTES, STREAM_WINDOW_BYTES,
};
use crate::aconnect::AsyncTransport;
use crate::error::{Error, ErrorKind};

/// A live HTTP/2 connection: cloned by every request that uses it (the clone is
/// a handle; the frames are driven by one task, and by callers in a hurry, see
/// [`Driver::flush_now`]).
#[derive(Clone)]
pub(crate) struct H2Conn {
    pub send: SendRequest<Bytes>,
    driver: Arc<Driver>,
    /// Tells connections of one origin apart, so a request that saw one die
    /// does not discard its already-made replacement.
    pub id: u64,
}

impl H2Conn {
    /// Sends the preface and our SETTINGS, and spawns the connection task.
    pub async fn handshake(io: AsyncTransport, id: u64) -> Result<H2Conn, Error> {
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
        let (send, connection) = builder.handshake::<_, Bytes>(io).await.map_err(|e| {
            Error::new(ErrorKind::Connect, format!("HTTP/2 handshake failed: {e}")).with_source(e)
        })?;
        let driver = Arc::new(Driver {
            connection: Mutex::new(Some(Box::pin(connection))),
            task: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        let task = Arc::clone(&driver);
        // The outcome reaches every stream as its own error; the task only
        // records that the connection is gone.
        tokio::spawn(std::future::poll_fn(move |cx| task.poll_task(cx)));
        Ok(H2Conn { send, driver, id })
    }

    /// Whether new streams may still go on this connection.
    pub fn is_open(&self) -> bool {
        !self.driver.closed.load(Ordering::Acquire)
    }

    /// Writes what is queued (a request just sent) from the calling thread.
    pub fn flush_now(&self) {
        self.driver.flush_now();
    }
}

type Driven = Pin<Box<Connection<AsyncTransport, Bytes>>>;

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
    closed: AtomicBool,
}

impl Driver {
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

    fn poll_task(&self, cx: &mut Context<'_>) -> Poll<()> {
        *self.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        let mut slot = self.connection.lock().unwrap_or_else(|e| e.into_inner());
        self.drive(&mut slot, cx)
    }

    /// Polls the connection once from the calling thread, if nobody else is:
    /// the frames a caller just queued leave now instead of after a thread
    /// switch to the runtime. Must run inside the runtime's context.
    fn flush_now(&self) {
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
