//! Adaptive receive windows (the idea of hyper's `adaptive_window`): while a
//! bulk download runs, one PING per round trip measures how many bytes arrive
//! per round trip (the bandwidth-delay product); when that fills most of the
//! stream window, the windows double, up to a bound. Measured reason: through
//! a relay adding 10 ms each way, h2c downloads ran at half of HTTP/1.1's rate
//! with the fixed 4 MiB window (docs/performance.md, session 3).

use std::task::{Context, Poll};

use h2::{Ping, PingPong};

use super::limits::{
    CONNECTION_WINDOW_BYTES, MAX_CONNECTION_WINDOW_BYTES, MAX_STREAM_WINDOW_BYTES,
    STREAM_WINDOW_BYTES,
};

/// The connection future, as the driver holds it.
pub(super) type Conn = h2::client::Connection<crate::aconnect::AsyncTransport, bytes::Bytes>;

/// Grows the windows of one connection from its PING round trips.
pub(super) struct WindowTuner {
    /// `None` once the windows are at their bound, or PING failed.
    ping: Option<PingPong>,
    /// The stream window now in force.
    stream_window: u32,
    /// Body bytes taken when the last sample ended.
    last_taken: u64,
    /// The PING in flight: body bytes taken when it was sent.
    in_flight: Option<u64>,
}

impl WindowTuner {
    pub fn new(connection: &mut Conn) -> WindowTuner {
        WindowTuner {
            ping: connection.ping_pong(),
            stream_window: STREAM_WINDOW_BYTES,
            last_taken: 0,
            in_flight: None,
        }
    }

    /// Called on each poll of the connection task with the body bytes taken
    /// so far on this connection. Sends a PING when a bulk transfer runs (at
    /// least a quarter of the stream window taken since the last sample:
    /// small responses never cause one), and on its answer grows the windows
    /// if the bytes of that round trip filled two thirds of the window.
    pub fn poll(&mut self, cx: &mut Context<'_>, connection: &mut Conn, taken: u64) {
        let Some(ping) = self.ping.as_mut() else {
            return;
        };
        let Some(at_send) = self.in_flight else {
            if taken.saturating_sub(self.last_taken) >= u64::from(self.stream_window / 4) {
                if ping.send_ping(Ping::opaque()).is_err() {
                    self.ping = None;
                    return;
                }
                self.in_flight = Some(taken);
                // Register for the answer now.
                self.poll(cx, connection, taken);
            }
            return;
        };
        match ping.poll_pong(cx) {
            Poll::Pending => {}
            Poll::Ready(Err(_)) => self.ping = None,
            Poll::Ready(Ok(_)) => {
                self.in_flight = None;
                self.last_taken = taken;
                let per_round_trip = taken.saturating_sub(at_send);
                if per_round_trip * 3 >= u64::from(self.stream_window) * 2 {
                    self.grow(connection);
                }
            }
        }
    }

    fn grow(&mut self, connection: &mut Conn) {
        let stream = self
            .stream_window
            .saturating_mul(2)
            .min(MAX_STREAM_WINDOW_BYTES);
        if connection.set_initial_window_size(stream).is_err() {
            self.ping = None;
            return;
        }
        // The connection keeps room for as many streams at full speed as at
        // the start (its window stays the same multiple of the stream's).
        let factor = CONNECTION_WINDOW_BYTES / STREAM_WINDOW_BYTES;
        connection.set_target_window_size(
            stream
                .saturating_mul(factor)
                .min(MAX_CONNECTION_WINDOW_BYTES),
        );
        self.stream_window = stream;
        if stream >= MAX_STREAM_WINDOW_BYTES {
            // Nothing left to learn: no more PINGs.
            self.ping = None;
        }
    }
}
