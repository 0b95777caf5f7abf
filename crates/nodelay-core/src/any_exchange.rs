//! [`Exchange`]: a response in flight over either protocol. The head looks the
//! same for both (raw bytes plus spans); body reads go to the protocol's driver.

use std::time::Instant;

use nodelay_proto::{HeaderSpan, ResponseHead, Version};

use crate::body::whole::{RawBody, WholeBody, WholeResponse};
use crate::error::Error;
use crate::exchange::H1Exchange;
use crate::h2::H2Exchange;
use crate::interrupt::Interrupt;

/// A response whose head arrived; the body is still to be read.
pub enum Exchange {
    /// Read by the blocking HTTP/1.1 driver on the caller's thread.
    H1(H1Exchange),
    /// A stream of a shared HTTP/2 connection, read from the runtime.
    H2(H2Exchange),
}

/// Forwards a body method to the driver of the exchange's protocol.
macro_rules! by_protocol {
    ($self:ident, $x:ident => $call:expr) => {
        match $self {
            Exchange::H1($x) => $call,
            Exchange::H2($x) => $call,
        }
    };
}

impl Exchange {
    fn head(&self) -> &ResponseHead {
        by_protocol!(self, x => &x.head)
    }

    fn head_bytes_ref(&self) -> &[u8] {
        by_protocol!(self, x => &x.head_bytes)
    }

    /// The response status code.
    pub fn status(&self) -> u16 {
        self.head().status
    }

    /// The HTTP version the response came in.
    pub fn version(&self) -> Version {
        self.head().version
    }

    /// The raw head bytes; spans index into them. For HTTP/2 they are
    /// synthesized: the reason phrase, then `name: value` lines.
    pub fn head_bytes(&self) -> &[u8] {
        self.head_bytes_ref()
    }

    /// Each header's name and value as spans of [`Exchange::head_bytes`],
    /// so no header is copied until asked for.
    pub fn header_spans(&self) -> &[HeaderSpan] {
        &self.head().headers
    }

    /// The reason phrase as a span of [`Exchange::head_bytes`].
    pub fn reason_span(&self) -> (u32, u32) {
        self.head().reason
    }

    /// When the request started: the origin of the response's `elapsed`.
    pub fn started(&self) -> Instant {
        by_protocol!(self, x => x.started)
    }

    /// Moves the head out (for building a response object without copying).
    pub fn take_head(&mut self) -> (Box<[u8]>, Vec<HeaderSpan>) {
        by_protocol!(self, x => (
            std::mem::take(&mut x.head_bytes),
            std::mem::take(&mut x.head.headers),
        ))
    }

    /// Values of every `name` header field, in order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        let head = self.head_bytes_ref();
        self.head().headers.iter().filter_map(move |span| {
            let field = &head[span.name.0 as usize..span.name.1 as usize];
            field
                .eq_ignore_ascii_case(name.as_bytes())
                .then(|| &head[span.value.0 as usize..span.value.1 as usize])
        })
    }

    /// The content codings to undo, in the order applied; `None` when one is
    /// unknown (the body is then delivered as received).
    pub fn content_codings(&self) -> Result<Option<Vec<crate::body::Coding>>, Error> {
        crate::body::parse_codings(self.header_values("content-encoding"))
    }

    /// The exact body size when the server announced one.
    pub fn content_length(&self) -> Option<u64> {
        by_protocol!(self, x => x.content_length())
    }

    /// True when the whole remaining body is already received, so reading it
    /// needs no wait (callers skip releasing the GIL then).
    pub fn is_body_buffered(&self) -> bool {
        by_protocol!(self, x => x.is_body_buffered())
    }

    /// Reads a Content-Length body of exactly `dst.len()` bytes into `dst`.
    pub fn read_exact_into(
        &mut self,
        dst: &mut [u8],
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        by_protocol!(self, x => x.read_exact_into(dst, interrupt))
    }

    /// Reads the rest of the body, appending it to `out`.
    pub fn read_to_end(
        &mut self,
        out: &mut Vec<u8>,
        interrupt: &dyn Interrupt,
    ) -> Result<(), Error> {
        by_protocol!(self, x => x.read_to_end(out, interrupt))
    }

    /// True once the whole body was read.
    pub fn is_complete(&self) -> bool {
        by_protocol!(self, x => x.is_complete())
    }

    /// Reads the next piece of the body into `dst` (at most `dst.len()`
    /// bytes); 0 means the body is complete.
    pub fn read_some(&mut self, dst: &mut [u8], interrupt: &dyn Interrupt) -> Result<usize, Error> {
        by_protocol!(self, x => x.read_some(dst, interrupt))
    }

    /// Whether `read_some` would return without waiting for the network.
    pub fn body_ready(&mut self) -> bool {
        by_protocol!(self, x => x.body_ready())
    }

    /// Takes the trailer fields that followed a body read to its end, as
    /// received lines each ended by CRLF (`nodelay_proto::trailer_fields`
    /// gives the fields); empty when there were none. HTTP/1.1 only: an
    /// HTTP/2 response's trailers are not kept.
    pub fn take_trailers(&mut self) -> Vec<u8> {
        match self {
            Exchange::H1(x) => x.take_trailers(),
            Exchange::H2(_) => Vec::new(),
        }
    }

    /// Ends the exchange. HTTP/1.1: a fully read body on a keep-alive
    /// connection returns it to the pool, anything else closes it. HTTP/2: the
    /// stream is released (reset with CANCEL if the body was not read to its
    /// end); the connection stays shared.
    pub fn finish(self) {
        match self {
            Exchange::H1(x) => x.finish(),
            Exchange::H2(x) => drop(x),
        }
    }
}

impl Exchange {
    /// What reading this response's whole body takes (fails with
    /// `Decoding` on more than `MAX_CONTENT_CODINGS` codings).
    pub fn whole_body(&self) -> Result<WholeBody, Error> {
        Ok(WholeBody::new(
            self.content_codings()?,
            self.content_length(),
        ))
    }

    /// Reads the whole body, decoded, and ends the exchange (the connection
    /// goes back to the pool).
    pub fn read_whole(
        mut self,
        interrupt: &dyn Interrupt,
        max_decoded_bytes: u64,
    ) -> Result<WholeResponse, Error> {
        let body = self
            .whole_body()?
            .read(&mut self, interrupt, max_decoded_bytes)?;
        Ok(self.into_whole(body))
    }

    /// Ends the exchange (its body read) and makes the whole response of
    /// `body`: an HTTP/1.1 connection read to its end goes back to the pool.
    pub fn into_whole<B>(mut self, body: B) -> WholeResponse<B> {
        let taken = self.take_head();
        let whole = WholeResponse::new(self.head(), taken, body, self.started().elapsed());
        self.finish();
        whole
    }
}

impl RawBody for Exchange {
    fn read_exact_into(&mut self, dst: &mut [u8], interrupt: &dyn Interrupt) -> Result<(), Error> {
        Exchange::read_exact_into(self, dst, interrupt)
    }

    fn read_to_end(&mut self, out: &mut Vec<u8>, interrupt: &dyn Interrupt) -> Result<(), Error> {
        Exchange::read_to_end(self, out, interrupt)
    }
}
