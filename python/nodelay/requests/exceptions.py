"""requests' exception tree (``requests.exceptions``), raised by ``nodelay.requests``.

The classes and their bases are requests' own, so ``except requests.ConnectionError`` and
``except IOError`` catch what they catch under requests. Errors of the nodelay engine are
translated into these by ``_errors.translate`` (the original is the ``__cause__``).

When the real requests is imported in the process too, code written against it (an SDK
that retries on ``requests.exceptions.ConnectionError``) must catch these errors as well.
``except`` matches by subclassing, so creating one of these exceptions then makes an
instance of a *twin* class derived from both the class named here and requests' class of
the same name (``_twin``, cached per class). ``import nodelay.requests`` never imports
requests: the twin is made only when ``requests.exceptions`` is already in ``sys.modules``
(a program that names requests' classes has imported them).
"""

from __future__ import annotations

import sys
import threading
from json import JSONDecodeError as _StdJSONDecodeError
from typing import TYPE_CHECKING, Any, cast

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


_REQUESTS_EXCEPTIONS = "requests.exceptions"
_twins: dict[type[BaseException], type[BaseException]] = {}
_twins_lock = threading.Lock()


def _reduce_as(base: type[BaseException]) -> Any:
    """A twin's ``__reduce__``: pickled as its nodelay class (which makes a twin again
    when unpickled where requests is imported)."""

    def __reduce__(self: BaseException) -> Any:
        reduced = base.__reduce__(self)
        if isinstance(reduced, tuple) and reduced and reduced[0] is type(self):
            reduced = (base, *reduced[1:])
        return reduced

    return __reduce__


def _twin(cls: type[BaseException]) -> type[BaseException]:
    """``cls``, or its twin with requests' class of the same name when requests is
    imported (see the module docstring)."""
    twin = _twins.get(cls)
    if twin is not None:
        return twin
    real = sys.modules.get(_REQUESTS_EXCEPTIONS)
    if real is None or "_nodelay_class" in cls.__dict__:
        return cls
    counterpart = next(
        (
            getattr(real, base.__name__)
            for base in cls.__mro__
            if base.__module__ == __name__ and hasattr(real, base.__name__)
        ),
        None,
    )
    if counterpart is None or issubclass(cls, counterpart):
        return cls
    with _twins_lock:
        twin = _twins.get(cls)
        if twin is None:
            namespace = {
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__,
                "__reduce__": _reduce_as(cls),
                "_nodelay_class": cls,
            }
            made = _AlsoRequests(cls.__name__, (cls, counterpart), namespace)
            twin = _twins[cls] = cast("type[BaseException]", made)
        return twin


class _AlsoRequests(type):
    """The metaclass of ``RequestException``: instances are made of ``_twin(cls)``."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return type.__call__(_twin(cast("type[BaseException]", cls)), *args, **kwargs)


class RequestException(IOError, metaclass=_AlsoRequests):
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
        # Not ``super()``: in a twin the next class is requests' own, whose ``__init__``
        # would do the above again (and its JSONDecodeError's needs other arguments).
        OSError.__init__(self, *args, **kwargs)


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
