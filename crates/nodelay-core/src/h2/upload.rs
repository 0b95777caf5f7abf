//! Sending a request body over HTTP/2 as the peer's flow-control windows
//! allow, with the write timeout bounding each wait for window: a server that
//! never opens its window fails the request with `WriteTimeout` on time
//! instead of holding it until some other deadline.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;
use h2::client::ResponseFuture;
use h2::{RecvStream, SendStream};

use super::limits::QUEUED_BODY_MAX_BYTES;
use crate::deadline::{within, Deadlines, Phase};
use crate::error::Error;

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
}

/// What one wait for window yielded.
enum Step {
    Capacity(usize),
    Answered(Result<http::Response<RecvStream>, h2::Error>),
    Failed(h2::Error),
}

/// Sends `body` on `stream`, ending the stream with it. A body up to
/// [`QUEUED_BODY_MAX_BYTES`] is queued whole (h2 sends it as the window
/// allows; the response wait that follows bounds it, as a small HTTP/1.1
/// body sits in the socket buffer); a larger one goes piece by piece as
/// window is granted, each wait bounded by the write timeout.
pub(super) async fn send_body(
    stream: &mut SendStream<Bytes>,
    mut body: Bytes,
    response: &mut ResponseFuture,
    deadlines: &Deadlines,
    flush: impl Fn(),
) -> Result<Upload, UploadError> {
    if body.len() <= QUEUED_BODY_MAX_BYTES {
        stream.send_data(body, true).map_err(UploadError::Stream)?;
        return Ok(Upload::Sent);
    }
    loop {
        stream.reserve_capacity(body.len());
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
                Step::Answered(answer) => return Ok(Upload::Answered(answer)),
                Step::Failed(e) => return Err(UploadError::Stream(e)),
            }
        }
        let piece = body.split_to(granted.min(body.len()));
        let last = body.is_empty();
        stream.send_data(piece, last).map_err(UploadError::Stream)?;
        flush();
        if last {
            return Ok(Upload::Sent);
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
