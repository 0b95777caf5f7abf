//! Sending a request body over HTTP/2 as the peer's flow-control windows
//! allow, with the write timeout bounding each wait for window: a server that
//! never opens its window fails the request with `WriteTimeout` on time
//! instead of holding it until some other deadline.
//!
//! A body is either in memory ([`Body::Whole`]) or streamed
//! ([`StreamedBody`]: pulled piece by piece from a [`BodySource`], each piece
//! sent as window is granted before the next is pulled, so a body of any size
//! holds one piece in memory). Either way a server that answers before the
//! body is all sent stops the upload (RFC 9113 §8.1): its answer is the
//! response, and the rest of the body is not pulled.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;
use h2::client::ResponseFuture;
use h2::{RecvStream, SendStream};

use super::limits::QUEUED_BODY_MAX_BYTES;
use crate::aio::upload::BodyPump;
use crate::deadline::{poll_once, within, Deadlines, Phase};
use crate::error::{Error, ErrorKind};
use crate::upload::{length_mismatch, BodySource};

/// How sending the body ended.
pub(super) enum Upload {
    /// All of it was handed to h2 (the last piece with END_STREAM).
    Sent,
    /// The response head (or the stream's failure) arrived before the body
    /// was all sent: a server may answer early (RFC 9113 §8.1); the rest of
    /// the body is not sent.
    Answered(Result<http::Response<RecvStream>, h2::Error>),
}

/// Why sending stopped short.
pub(super) enum UploadError {
    /// h2 refused the data (stream reset, connection gone).
    Stream(h2::Error),
    /// No window opened within the write timeout (or the total deadline).
    Timeout(Error),
    /// The body's source failed, or gave more or fewer bytes than the
    /// `Content-Length` announced: the stream must be reset, so the server
    /// never takes what was sent for the whole body.
    Source(Error),
}

/// What one wait for window yielded.
enum Step {
    Capacity(usize),
    Answered(Result<http::Response<RecvStream>, h2::Error>),
    Failed(h2::Error),
}

/// The body of one request, as [`send_body`] sends it.
pub(super) enum Body<'r, 'a> {
    /// In memory, sent whole (the request's own bytes).
    Whole(Bytes),
    /// Pulled piece by piece.
    Streamed(&'r mut StreamedBody<'a>),
}

/// Where the pieces of a streamed body come from.
enum Pieces<'a> {
    /// A source pulled on the calling thread, into `buf` (the sync client:
    /// its HTTP/2 send runs in `block_on` on the caller's own thread, where a
    /// source may block, a file read or a Python iterator taking the GIL,
    /// without holding up the runtime's workers).
    Here {
        source: &'a mut dyn BodySource,
        buf: &'a mut Vec<u8>,
    },
    /// A source served on the runtime's blocking pool (the async client).
    Pump(&'a mut BodyPump),
}

/// A request body streamed from a [`BodySource`] over HTTP/2: the same
/// source the HTTP/1.1 path writes with chunked coding or `Content-Length`.
/// HTTP/2 frames the body itself (DATA frames, END_STREAM); a known length is
/// announced with `Content-Length` and held to, as on HTTP/1.1.
pub(crate) struct StreamedBody<'a> {
    pieces: Pieces<'a>,
    /// The `Content-Length` announced, when the size is known.
    length: Option<u64>,
    /// Bytes pulled in this pass over the source.
    pulled: u64,
    /// Whether this pass pulled anything (then only a rewind lets the body go
    /// again).
    started: bool,
}

impl<'a> StreamedBody<'a> {
    /// A body pulled from `source` on the calling thread, each piece read
    /// into `buf` (only for a future run by `block_on`, see [`Pieces::Here`]).
    pub(crate) fn pulled_here(
        source: &'a mut dyn BodySource,
        buf: &'a mut Vec<u8>,
        length: Option<u64>,
    ) -> Self {
        Self::new(Pieces::Here { source, buf }, length)
    }

    /// A body pulled from `pump` (its source runs on the blocking pool).
    pub(crate) fn pumped(pump: &'a mut BodyPump, length: Option<u64>) -> Self {
        Self::new(Pieces::Pump(pump), length)
    }

    fn new(pieces: Pieces<'a>, length: Option<u64>) -> Self {
        StreamedBody {
            pieces,
            length,
            pulled: 0,
            started: false,
        }
    }

    /// The next non-empty piece, `None` at the end; a piece beyond the
    /// announced length, or an end short of it, is an error.
    async fn next(&mut self) -> Result<Option<Bytes>, Error> {
        self.started = true;
        loop {
            let piece = match &mut self.pieces {
                Pieces::Here { source, buf } => source.next_chunk(buf)?.map(Bytes::copy_from_slice),
                Pieces::Pump(pump) => pump.next_chunk().await?.map(Bytes::from),
            };
            let Some(piece) = piece else {
                return match self.length {
                    Some(expected) if expected != self.pulled => {
                        Err(length_mismatch(expected, Some(self.pulled)))
                    }
                    _ => Ok(None),
                };
            };
            if piece.is_empty() {
                continue;
            }
            self.pulled += piece.len() as u64;
            if let Some(expected) = self.length.filter(|&n| self.pulled > n) {
                return Err(length_mismatch(expected, None));
            }
            return Ok(Some(piece));
        }
    }

    /// The source's trailer fields, asked once after its last piece.
    async fn trailers(&mut self) -> Result<Vec<(String, String)>, Error> {
        match &mut self.pieces {
            Pieces::Here { source, .. } => source.trailers(),
            Pieces::Pump(pump) => pump.trailers().await,
        }
    }

    /// Makes the body ready to go again on another stream (a request the
    /// server did not process): true when nothing was pulled yet, or the
    /// source went back to its first byte; false when it cannot (an iterator
    /// already consumed), and the request then does not go again.
    pub(super) async fn rewind(&mut self) -> Result<bool, Error> {
        if !self.started {
            return Ok(true);
        }
        let rewound = match &mut self.pieces {
            Pieces::Here { source, .. } => source.rewind()?,
            Pieces::Pump(pump) => pump.rewind().await?,
        };
        if rewound {
            self.pulled = 0;
            self.started = false;
        }
        Ok(rewound)
    }
}

/// Sends `body` on `stream`, ending the stream with it.
///
/// A whole body up to [`QUEUED_BODY_MAX_BYTES`] is queued at once (h2 sends
/// it as the window allows; the response wait that follows bounds it, as a
/// small HTTP/1.1 body sits in the socket buffer); a larger one goes piece by
/// piece as window is granted, each wait bounded by the write timeout.
///
/// A streamed body is pulled one piece at a time, each sent as window is
/// granted before the next is pulled; before each pull an answer already
/// received ends the upload. The stream ends with an empty DATA frame
/// carrying END_STREAM once the source is done (its last piece is only
/// known to be the last when the next pull says so).
pub(super) async fn send_body(
    stream: &mut SendStream<Bytes>,
    body: Body<'_, '_>,
    response: &mut ResponseFuture,
    deadlines: &Deadlines,
    flush: impl Fn(),
) -> Result<Upload, UploadError> {
    let body = match body {
        Body::Whole(body) if body.len() <= QUEUED_BODY_MAX_BYTES => {
            stream.send_data(body, true).map_err(UploadError::Stream)?;
            return Ok(Upload::Sent);
        }
        Body::Whole(body) => {
            return Ok(send_piece(stream, body, true, response, deadlines, &flush)
                .await?
                .map_or(Upload::Sent, Upload::Answered));
        }
        Body::Streamed(body) => body,
    };
    loop {
        // The server answered while the previous piece went (a 413, a
        // redirect): stop pulling the body.
        if let Some(answer) = poll_once(Pin::new(&mut *response)).await {
            return Ok(Upload::Answered(answer));
        }
        let Some(piece) = body.next().await.map_err(UploadError::Source)? else {
            let trailers = body.trailers().await.map_err(UploadError::Source)?;
            if trailers.is_empty() {
                stream
                    .send_data(Bytes::new(), true)
                    .map_err(UploadError::Stream)?;
            } else {
                let fields = trailer_map(&trailers).map_err(UploadError::Source)?;
                stream.send_trailers(fields).map_err(UploadError::Stream)?;
            }
            return Ok(Upload::Sent);
        };
        if let Some(answer) = send_piece(stream, piece, false, response, deadlines, &flush).await? {
            return Ok(Upload::Answered(answer));
        }
    }
}

/// Trailer fields as HTTP/2 sends them (a HEADERS frame ending the stream;
/// names lower-cased, RFC 9113 §8.2.2). A name or value HTTP cannot carry is
/// refused.
fn trailer_map(fields: &[(String, String)]) -> Result<http::HeaderMap, Error> {
    let mut map = http::HeaderMap::with_capacity(fields.len());
    for (name, value) in fields {
        let refuse = || {
            Error::new(
                ErrorKind::LocalProtocol,
                format!("invalid trailer field {name:?}"),
            )
        };
        let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| refuse())?;
        let value = http::HeaderValue::from_str(value).map_err(|_| refuse())?;
        map.append(name, value);
    }
    Ok(map)
}

/// Sends `piece` as window is granted (`end`: with END_STREAM on its last
/// frame); `Some(answer)` when the response (or the stream's failure) came
/// first.
async fn send_piece(
    stream: &mut SendStream<Bytes>,
    mut piece: Bytes,
    end: bool,
    response: &mut ResponseFuture,
    deadlines: &Deadlines,
    flush: &impl Fn(),
) -> Result<Option<Result<http::Response<RecvStream>, h2::Error>>, UploadError> {
    loop {
        stream.reserve_capacity(piece.len());
        let mut granted = stream.capacity();
        if granted == 0 {
            // Capacity is assigned when the connection is polled (the stream
            // opens, WINDOW_UPDATEs arrive): poll it now rather than wait for
            // the connection task.
            flush();
            granted = stream.capacity();
        }
        if granted == 0 {
            match wait_for_window(stream, response, deadlines).await? {
                Step::Capacity(n) => granted = n,
                Step::Answered(answer) => return Ok(Some(answer)),
                Step::Failed(e) => return Err(UploadError::Stream(e)),
            }
        }
        let part = piece.split_to(granted.min(piece.len()));
        let last = piece.is_empty();
        stream
            .send_data(part, end && last)
            .map_err(UploadError::Stream)?;
        flush();
        if last {
            return Ok(None);
        }
    }
}

/// Waits for window on `stream`, or for the response, within the write timeout.
async fn wait_for_window(
    stream: &mut SendStream<Bytes>,
    response: &mut ResponseFuture,
    deadlines: &Deadlines,
) -> Result<Step, UploadError> {
    within(
        deadlines,
        deadlines.timeouts.write,
        || {
            deadlines.timed_out(Phase::write(
                "sending the request body (the server's HTTP/2 flow-control window stayed closed)",
            ))
        },
        std::future::poll_fn(|cx| {
            if let Poll::Ready(answer) = Pin::new(&mut *response).poll(cx) {
                return Poll::Ready(Ok(Step::Answered(answer)));
            }
            loop {
                return match stream.poll_capacity(cx) {
                    // A zero grant: poll again to wait for a real one.
                    Poll::Ready(Some(Ok(0))) => continue,
                    Poll::Ready(Some(Ok(n))) => Poll::Ready(Ok(Step::Capacity(n))),
                    Poll::Ready(Some(Err(e))) => Poll::Ready(Ok(Step::Failed(e))),
                    // The send side closed (the server reset the stream): its
                    // reason comes with the response future.
                    Poll::Ready(None) => match Pin::new(&mut *response).poll(cx) {
                        Poll::Ready(answer) => Poll::Ready(Ok(Step::Answered(answer))),
                        Poll::Pending => Poll::Pending,
                    },
                    Poll::Pending => Poll::Pending,
                };
            }
        }),
    )
    .await
    .map_err(UploadError::Timeout)
}
