//! One HTTP/2 connection per origin, shared by every request and thread of a
//! client: found (or made, once, however many requests ask at the same time)
//! under a per-origin async lock; a request the server did not process goes
//! once more on a new connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::conn::H2Conn;
use super::error::{is_unprocessed, stream_error};
use super::limits::UNPROCESSED_RETRIES;
use super::request::H2Request;
use super::response::H2Response;
use crate::aconnect::{self, AsyncTransport};
use crate::deadline::{within, Deadlines};
use crate::error::{Error, ErrorKind};
use crate::fork;
use crate::target::Origin;
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
pub(crate) enum Sent {
    H2(H2Response),
    Http1(Option<AsyncTransport>),
}

/// Per-client map origin → HTTP/2 connection.
pub(crate) struct H2Pool {
    /// The fork generation the connections belong to, and the slots.
    slots: Mutex<(u64, HashMap<Origin, SlotRef>)>,
    next_id: AtomicU64,
}

/// A failed attempt, and whether the server surely did not process it.
struct Failure {
    error: Error,
    unprocessed: bool,
}

impl H2Pool {
    pub fn new() -> Self {
        fork::install();
        H2Pool {
            slots: Mutex::new((fork::generation(), HashMap::new())),
            next_id: AtomicU64::new(1),
        }
    }

    fn slot(&self, origin: &Origin) -> SlotRef {
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
                .entry(origin.clone())
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

    /// The connection for `origin`: the shared one, or a new one when there is
    /// none or it is `avoid` (the one a request just saw fail). Connecting
    /// happens under the origin's lock, so concurrent first requests make one
    /// connection, not one each.
    async fn route(
        &self,
        origin: &Origin,
        tls: &TlsSetup,
        deadlines: &Deadlines,
        avoid: Option<u64>,
    ) -> Result<Result<H2Conn, Option<AsyncTransport>>, Error> {
        let slot = self.slot(origin);
        let mut slot = slot.lock().await;
        match &*slot {
            Slot::Ready(conn) if conn.is_open() && Some(conn.id) != avoid => {
                return Ok(Ok(conn.clone()))
            }
            Slot::Http1Only => return Ok(Err(None)),
            _ => {}
        }
        let (io, chosen) = aconnect::connect(origin, tls, ALPN_H2_THEN_HTTP11, deadlines).await?;
        if matches!(io, AsyncTransport::Tls(_)) && chosen.as_deref() != Some(ALPN_H2) {
            *slot = Slot::Http1Only;
            return Ok(Err(Some(io)));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = within(
            deadlines,
            deadlines.timeouts.connect,
            || {
                Error::new(
                    ErrorKind::ConnectTimeout,
                    "timed out in the HTTP/2 handshake",
                )
            },
            H2Conn::handshake(io, id),
        )
        .await?;
        *slot = Slot::Ready(conn.clone());
        Ok(Ok(conn))
    }

    /// Sends `request` to `origin` over HTTP/2 and waits for the response head.
    /// Over TLS, when the server's ALPN choice is HTTP/1.1, returns
    /// `Sent::Http1` instead (the origin is remembered as HTTP/1.1-only).
    pub async fn send(
        &self,
        origin: &Origin,
        tls: &TlsSetup,
        request: &H2Request,
        deadlines: &Deadlines,
    ) -> Result<Sent, Error> {
        let mut retries_left = UNPROCESSED_RETRIES;
        let mut avoid = None;
        loop {
            let conn = match self.route(origin, tls, deadlines, avoid).await? {
                Ok(conn) => conn,
                Err(transport) => return Ok(Sent::Http1(transport)),
            };
            match send_on(&conn, request, deadlines).await {
                Ok(response) => return Ok(Sent::H2(response)),
                Err(failure) if failure.unprocessed && retries_left > 0 => {
                    retries_left -= 1;
                    avoid = Some(conn.id);
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
    request: &H2Request,
    deadlines: &Deadlines,
) -> Result<H2Response, Failure> {
    // Nothing was sent when these fail: the request is unprocessed.
    let unsent = |e: h2::Error| Failure {
        error: stream_error(e, false),
        unprocessed: true,
    };
    let mut sender = within(
        deadlines,
        deadlines.timeouts.pool,
        || {
            Error::new(
                ErrorKind::PoolTimeout,
                "timed out waiting for a free HTTP/2 stream",
            )
        },
        async { conn.send.clone().ready().await.map_err(|e| unsent(e).error) },
    )
    .await
    .map_err(|error| Failure {
        unprocessed: error.kind() != ErrorKind::PoolTimeout,
        error,
    })?;
    let (response, mut body_stream) = sender
        .send_request(request.head(), request.body.is_none())
        .map_err(unsent)?;
    if let Some(body) = &request.body {
        // h2 queues the body and sends it as the server's window allows.
        body_stream
            .send_data(body.clone(), true)
            .map_err(|e| Failure {
                unprocessed: is_unprocessed(&e, request.idempotent),
                error: stream_error(e, false),
            })?;
    }
    conn.flush_now();
    let idempotent = request.idempotent;
    let response = within(
        deadlines,
        deadlines.timeouts.read,
        || {
            Error::new(
                ErrorKind::ReadTimeout,
                "timed out waiting for the HTTP/2 response",
            )
        },
        async {
            Ok(response.await.map_err(|e| Failure {
                unprocessed: is_unprocessed(&e, idempotent),
                error: stream_error(e, false),
            }))
        },
    )
    .await
    .map_err(|error| Failure {
        unprocessed: false,
        error,
    })??;
    Ok(H2Response::new(response, *deadlines, request.is_head))
}
