//! [`AsyncExchange`]: an async response in flight over either protocol. The
//! head looks the same for both (raw bytes plus spans); body reads go to the
//! protocol's driver.

use std::future::Future;
use std::time::Instant;

use nodelay_proto::{HeaderSpan, ResponseHead, Version};

use crate::aio::exchange::AsyncH1Exchange;
use crate::aio::h2::AsyncH2Exchange;
use crate::aio::pool::AsyncPooled;
use crate::body::whole::{AsyncRawBody, WholeBody, WholeResponse};
use crate::error::Error;

/// A response whose head arrived; the body is still to be read. Dropping it
/// before the end of the body closes its HTTP/1.1 connection, or resets its
/// HTTP/2 stream.
pub struct AsyncExchange(Protocol);

enum Protocol {
    H1(AsyncH1Exchange),
    H2(AsyncH2Exchange),
}

/// Forwards a method to the driver of the exchange's protocol.
macro_rules! by_protocol {
    ($self:expr, $x:ident => $call:expr) => {
        match $self {
            Protocol::H1($x) => $call,
            Protocol::H2($x) => $call,
        }
    };
}

impl AsyncExchange {
    pub(crate) fn h1(exchange: AsyncH1Exchange) -> Self {
        AsyncExchange(Protocol::H1(exchange))
    }

    pub(crate) fn h2(exchange: AsyncH2Exchange) -> Self {
        AsyncExchange(Protocol::H2(exchange))
    }

    fn head(&self) -> (&ResponseHead, &[u8]) {
        match &self.0 {
            Protocol::H1(x) => x.head(),
            Protocol::H2(x) => (&x.head, &x.head_bytes),
        }
    }

    /// The response status code.
    pub fn status(&self) -> u16 {
        self.head().0.status
    }

    /// The HTTP version the response came in.
    pub fn version(&self) -> Version {
        self.head().0.version
    }

    /// The reason phrase as a span of the head bytes.
    pub fn reason_span(&self) -> (u32, u32) {
        self.head().0.reason
    }

    /// When the request started: the origin of the response's `elapsed`.
    pub fn started(&self) -> Instant {
        by_protocol!(&self.0, x => x.started)
    }

    /// Moves the head out (for building a response object without copying).
    pub fn take_head(&mut self) -> (Box<[u8]>, Vec<HeaderSpan>) {
        by_protocol!(&mut self.0, x => x.take_head())
    }

    /// Values of every `name` header field, in order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        let (head, bytes) = self.head();
        head.headers.iter().filter_map(move |span| {
            let field = &bytes[span.name.0 as usize..span.name.1 as usize];
            field
                .eq_ignore_ascii_case(name.as_bytes())
                .then(|| &bytes[span.value.0 as usize..span.value.1 as usize])
        })
    }

    /// The content codings to undo, in the order applied; `None` when one is
    /// unknown (the body is then delivered as received).
    pub fn content_codings(&self) -> Result<Option<Vec<crate::body::Coding>>, Error> {
        crate::body::parse_codings(self.header_values("content-encoding"))
    }

    /// The exact body size when the server announced one.
    pub fn content_length(&self) -> Option<u64> {
        by_protocol!(&self.0, x => x.content_length())
    }

    /// True once the whole body was read.
    pub fn is_complete(&self) -> bool {
        by_protocol!(&self.0, x => x.is_complete())
    }

    /// Reads the rest of the body, appending it to `out`.
    pub async fn read_to_end(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        by_protocol!(&mut self.0, x => x.read_to_end(out).await)
    }

    /// Reads the next piece of the body into `dst` (at most `dst.len()`
    /// bytes); 0 means the body is complete.
    pub async fn read_some(&mut self, dst: &mut [u8]) -> Result<usize, Error> {
        by_protocol!(&mut self.0, x => x.read_some(dst).await)
    }

    /// Ends the exchange: an HTTP/1.1 connection whose body was read to the
    /// end goes back to the pool, any other is closed (docs/hostile.md A10, H29);
    /// an HTTP/2 stream not read to its end is reset.
    pub fn finish(self) {
        if let Some(pooled) = self.into_reusable() {
            pooled.return_to_pool();
        }
    }

    /// Ends the exchange like [`AsyncExchange::finish`], but hands a reusable
    /// HTTP/1.1 connection to the caller instead of the pool (`None`: it was
    /// closed, or the response came over HTTP/2).
    pub(crate) fn into_reusable(self) -> Option<AsyncPooled> {
        match self.0 {
            Protocol::H1(x) => x.into_reusable(),
            Protocol::H2(x) => {
                drop(x);
                None
            }
        }
    }

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
    pub async fn read_whole(self, max_decoded_bytes: u64) -> Result<WholeResponse, Error> {
        let (whole, reusable) = self.read_whole_reusable(max_decoded_bytes).await?;
        if let Some(pooled) = reusable {
            pooled.return_to_pool();
        }
        Ok(whole)
    }

    /// [`AsyncExchange::read_whole`], handing a reusable HTTP/1.1 connection
    /// to the caller (see [`AsyncExchange::into_reusable`]).
    pub(crate) async fn read_whole_reusable(
        mut self,
        max_decoded_bytes: u64,
    ) -> Result<(WholeResponse, Option<AsyncPooled>), Error> {
        let body = self
            .whole_body()?
            .read_async(&mut self, max_decoded_bytes)
            .await?;
        let taken = self.take_head();
        let whole = WholeResponse::new(self.head().0, taken, body, self.started().elapsed());
        Ok((whole, self.into_reusable()))
    }

    /// Ends the exchange (its body read) and makes the whole response of
    /// `body`: an HTTP/1.1 connection read to its end goes back to the pool,
    /// an HTTP/2 stream is released.
    pub fn into_whole<B>(mut self, body: B) -> WholeResponse<B> {
        let taken = self.take_head();
        let whole = WholeResponse::new(self.head().0, taken, body, self.started().elapsed());
        self.finish();
        whole
    }
}

impl AsyncRawBody for AsyncExchange {
    fn read_to_end<'a>(
        &'a mut self,
        out: &'a mut Vec<u8>,
    ) -> impl Future<Output = Result<(), Error>> + Send + 'a {
        AsyncExchange::read_to_end(self, out)
    }
}
