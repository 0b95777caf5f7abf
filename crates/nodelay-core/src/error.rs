//! The engine's error: an opaque struct with a kind, a message and a source
//! chain (the shape of hyper's and reqwest's errors).

use std::error::Error as StdError;
use std::fmt;

use nodelay_proto::ProtoError;

/// What class of failure happened. `nodelay-py` maps each to the most specific
/// Python exception; the names follow httpx's exception tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The URL does not parse, or has no host.
    InvalidUrl,
    /// A scheme other than `http` or `https`.
    UnsupportedProtocol,
    /// The request itself breaks HTTP (a bad method, header or framing).
    LocalProtocol,
    /// Opening the connection took longer than the connect timeout.
    ConnectTimeout,
    /// The server sent nothing for longer than the read timeout.
    ReadTimeout,
    /// A write of the request blocked longer than the write timeout.
    WriteTimeout,
    /// No connection slot came free within the pool timeout.
    PoolTimeout,
    /// The connection could not be opened (refused, unreachable, DNS).
    Connect,
    /// TLS handshake or certificate failure (a kind of connect failure).
    Tls,
    /// The proxy refused (CONNECT answered with a non-2xx status, 407
    /// included), could not be reached, or broke the CONNECT exchange.
    Proxy,
    /// Reading the response failed (reset, closed early).
    Read,
    /// Writing the request failed (reset, broken pipe).
    Write,
    /// The server's bytes are not valid HTTP.
    RemoteProtocol,
    /// The response head is beyond the header limits (docs/hostile.md A8): a kind
    /// of remote protocol error.
    HeaderTooLarge,
    /// A body that cannot be decoded, or decodes beyond its bounds.
    Decoding,
    /// A signal handler asked to abort (Ctrl-C); the caller holds the reason.
    Interrupted,
    /// The client was closed.
    Closed,
    /// A streamed request body's source failed (a file or iterator raised).
    BodySource,
}

/// An engine error. Cheap to move (one box).
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
    /// True when no byte of a response was received, so an idempotent request
    /// on a reused connection may be retried.
    nothing_received: bool,
    /// A `Proxy` error raised because the proxy could not be reached.
    proxy_unreachable: bool,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                source: None,
                nothing_received: false,
                proxy_unreachable: false,
            }),
        }
    }

    /// A streamed request body's source failed; `message` says how.
    pub fn body_source(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::BodySource, message)
    }

    pub(crate) fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// The same failure seen from a caller with more context: a new kind,
    /// and `prefix` put before the message (e.g. which proxy failed).
    pub(crate) fn recast(mut self, kind: ErrorKind, prefix: impl Into<String>) -> Self {
        let mut message = prefix.into();
        message.push_str(&self.inner.message);
        self.inner.kind = kind;
        self.inner.message = message;
        self
    }

    pub(crate) fn proxy_unreachable(mut self) -> Self {
        self.inner.proxy_unreachable = true;
        self
    }

    pub(crate) fn before_response(mut self) -> Self {
        self.inner.nothing_received = true;
        self
    }

    pub(crate) fn protocol(e: ProtoError, kind: ErrorKind) -> Self {
        let kind = match e {
            ProtoError::HeadTooLarge | ProtoError::TooManyHeaders => ErrorKind::HeaderTooLarge,
            _ => kind,
        };
        Error::new(kind, e.to_string()).with_source(e)
    }

    /// The class of failure, which picks the binding's exception.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The human-readable message, naming what failed.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// Whether a deadline (connect, read, write or pool) ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self.inner.kind,
            ErrorKind::ConnectTimeout
                | ErrorKind::ReadTimeout
                | ErrorKind::WriteTimeout
                | ErrorKind::PoolTimeout
        )
    }

    /// Whether a signal handler (Ctrl-C) asked the request to stop.
    pub fn is_interrupted(&self) -> bool {
        self.inner.kind == ErrorKind::Interrupted
    }

    pub(crate) fn nothing_received(&self) -> bool {
        self.inner.nothing_received
    }

    /// Whether this `Proxy` error is a failure to connect to the proxy (as
    /// opposed to a proxy that refused or broke the tunnel): requests calls
    /// both a ProxyError, httpx calls this one a ConnectError.
    pub fn is_proxy_unreachable(&self) -> bool {
        self.inner.proxy_unreachable
    }

    /// Whether a request that failed with this error goes once more on a
    /// fresh connection (docs/hostile.md H28): the protocol's one retry rule
    /// (`nodelay_proto::retry_on_fresh_connection`: a `reused` connection,
    /// `retries_left`, an `idempotent` request, nothing of a response
    /// received, never after a timeout or a Ctrl-C) asked by every HTTP/1.1
    /// send loop, sync and async, plain and streamed. A streamed body must
    /// also rewind; callers ask it after this says yes, rewinding having
    /// effects of its own.
    pub(crate) fn allows_fresh_connection_retry(
        &self,
        reused: bool,
        idempotent: bool,
        retries_left: usize,
    ) -> bool {
        nodelay_proto::retry_on_fresh_connection(&nodelay_proto::FailedAttempt {
            reused,
            idempotent,
            retries_left,
            nothing_received: self.nothing_received(),
            timed_out: self.is_timeout(),
            interrupted: self.is_interrupted(),
        })
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("message", &self.inner.message)
            .field("source", &self.inner.source)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_ref()
            .map(|s| &**s as &(dyn StdError + 'static))
    }
}
