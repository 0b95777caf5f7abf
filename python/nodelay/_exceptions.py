"""The nodelay exception tree (httpx's names; the Rust engine raises these classes).

Our exception hierarchy::

    HTTPError
    ├── RequestError               (.request, .url)
    │   ├── TransportError
    │   │   ├── TimeoutException   (also a built-in TimeoutError)
    │   │   │   ├── ConnectTimeout
    │   │   │   ├── ReadTimeout
    │   │   │   ├── WriteTimeout
    │   │   │   └── PoolTimeout
    │   │   ├── NetworkError
    │   │   │   ├── ConnectError
    │   │   │   │   └── TLSError
    │   │   │   ├── ReadError
    │   │   │   ├── WriteError
    │   │   │   └── CloseError
    │   │   ├── ProtocolError
    │   │   │   ├── LocalProtocolError
    │   │   │   └── RemoteProtocolError
    │   │   │       └── HeaderTooLarge
    │   │   ├── ProxyError
    │   │   └── UnsupportedProtocol
    │   ├── DecodingError
    │   └── TooManyRedirects       (.history)
    └── HTTPStatusError            (.request, .response)
    InvalidURL
    CookieConflict                 (two cookies match a ``Cookies.get``)
    StreamError                    (a RuntimeError: API misuse, not a network problem)
    ├── StreamConsumed
    ├── StreamClosed
    ├── ResponseNotRead
    └── RequestNotRead
    SSLContextWarning              (a UserWarning: a setting of verify=ssl.SSLContext
                                    that nodelay's TLS does not apply)

The native module (``nodelay._core``) looks classes up by name in this module and
raises them as ``cls(message, url=url)``; the Python layer then fills in ``request``.

``str(exc)`` is the message. Every exception pickles (class, message, ``url``,
``request``, ``response``, ``history`` survive the round trip). A ``Response`` pickles as a
detached copy (status, headers, content, url, request), no longer tied to the engine.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._models import Request, Response

__all__ = [
    "CloseError",
    "ConnectError",
    "ConnectTimeout",
    "CookieConflict",
    "DecodingError",
    "HTTPError",
    "HTTPStatusError",
    "HeaderTooLarge",
    "InvalidURL",
    "LocalProtocolError",
    "NetworkError",
    "PoolTimeout",
    "ProtocolError",
    "ProxyError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "RequestError",
    "RequestNotRead",
    "ResponseNotRead",
    "SSLContextWarning",
    "StreamClosed",
    "StreamConsumed",
    "StreamError",
    "TLSError",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
]


def _rebuild(cls: type[BaseException], message: str, kwargs: dict[str, Any]) -> BaseException:
    """Unpickle helper: keyword-only constructors cannot go through ``BaseException.args``."""
    return cls(message, **kwargs)


class HTTPError(Exception):
    """Base class for ``RequestError`` and ``HTTPStatusError``.

    Useful for ``try...except`` blocks around ``response.raise_for_status()``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def _pickle_kwargs(self) -> dict[str, Any]:
        return {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self._pickle_kwargs()))


class RequestError(HTTPError):
    """An error occurred while issuing a request.

    ``url`` is the URL the engine was talking to (for redirects, the current hop);
    ``request`` is the ``Request`` being sent, or None when the error was raised
    before one existed.
    """

    def __init__(
        self, message: str, *, request: Request | None = None, url: str | None = None
    ) -> None:
        super().__init__(message)
        self.request = request
        if url is None and request is not None:
            url = request.url
        self.url = url

    def _pickle_kwargs(self) -> dict[str, Any]:
        return {"request": self.request, "url": self.url}


class TransportError(RequestError):
    """An error occurred at the transport layer (connection, I/O, framing)."""


# Timeout exceptions...


class TimeoutException(TransportError, TimeoutError):
    """The base class for timeout errors; also a built-in ``TimeoutError``.

    An operation has timed out.
    """

    def __str__(self) -> str:
        # TimeoutError is an OSError; keep ``str(exc)`` equal to the message.
        return self.message


class ConnectTimeout(TimeoutException):
    """Timed out while connecting to the host."""


class ReadTimeout(TimeoutException):
    """Timed out while receiving data from the host."""


class WriteTimeout(TimeoutException):
    """Timed out while sending data to the host."""


class PoolTimeout(TimeoutException):
    """Timed out waiting to acquire a connection from the pool."""


# Core networking exceptions...


class NetworkError(TransportError):
    """The base class for network-related errors.

    An error occurred while interacting with the network.
    """


class ReadError(NetworkError):
    """Failed to receive data from the network."""


class WriteError(NetworkError):
    """Failed to send data through the network."""


class ConnectError(NetworkError):
    """Failed to establish a connection."""


class TLSError(ConnectError):
    """The TLS handshake failed; the message names the reason.

    For example ``certificate verify failed: certificate has expired``, ``... self-signed
    certificate or unknown issuer`` or ``... certificate is not valid for this host name``.
    """


class CloseError(NetworkError):
    """Failed to close a connection."""


# Other transport exceptions...


class ProxyError(TransportError):
    """An error occurred while establishing a proxy connection.

    ``proxy_unreachable`` is true when the proxy itself could not be reached (httpx names
    that a ``ConnectError``; requests, as nodelay, a ``ProxyError``), false when the proxy
    answered and refused or broke the tunnel.
    """

    def __init__(
        self,
        message: str,
        *,
        request: Request | None = None,
        url: str | None = None,
        proxy_unreachable: bool = False,
    ) -> None:
        super().__init__(message, request=request, url=url)
        self.proxy_unreachable = proxy_unreachable

    def _pickle_kwargs(self) -> dict[str, Any]:
        return {**super()._pickle_kwargs(), "proxy_unreachable": self.proxy_unreachable}


class UnsupportedProtocol(TransportError):
    """Attempted to make a request to an unsupported protocol (URL scheme)."""


class ProtocolError(TransportError):
    """The protocol was violated."""


class LocalProtocolError(ProtocolError):
    """A protocol was violated by the client (e.g. CR/LF in a header); nothing was sent."""


class RemoteProtocolError(ProtocolError):
    """The protocol was violated by the server (malformed or truncated response)."""


class HeaderTooLarge(RemoteProtocolError):
    """The response head is beyond the limits (a line over 64 KiB, a head over 256 KiB,
    or more than 128 header fields). The connection is closed."""


# Other request exceptions...


class DecodingError(RequestError):
    """Decoding of the response failed, due to a malformed encoding."""


class TooManyRedirects(RequestError):
    """Too many redirects; ``history`` holds the redirect responses received."""

    def __init__(
        self,
        message: str,
        *,
        request: Request | None = None,
        url: str | None = None,
        history: list[Response] | None = None,
    ) -> None:
        super().__init__(message, request=request, url=url)
        self.history: list[Response] = [] if history is None else history

    def _pickle_kwargs(self) -> dict[str, Any]:
        return {"request": self.request, "url": self.url, "history": self.history}


# Client errors


class HTTPStatusError(HTTPError):
    """The response had an error HTTP status of 4xx or 5xx.

    May be raised when calling ``response.raise_for_status()``.
    """

    def __init__(self, message: str, *, request: Request, response: Response) -> None:
        super().__init__(message)
        self.request = request
        self.response = response

    def _pickle_kwargs(self) -> dict[str, Any]:
        return {"request": self.request, "response": self.response}


class InvalidURL(Exception):
    """URL is improperly formed or cannot be parsed."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, {"url": self.url}))


class CookieConflict(Exception):
    """``Cookies.get(name)`` found more than one cookie of that name: narrow it with
    ``domain=`` / ``path=``."""


class SSLContextWarning(UserWarning):
    """A setting of a ``verify=ssl.SSLContext`` that nodelay's TLS does not apply (changed
    ciphers or options, ``check_hostname=False`` alone, a context that lists no CA); see
    the TLS guide. A warning, not an error: filter it by class, for example
    ``warnings.simplefilter("ignore", nodelay.SSLContextWarning)``."""


class StreamError(RuntimeError):
    """A streamed body was used in a way its state does not allow.

    Each subclass has httpx's message as its default, so ``raise StreamClosed()`` reads
    as httpx's does; a more specific message can be given.
    """

    default_message = "The stream was used in a way its state does not allow."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(self.default_message if message is None else message)


class StreamConsumed(StreamError):
    """The body of a streamed response (or a request's streamed content) was already
    iterated; it is read only once."""

    default_message = (
        "Attempted to read or stream some content, but the content has already been"
        " streamed. For requests, this could be due to passing a generator as request"
        " content, and then receiving a redirect response or a secondary request as part"
        " of an authentication flow. For responses, this could be due to attempting to"
        " stream the response content more than once."
    )


class StreamClosed(StreamError):
    """The body of a streamed response was read or iterated after the response was
    closed (its connection already given back or closed)."""

    default_message = "Attempted to read or stream content, but the stream has been closed."


class ResponseNotRead(StreamError):
    """``content`` (or ``text``, ``json()``) of a streamed response before ``read()`` /
    ``await aread()``."""

    default_message = (
        "Attempted to access streaming response content, without having called `read()`."
    )


class RequestNotRead(StreamError):
    """``content`` of a request whose body is streamed (an iterator or a file) before
    ``read()`` / ``await aread()``."""

    default_message = (
        "Attempted to access streaming request content, without having called `read()`."
    )
