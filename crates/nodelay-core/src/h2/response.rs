//! A response received over HTTP/2: its head, and its body read frame by
//! frame with flow-control capacity given back as data is taken.

use bytes::Bytes;
use http::HeaderMap;

use super::conn::StreamGuard;
use super::error::body_error;
use crate::deadline::{within, Deadlines, Phase};
use crate::error::Error;

/// The response head and the body still arriving on its stream.
pub struct H2Response {
    /// The response status code.
    pub status: u16,
    /// The response header fields, as h2 decoded them.
    pub headers: HeaderMap,
    body: h2::RecvStream,
    deadlines: Deadlines,
    /// See [`H2Response::content_length`]; looked up once (callers ask
    /// several times per response, and a header lookup hashes the name).
    content_length: Option<u64>,
    ended: bool,
    /// Keeps the connection from expiring while the body is read.
    stream: StreamGuard,
}

impl H2Response {
    pub(crate) fn new(
        response: http::Response<h2::RecvStream>,
        deadlines: Deadlines,
        is_head: bool,
        stream: StreamGuard,
    ) -> Self {
        let (parts, body) = response.into_parts();
        let ended = body.is_end_stream();
        // HEAD, or a head that ended the stream: no body whatever the headers say.
        let content_length = if is_head || ended {
            Some(0)
        } else {
            parts
                .headers
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
        };
        H2Response {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
            deadlines,
            content_length,
            ended,
            stream,
        }
    }

    /// True once the server ended the stream (no more data will come).
    pub fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }

    /// The exact body size when known: 0 with no body or for HEAD, else
    /// `Content-Length` (h2 checks the data against it).
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// The next piece of the body (never empty) if it has arrived already
    /// (`Some(None)`: the body ended), `None` when it would have to wait.
    /// Never waits.
    pub fn chunk_ready(&mut self) -> Option<Result<Option<Bytes>, Error>> {
        if self.ended {
            return Some(Ok(None));
        }
        // A no-op waker: nothing waits on this poll; the next real wait
        // registers its own waker before it parks.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            let next = match self.body.poll_data(&mut cx) {
                std::task::Poll::Pending => return None,
                std::task::Poll::Ready(next) => next,
            };
            if let Some(out) = self.took(next) {
                return Some(out);
            }
        }
    }

    /// Records what the stream yielded; `None` when it yielded nothing to
    /// hand out. That is an empty DATA frame: legal anywhere in a body (RFC
    /// 9113 §6.1), and how many servers end every body (an empty DATA frame
    /// carrying END_STREAM; h2 hands that one out as an empty piece). No
    /// reader ever receives an empty piece: each asks for the next one
    /// instead, which is the end of the stream in that case.
    fn took(
        &mut self,
        next: Option<Result<Bytes, h2::Error>>,
    ) -> Option<Result<Option<Bytes>, Error>> {
        Some(match next {
            None => {
                self.ended = true;
                Ok(None)
            }
            Some(Ok(data)) if data.is_empty() => return None,
            Some(Ok(data)) => {
                // Only fails when the stream is already gone, which the next
                // read reports.
                let _ = self.body.flow_control().release_capacity(data.len());
                Ok(Some(data))
            }
            Some(Err(e)) => {
                self.ended = true;
                let stream_id = u32::from(self.body.stream_id());
                Err(body_error(e, stream_id, self.stream.goaway()))
            }
        })
    }

    /// The next piece of the body, never empty, `None` at its end; each wait
    /// bounded by the read timeout and the total deadline. The piece's
    /// flow-control capacity is released at once: it is ours now, so the
    /// server may send more.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        loop {
            if let Some(out) = self.next_frame().await {
                return out;
            }
        }
    }

    /// What the next DATA frame (or the end, or a failure) gives: as
    /// [`H2Response::took`].
    async fn next_frame(&mut self) -> Option<Result<Option<Bytes>, Error>> {
        if self.ended {
            return Some(Ok(None));
        }
        let deadlines = self.deadlines;
        let body = &mut self.body;
        let next = within(
            &deadlines,
            deadlines.timeouts.read,
            || deadlines.timed_out(Phase::BODY),
            async { Ok(body.data().await) },
        )
        .await;
        match next {
            Ok(next) => self.took(next),
            Err(e) => Some(Err(e)),
        }
    }
}
