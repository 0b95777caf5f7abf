//! HTTP/2 settings and bounds, each with its reason. They are set explicitly on
//! the h2 builder (not left to the crate's defaults) so a change of defaults
//! upstream cannot loosen a bound (docs/hostile.md C17-C18).

use nodelay_proto::limits::MAX_HEAD_BYTES;

/// Our per-stream receive window (SETTINGS_INITIAL_WINDOW_SIZE): 4 MiB. The
/// RFC default of 64 KiB caps one stream at 64 KiB per round trip (about
/// 50 Mbit/s at 10 ms); 4 MiB covers a 1 Gbit/s path at 30 ms RTT, so a bulk
/// download is not throttled by flow control. Memory stays bounded: a peer can
/// have at most this much unread data in flight per stream.
pub const STREAM_WINDOW_BYTES: u32 = 4 * 1024 * 1024;

/// The connection-level receive window: 16 MiB, room for four streams at full
/// speed at once. Bounds what all streams of a connection may buffer unread.
pub const CONNECTION_WINDOW_BYTES: u32 = 16 * 1024 * 1024;

/// Largest frame we accept (SETTINGS_MAX_FRAME_SIZE): 64 KiB, matching the
/// read buffer of the HTTP/1.1 path; larger than the 16 KiB default so bulk
/// data costs a quarter of the frames, small enough to bound one frame's buffer.
pub const MAX_FRAME_BYTES: u32 = 64 * 1024;

/// Largest decoded header list of a response (SETTINGS_MAX_HEADER_LIST_SIZE):
/// the HTTP/1.1 head limit. h2 also derives from it how many CONTINUATION
/// frames it accepts for one header block, which stops a CONTINUATION flood
/// and a 10 MiB HPACK bomb (docs/hostile.md C17) before they fill memory.
pub const MAX_HEADER_LIST_BYTES: u32 = MAX_HEAD_BYTES as u32;

/// HPACK dynamic table we allow the server to use (SETTINGS_HEADER_TABLE_SIZE):
/// the RFC's 4 KiB default, stated so it stays bounded.
pub const HEADER_TABLE_BYTES: u32 = 4096;

/// Streams we reset but still remember, to tell late frames of a reset stream
/// from a protocol error: h2's default (10), stated explicitly. Bounds memory
/// under an RST_STREAM storm (docs/hostile.md C18).
pub const MAX_CONCURRENT_RESET_STREAMS: usize = 10;

/// Streams the server may make us reset for its errors before we close the
/// connection (CVE-2019-9514-style reset floods): h2's default, stated.
pub const MAX_LOCAL_ERROR_RESET_STREAMS: usize = 1024;

/// Bytes a stream may queue for sending beyond the peer's window: h2's
/// default of 400 KiB, stated.
pub const MAX_SEND_BUFFER_BYTES: usize = 400 * 1024;

/// Streams we open before the server's SETTINGS arrive: 100, the minimum RFC
/// 9113 §6.5.2 recommends servers allow. Beyond the server's limit h2 queues
/// requests (`SendRequest::ready`) rather than failing them.
pub const INITIAL_MAX_SEND_STREAMS: usize = 100;

/// Times a request goes again when the server refused its stream
/// (REFUSED_STREAM), when its connection went away without processing any
/// stream, or when the server broke a GOAWAY's promise to answer an
/// idempotent request (RFC 9113 §8.7, §6.8): once each, like the stale
/// keep-alive retry of HTTP/1.1.
pub const UNPROCESSED_RETRIES: usize = 1;

/// Times a request goes again on a new connection when the server did not
/// process it (above a GOAWAY's last stream id) and its connection is going
/// away after processing others: a server recycling its connections every N
/// streams (GOAWAY after N) pushes the requests in flight above N onto the
/// next connection. Each connection answers some, so this is no loop, and a
/// batch of up to 1,024 in flight (nodelay-py's `MAX_BATCH_CONCURRENCY`)
/// must not run out: a request has no place in the queue, and with 1,000 in
/// flight against N = 100 it is among the 100 answered with a chance of about
/// one in ten per connection. The bound only stops a server that keeps one
/// request unanswered forever. (A connection that went away having processed
/// nothing counts against [`UNPROCESSED_RETRIES`].)
pub const GOAWAY_RETRIES: usize = 1024;

/// Request bodies up to this size are queued whole on their stream (one call,
/// no wait for window: the RFC's initial window of 65,535 bytes takes them at
/// once unless the server shrank it); larger ones are sent as window is
/// granted, each wait bounded by the write timeout (`h2/upload.rs`).
pub const QUEUED_BODY_MAX_BYTES: usize = 64 * 1024;
