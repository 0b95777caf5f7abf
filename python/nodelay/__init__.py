"""nodelay: the fastest HTTP client for Python, with a Rust core.

>>> import nodelay
>>> r = nodelay.get("http://127.0.0.1:8000/json/100")
>>> r.status_code, r.json()["ok"]

Use a ``Client`` (or a ``Session``, which follows redirects by default) to reuse
connections; one client may be shared by many threads.
"""

from ._api import delete, get, head, options, patch, post, put, request
from ._client import Client, Session
from ._config import Limits, Timeout
from ._core import __version__
from ._exceptions import (
    CloseError,
    ConnectError,
    ConnectTimeout,
    DecodingError,
    HTTPError,
    HTTPStatusError,
    InvalidURL,
    LocalProtocolError,
    NetworkError,
    PoolTimeout,
    ProtocolError,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    RequestError,
    TimeoutException,
    TLSError,
    TooManyRedirects,
    TransportError,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
)
from ._models import Headers, Request, Response

__all__ = [
    "Client",
    "CloseError",
    "ConnectError",
    "ConnectTimeout",
    "DecodingError",
    "HTTPError",
    "HTTPStatusError",
    "Headers",
    "InvalidURL",
    "Limits",
    "LocalProtocolError",
    "NetworkError",
    "PoolTimeout",
    "ProtocolError",
    "ProxyError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Request",
    "RequestError",
    "Response",
    "Session",
    "TLSError",
    "Timeout",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
    "__version__",
    "delete",
    "get",
    "head",
    "options",
    "patch",
    "post",
    "put",
    "request",
]
