//! The one response body type every route returns.
//!
//! A small enum instead of a boxed trait object: no allocation per response, and
//! the size hint tells hyper which framing to use — an exact size becomes
//! `Content-Length`, an unknown one becomes `Transfer-Encoding: chunked`.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::limits::CHUNK_BYTES;

/// A response body: one buffer sent with `Content-Length`, or a buffer sent in
/// chunks of at most [`CHUNK_BYTES`] with chunked transfer coding.
#[derive(Debug)]
pub(crate) enum ResponseBody {
    /// Whole body known up front; `None` once it has been yielded.
    Full(Option<Bytes>),
    /// Remaining bytes, sliced (not copied) into chunks as hyper asks for them.
    Chunked(Bytes),
    /// Pieces sent one at a time with a pause between them, the first at once:
    /// a body that trickles, like server-sent events. Unknown size: chunked.
    Drip(Box<Drip>),
}

#[derive(Debug)]
pub(crate) struct Drip {
    pieces: VecDeque<Bytes>,
    interval: Duration,
    /// The pause before the next piece, armed when a piece has gone out.
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl ResponseBody {
    /// A `Content-Length` body (empty bodies included).
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        ResponseBody::Full(Some(bytes.into()))
    }

    /// No body at all (and, for 204/304, no `Content-Length` either: hyper omits it).
    pub(crate) fn empty() -> Self {
        ResponseBody::Full(None)
    }

    /// A body sent with `Transfer-Encoding: chunked`.
    pub(crate) fn chunked(bytes: Bytes) -> Self {
        ResponseBody::Chunked(bytes)
    }

    /// `pieces`, one frame each, `interval` apart.
    pub(crate) fn drip(pieces: impl IntoIterator<Item = Bytes>, interval: Duration) -> Self {
        ResponseBody::Drip(Box::new(Drip {
            pieces: pieces.into_iter().collect(),
            interval,
            pause: None,
        }))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let frame = match self.get_mut() {
            ResponseBody::Full(slot) => slot.take().filter(|b| !b.is_empty()),
            ResponseBody::Chunked(rest) if rest.is_empty() => None,
            ResponseBody::Chunked(rest) => {
                let n = rest.len().min(CHUNK_BYTES);
                Some(rest.split_to(n))
            }
            ResponseBody::Drip(drip) => {
                if let Some(pause) = drip.pause.as_mut() {
                    if pause.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    drip.pause = None;
                }
                let piece = drip.pieces.pop_front();
                if piece.is_some() && !drip.pieces.is_empty() {
                    drip.pause = Some(Box::pin(tokio::time::sleep(drip.interval)));
                }
                piece
            }
        };
        Poll::Ready(frame.map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Full(slot) => slot.as_ref().is_none_or(Bytes::is_empty),
            // Never claim the end up front: hyper would then send Content-Length: 0
            // instead of chunked framing for `/chunked/0`.
            ResponseBody::Chunked(_) => false,
            ResponseBody::Drip(drip) => drip.pieces.is_empty() && drip.pause.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(slot) => {
                SizeHint::with_exact(slot.as_ref().map_or(0, |b| b.len() as u64))
            }
            // Unknown size is what makes hyper choose chunked framing.
            ResponseBody::Chunked(_) | ResponseBody::Drip(_) => SizeHint::default(),
        }
    }
}
