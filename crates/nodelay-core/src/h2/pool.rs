//! One HTTP/2 connection per origin (and route: direct, or through a given
//! SOCKS proxy), shared by every request and thread of a client: found (or made, once, however many requests ask at the same time)
//! under a per-origin async lock; a request the server did not answer goes
//! again when that is safe (`error::unanswered`, docs/http2.md).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::conn::{H2Conn, Lifetime, OpenStream};
use super::error::{not_processed, stream_error, unanswered, Again};
use super::limits::{GOAWAY_RETRIES, UNPROCESSED_RETRIES};
use super::request::H2Request;
use super::response::H2Response;
use super::upload::{send_body, Body, StreamedBody, Upload, UploadError};
use crate::aconnect::{self, AsyncTransport};
use crate::deadline::{poll_once, within, Deadlines, Phase};
use crate::error::{Error, ErrorKind};
use crate::fork;
use crate::pool::Pool;
/// The client's connection slot an HTTP/2 connection holds while it lives.
use crate::pool::SlotLease as Lease;
use crate::proxy::ConnKey;
use crate::tls::{TlsSetup, ALPN_H2, ALPN_HTTP11};

/// What ALPN offers for an `https` origin: HTTP/2 first, HTTP/1.1 as fallback.
const ALPN_H2_THEN_HTTP11: &[&[u8]] = &[ALPN_H2, ALPN_HTTP11];

/// What we know of one origin.
enum Slot {
    Unknown,
    /// A live connection (it may have been closed since; checked on use).
    Ready(H2Conn),
    /// ALPN chose HTTP/1.1: requests go to the HTTP/1.1 pool.
    Http1Only,
}

type SlotRef = Arc<tokio::sync::Mutex<Slot>>;

/// The outcome of a send: an HTTP/2 response, or "use HTTP/1.1" (with the
/// connection ALPN just made when there is one, so it is not wasted).
// Moved once per request; boxing the common variant would cost an allocation
// per request to shrink the rare one.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Sent {
    H2(H2Response),
    Http1(Option<AsyncTransport>),
}

/// Per-client map pool key (origin and route) → HTTP/2 connection.
pub(crate) struct H2Pool {
    /// The fork generation the connections belong to, and the slots.
    slots: Mutex<(u64, HashMap<ConnKey, SlotRef>)>,
    next_id: AtomicU64,
    /// The client's pool, whose `max_connections` our connections count
    /// towards (`None`: unbounded).
    bound: Option<Arc<Pool>>,
    /// Idle connections close after this (`None`: never).
    idle_expiry: Option<Duration>,
}

/// A failed attempt, and whether and where it may go again
/// (`h2::error::unanswered`).
struct Failure {
    error: Error,
    again: Option<Again>,
}

/// The retries one request has left, by kind.
struct RetriesLeft {
    refused: usize,
    /// Connections that answered some requests (recycling servers).
    progressing: usize,
    /// Connections that went away having answered none.
    stalled: usize,
    maybe_processed: usize,
}

impl RetriesLeft {
    fn new() -> Self {
        RetriesLeft {
            refused: UNPROCESSED_RETRIES,
            progressing: GOAWAY_RETRIES,
            stalled: UNPROCESSED_RETRIES,
            maybe_processed: UNPROCESSED_RETRIES,
        }
    }

    /// Takes one retry of kind `again`; false when none is left.
    fn take(&mut self, again: Again) -> bool {
        let left = match again {
            Again::Refused => &mut self.refused,
            Again::NotProcessed { progress: true } | Again::MaybeProcessed { progress: true } => {
                &mut self.progressing
            }
            Again::NotProcessed { progress: false } => &mut self.stalled,
            Again::MaybeProcessed { progress: false } => &mut self.maybe_processed,
        };
        let some_left = *left > 0;
        *left = left.saturating_sub(1);
        some_left
    }
}

impl H2Pool {
    /// Connections without a bound on their number, kept until the pool is
    /// cleared or dropped.
    pub fn new() -> Self {
        fork::install();
        H2Pool {
            slots: Mutex::new((fork::generation(), HashMap::new())),
            next_id: AtomicU64::new(1),
            bound: None,
            idle_expiry: None,
        }
    }

    /// Connections that each take a slot of the client's `pool` (its
    /// `max_connections` bounds HTTP/1.1 and HTTP/2 connections together)
    /// and close after `idle_expiry` without an open stream.
    pub fn bounded(pool: Arc<Pool>, idle_expiry: Option<Duration>) -> Self {
        H2Pool {
            bound: Some(pool),
            idle_expiry,
            ..H2Pool::new()
        }
    }

    /// A slot for a new connection to `origin`, waiting for one until the
    /// pool deadline (any release of the pool wakes the wait,
    /// `pool/asynchronous.rs`).
    async fn lease_slot(
        &self,
        key: &ConnKey,
        deadlines: &Deadlines,
    ) -> Result<Option<Lease>, Error> {
        match &self.bound {
            None => Ok(None),
            Some(pool) => pool.lease(key.clone(), deadlines).await.map(Some),
        }
    }

    fn slot(&self, key: &ConnKey) -> SlotRef {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        // A forked child shares no connection with its parent (their runtime
        // is gone too). The parent's are leaked, not dropped: dropping one
        // takes h2's internal lock, which a parent thread may have held at
        // the fork.
        let generation = fork::generation();
        if slots.0 != generation {
            std::mem::forget(std::mem::replace(&mut *slots, (generation, HashMap::new())));
        }
        Arc::clone(
            slots
                .1
                .entry(key.clone())
                .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Slot::Unknown))),
        )
    }

    /// Closes every connection (each ends once its open streams have).
    pub fn clear(&self) {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .clear();
    }

    /// The connection for `key`: the shared one, or a new one when there is
    /// none or it is `avoid` (the one a request just saw fail). Connecting
    /// happens under the key's lock, so concurrent first requests make one
    /// connection, not one each.
    async fn route(
        &self,
        key: &ConnKey,
        tls: &TlsSetup,
        deadlines: &Deadlines,
        avoid: Option<u64>,
    ) -> Result<Result<(H2Conn, Option<OpenStream>), Option<AsyncTransport>>, Error> {
        let slot = self.slot(key);
        let origin = &key.origin;
        let mut slot = slot.lock().await;
        match &*slot {
            Slot::Ready(conn) if conn.is_open() && Some(conn.id) != avoid => {
                return Ok(Ok((conn.clone(), None)))
            }
            Slot::Http1Only => return Ok(Err(None)),
            _ => {}
        }
        // Dropped (the slot freed) if connecting fails.
        let lease = self.lease_slot(key, deadlines).await?;
        let (io, chosen) =
            aconnect::connect_origin(key, tls, ALPN_H2_THEN_HTTP11, deadlines).await?;
        if matches!(io, AsyncTransport::Tls(_)) && chosen.as_deref() != Some(ALPN_H2) {
            *slot = Slot::Http1Only;
            // The HTTP/1.1 pool counts the connection itself when it adopts it.
            drop(lease);
            return Ok(Err(Some(io)));
        }
        let lifetime = Lifetime {
            idle_expiry: self.idle_expiry,
            slot: lease,
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (conn, first) = within(
            deadlines,
            deadlines.timeouts.connect,
            || {
                let doing = format!(
                    "opening an HTTP/2 connection to {}:{}",
                    origin.host, origin.port
                );
                deadlines.timed_out(Phase::connect(&doing))
            },
            H2Conn::handshake(io, id, lifetime),
        )
        .await?;
        *slot = Slot::Ready(conn.clone());
        Ok(Ok((conn, Some(first))))
    }

    /// Sends `request` over HTTP/2 on the connection for `key` (the request's
    /// origin and route) and waits for the response head; a request made by
    /// `H2Request::streamed` pulls its body from `body` as it is sent.
    /// Over TLS, when the server's ALPN choice is HTTP/1.1, returns
    /// `Sent::Http1` instead (the origin is remembered as HTTP/1.1-only).
    /// A request the server did not process goes again (`error::unanswered`),
    /// a streamed one only when its body can start over (see
    /// [`StreamedBody::rewind`]).
    pub async fn send_streamed(
        &self,
        key: &ConnKey,
        tls: &TlsSetup,
        request: &H2Request,
        mut body: Option<&mut StreamedBody<'_>>,
        deadlines: &Deadlines,
    ) -> Result<Sent, Error> {
        let mut retries = RetriesLeft::new();
        let mut avoid = None;
        loop {
            let (conn, first) = match self.route(key, tls, deadlines, avoid).await? {
                Ok(routed) => routed,
                Err(transport) => return Ok(Sent::Http1(transport)),
            };
            // A new connection comes with its first stream already counted
            // (an expiry of 0 could close it before we used it otherwise); on
            // a shared one, `None` means it closed (idle expiry, shutdown)
            // since `route` looked: route again, to a new one.
            let Some(stream) = first.or_else(|| conn.open_stream()) else {
                continue;
            };
            match send_on(&conn, stream, request, body.as_deref_mut(), deadlines).await {
                Ok(response) => return Ok(Sent::H2(response)),
                Err(Failure {
                    again: Some(again), ..
                }) if retries.take(again)
                    && match body.as_deref_mut() {
                        Some(body) => body.rewind().await?,
                        None => true,
                    } =>
                {
                    // A refusal leaves the connection open for the next try.
                    avoid = (again != Again::Refused).then_some(conn.id);
                }
                Err(failure) => return Err(failure.error),
            }
        }
    }
}

/// One attempt on one connection: wait for a stream slot (the server's
/// SETTINGS_MAX_CONCURRENT_STREAMS; h2 queues us until one frees up), send
/// the head and body, wait for the response head.
async fn send_on(
    conn: &H2Conn,
    stream: OpenStream,
    request: &H2Request,
    streamed: Option<&mut StreamedBody<'_>>,
    deadlines: &Deadlines,
) -> Result<H2Response, Failure> {
    let (sender, guard) = stream;
    // Nothing was sent when these fail: the request is unprocessed.
    let unsent = |e: h2::Error| Failure {
        error: stream_error(e, false),
        again: Some(not_processed(conn.goaway())),
    };
    let mut sender = within(
        deadlines,
        deadlines.timeouts.pool,
        || deadlines.timed_out(Phase::H2_STREAM),
        async { sender.ready().await.map_err(|e| unsent(e).error) },
    )
    .await
    .map_err(|error| Failure {
        again: (error.kind() != ErrorKind::PoolTimeout).then(|| not_processed(conn.goaway())),
        error,
    })?;
    let body = match (&request.body, streamed) {
        (Some(body), _) => Some(Body::Whole(body.clone())),
        (None, Some(streamed)) => Some(Body::Streamed(streamed)),
        (None, None) => None,
    };
    let (mut response, mut body_stream) = sender
        .send_request(request.head(), body.is_none())
        .map_err(unsent)?;
    let stream_id = u32::from(response.stream_id());
    let failed = |e: h2::Error| {
        let (error, again) = unanswered(e, stream_id, conn, request.idempotent);
        Failure { error, again }
    };
    let mut answered = None;
    if let Some(body) = body {
        match send_body(&mut body_stream, body, &mut response, deadlines, || {
            conn.flush()
        })
        .await
        {
            Ok(Upload::Sent) => {}
            Ok(Upload::Answered(answer)) => answered = Some(answer),
            Err(UploadError::Stream(e)) => {
                // A stream the server already closed refuses data with a
                // user error ("inactive stream"). The response tells why: the
                // server's reason (GOAWAY, RST_STREAM), which says whether
                // the request may go again, or its answer, when it answered
                // before taking the body and then closed the connection (an
                // early answer, RFC 9113 §8.1).
                match poll_once(std::pin::Pin::new(&mut response)).await {
                    Some(Ok(answer)) => answered = Some(Ok(answer)),
                    Some(Err(reason)) => return Err(failed(reason)),
                    None => return Err(failed(e)),
                }
            }
            Err(UploadError::Timeout(error)) => return Err(Failure { again: None, error }),
            Err(UploadError::Source(error)) => {
                // The server must not take the bytes sent so far for the
                // whole body: the stream ends with RST_STREAM, not END_STREAM
                // (the connection and its other streams go on).
                body_stream.send_reset(h2::Reason::CANCEL);
                conn.flush();
                return Err(Failure { again: None, error });
            }
        }
    }
    conn.flush();
    let head_deadlines = deadlines.for_head();
    let response = match answered {
        Some(answer) => answer.map_err(failed)?,
        // The whole head within the read timeout from here, the request
        // being all sent (the rule of every driver, `Deadlines::for_head`).
        None => within(
            &head_deadlines,
            head_deadlines.read_limit(Duration::ZERO),
            || head_deadlines.timed_out(Phase::HEAD),
            async { Ok((&mut response).await.map_err(failed)) },
        )
        .await
        .map_err(|error| Failure { again: None, error })??,
    };
    conn.mark_answered();
    Ok(H2Response::new(
        response,
        *deadlines,
        request.is_head,
        guard,
    ))
}
