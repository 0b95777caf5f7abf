//! The GOAWAY frames a server sent, seen on the bytes' way in.
//!
//! A GOAWAY's last stream id splits the streams in flight in two (RFC 9113
//! §6.8): those above it were not processed and may go again on a new
//! connection (h2 fails them with a GOAWAY error); those at or below it the
//! server promised to finish. When the server closes the connection without
//! answering one of those, h2 reports only the closed socket ("broken pipe")
//! and keeps the GOAWAY to itself. [`Watched`] reads the frame headers of
//! everything the connection receives (nothing else: payloads are skipped,
//! not copied) so the failure can say what happened: a broken promise.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Size of a frame header (RFC 9113 §4.1).
const FRAME_HEADER_BYTES: usize = 9;
/// The GOAWAY frame type (RFC 9113 §6.8).
const GOAWAY: u8 = 0x7;
/// What a GOAWAY payload starts with: last stream id and error code.
const GOAWAY_FIXED_BYTES: usize = 8;

/// The latest GOAWAY the server sent on one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GoAway {
    pub last_stream_id: u32,
    pub reason: h2::Reason,
}

/// Shared between the connection's transport (which records) and its
/// requests (which ask when their stream failed).
#[derive(Default)]
pub(crate) struct GoAwaySeen {
    latest: Mutex<Option<GoAway>>,
    /// Whether `latest` is set: asked by every request that looks for a
    /// connection, so an atomic rather than the lock.
    any: AtomicBool,
}

impl GoAwaySeen {
    pub fn get(&self) -> Option<GoAway> {
        if !self.any() {
            return None;
        }
        *self.latest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the server sent a GOAWAY: the connection takes no new stream.
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    fn record(&self, goaway: GoAway) {
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(goaway);
        self.any.store(true, Ordering::Release);
    }
}

/// Where the scan is in the incoming frames.
#[derive(Default)]
struct Scan {
    /// The header being read (it may arrive split across reads).
    header: [u8; FRAME_HEADER_BYTES],
    header_len: usize,
    /// Payload bytes of the current frame still to pass.
    payload_left: usize,
    /// A GOAWAY's fixed part, while its payload is read.
    goaway: Option<([u8; GOAWAY_FIXED_BYTES], usize)>,
}

impl Scan {
    /// Passes over `bytes`, the next bytes the connection received.
    fn feed(&mut self, mut bytes: &[u8], seen: &GoAwaySeen) {
        while !bytes.is_empty() {
            if self.payload_left == 0 {
                let n = (FRAME_HEADER_BYTES - self.header_len).min(bytes.len());
                self.header[self.header_len..self.header_len + n].copy_from_slice(&bytes[..n]);
                self.header_len += n;
                bytes = &bytes[n..];
                if self.header_len < FRAME_HEADER_BYTES {
                    return;
                }
                self.header_len = 0;
                let h = self.header;
                self.payload_left = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
                // A GOAWAY too short to carry its fixed part is h2's to reject.
                if h[3] == GOAWAY && self.payload_left >= GOAWAY_FIXED_BYTES {
                    self.goaway = Some(([0; GOAWAY_FIXED_BYTES], 0));
                }
                continue;
            }
            let n = self.payload_left.min(bytes.len());
            if let Some((fixed, got)) = &mut self.goaway {
                let take = (GOAWAY_FIXED_BYTES - *got).min(n);
                fixed[*got..*got + take].copy_from_slice(&bytes[..take]);
                *got += take;
                if *got == GOAWAY_FIXED_BYTES {
                    let [a, b, c, d, e, f, g, h] = *fixed;
                    seen.record(GoAway {
                        last_stream_id: u32::from_be_bytes([a, b, c, d]) & 0x7fff_ffff,
                        reason: h2::Reason::from(u32::from_be_bytes([e, f, g, h])),
                    });
                    self.goaway = None;
                }
            }
            self.payload_left -= n;
            bytes = &bytes[n..];
        }
    }
}

/// A connection's transport that records the GOAWAY frames read through it
/// in a [`GoAwaySeen`]; writes pass straight through.
pub(crate) struct Watched<T> {
    io: T,
    scan: Scan,
    seen: Arc<GoAwaySeen>,
}

impl<T> Watched<T> {
    pub fn new(io: T, seen: Arc<GoAwaySeen>) -> Self {
        Watched {
            io,
            scan: Scan::default(),
            seen,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.scan.feed(&buf.filled()[before..], &this.seen);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = (payload.len() as u32).to_be_bytes();
        let mut out = vec![len[1], len[2], len[3], kind, 0];
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    fn goaway(last: u32, code: u32) -> Vec<u8> {
        let mut payload = last.to_be_bytes().to_vec();
        payload.extend_from_slice(&code.to_be_bytes());
        payload.extend_from_slice(b"debug data");
        frame(GOAWAY, 0, &payload)
    }

    /// The frames of a connection: SETTINGS, a response on stream 1 with a
    /// DATA payload that looks like a GOAWAY header, then a GOAWAY.
    fn connection() -> Vec<u8> {
        let mut bytes = frame(0x4, 0, &[]);
        bytes.extend(frame(0x1, 1, &[0x88]));
        bytes.extend(frame(0x0, 1, &goaway(0, 1)));
        bytes.extend(goaway(3, 0));
        bytes
    }

    #[test]
    fn finds_the_goaway_however_the_reads_split_the_bytes() {
        let bytes = connection();
        for piece in 1..=bytes.len() {
            let seen = GoAwaySeen::default();
            let mut scan = Scan::default();
            for chunk in bytes.chunks(piece) {
                scan.feed(chunk, &seen);
            }
            assert_eq!(
                seen.get(),
                Some(GoAway {
                    last_stream_id: 3,
                    reason: h2::Reason::NO_ERROR
                }),
                "reads of {piece} bytes"
            );
        }
    }

    #[test]
    fn a_later_goaway_replaces_an_earlier_one() {
        let seen = GoAwaySeen::default();
        let mut scan = Scan::default();
        scan.feed(&goaway(7, 0), &seen);
        scan.feed(&goaway(5, 2), &seen);
        assert_eq!(
            seen.get(),
            Some(GoAway {
                last_stream_id: 5,
                reason: h2::Reason::INTERNAL_ERROR
            })
        );
    }
}
