"""requests' exception tree (``requests.exceptions``), raised by ``nodelay.requests``.

The classes and their bases are requests' own, so ``except requests.ConnectionError`` and
``except IOError`` catch what they catch under requests. Errors of the nodelay engine are
translated into these by ``_errors.translate`` (the original is the ``__cause__``).
"""

from __future__ import annotations

from json import JSONDecodeError as _StdJSONDecodeError
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models import PreparedRequest, Request, Response

__all__ = [
    "ChunkedEncodingError",
    "ConnectTimeout",
    "ConnectionError",
    "ContentDecodingError",
    "FileModeWarning",
    "HTTPError",
    "InvalidHeader",
    "InvalidJSONError",
    "InvalidProxyURL",
    "InvalidSchema",
    "InvalidURL",
    "JSONDecodeError",
    "MissingSchema",
    "ProxyError",
    "ReadTimeout",
    "RequestException",
    "RequestsDependencyWarning",
    "RequestsWarning",
    "RetryError",
    "SSLError",
    "StreamConsumedError",
    "Timeout",
    "TooManyRedirects",
    "URLRequired",
    "UnrewindableBodyError",
]


class RequestException(IOError):
    """There was an ambiguous exception that occurred while handling your request.

    ``request`` and ``response`` are keyword arguments, as in requests; a response given
    without a request lends its ``request``.
    """

    request: PreparedRequest | Request | None
    response: Response | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        response = kwargs.pop("response", None)
        self.response = response
        self.request = kwargs.pop("request", None)
        if response is not None and not self.request and hasattr(response, "request"):
            self.request = response.request
        super().__init__(*args, **kwargs)


class InvalidJSONError(RequestException):
    """A JSON error occurred."""


class JSONDecodeError(InvalidJSONError, _StdJSONDecodeError):
    """Couldn't decode the text into json (also a ``json.JSONDecodeError``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _StdJSONDecodeError.__init__(self, *args)
        InvalidJSONError.__init__(self, *self.args, **kwargs)

    def __reduce__(self) -> str | tuple[Any, ...]:
        return _StdJSONDecodeError.__reduce__(self)


class HTTPError(RequestException):
    """An HTTP error occurred (``raise_for_status``)."""


class ConnectionError(RequestException):
    """A Connection error occurred."""


class ProxyError(ConnectionError):
    """A proxy error occurred."""


class SSLError(ConnectionError):
    """An SSL error occurred."""


class Timeout(RequestException):
    """The request timed out (catches both ``ConnectTimeout`` and ``ReadTimeout``)."""


class ConnectTimeout(ConnectionError, Timeout):
    """The request timed out while trying to connect to the remote server; safe to retry."""


class ReadTimeout(Timeout):
    """The server did not send any data in the allotted amount of time."""


class URLRequired(RequestException):
    """A valid URL is required to make a request."""


class TooManyRedirects(RequestException):
    """Too many redirects."""


class MissingSchema(RequestException, ValueError):
    """The URL scheme (e.g. http or https) is missing."""


class InvalidSchema(RequestException, ValueError):
    """The URL scheme provided is either invalid or unsupported."""


class InvalidURL(RequestException, ValueError):
    """The URL provided was somehow invalid."""


class InvalidHeader(RequestException, ValueError):
    """The header value provided was somehow invalid."""


class InvalidProxyURL(InvalidURL):
    """The proxy URL provided is invalid."""


class ChunkedEncodingError(RequestException):
    """The server declared chunked encoding but sent an invalid chunk."""


class ContentDecodingError(RequestException):
    """Failed to decode response content."""


class StreamConsumedError(RequestException, TypeError):
    """The content for this response was already consumed."""


class RetryError(RequestException):
    """Custom retries logic failed."""


class UnrewindableBodyError(RequestException):
    """Requests encountered an error when trying to rewind a body."""


class RequestsWarning(Warning):
    """Base warning for Requests."""


class FileModeWarning(RequestsWarning, DeprecationWarning):
    """A file was opened in text mode, but Requests determined its binary length."""


class RequestsDependencyWarning(RequestsWarning):
    """An imported dependency doesn't match the expected version range."""
