"""nodelay: the fastest HTTP client for Python, with a Rust core.

>>> import nodelay
>>> r = nodelay.get("http://127.0.0.1:8000/json/100")
>>> r.status_code, r.json()["ok"]

Use a ``Client`` (or a ``Session``, which follows redirects by default) to reuse
connections; one client may be shared by many threads.
"""

from ._api import delete, get, head, options, patch, post, put, request, stream
from ._asgi import ASGITransport
from ._async_client import AsyncClient
from ._auth import Auth, BasicAuth, BearerAuth, DigestAuth, FunctionAuth, NetRCAuth
from ._client import Client, Session
from ._config import Limits, RateLimit, Timeout
from ._cookies import Cookie, CookieJar
from ._cookies import CookieJar as Cookies
from ._core import __version__
from ._exceptions import (
    CloseError,
    ConnectError,
    ConnectTimeout,
    CookieConflict,
    DecodingError,
    HeaderTooLarge,
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
    RequestNotRead,
    ResponseNotRead,
    SSLContextWarning,
    StreamClosed,
    StreamConsumed,
    StreamError,
    TimeoutException,
    TLSError,
    TooManyRedirects,
    TransportError,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
)
from ._headers import Headers
from ._models import Request, Response
from ._retry import Retry
from ._transports import (
    AsyncBaseTransport,
    AsyncHTTPTransport,
    BaseTransport,
    HTTPTransport,
    MockTransport,
)
from ._wsgi import WSGITransport

# ``codes`` for type checkers; at run time it comes from ``__getattr__`` below. The flag is
# mypy's convention without importing ``typing`` (several ms of ``import nodelay``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._codes import codes
    from ._urltypes import URL, QueryParams
del TYPE_CHECKING

__all__ = [
    "URL",
    "ASGITransport",
    "AsyncBaseTransport",
    "AsyncClient",
    "AsyncHTTPTransport",
    "Auth",
    "BaseTransport",
    "BasicAuth",
    "BearerAuth",
    "Client",
    "CloseError",
    "ConnectError",
    "ConnectTimeout",
    "Cookie",
    "CookieConflict",
    "CookieJar",
    "Cookies",
    "DecodingError",
    "DigestAuth",
    "FunctionAuth",
    "HTTPError",
    "HTTPStatusError",
    "HTTPTransport",
    "HeaderTooLarge",
    "Headers",
    "InvalidURL",
    "Limits",
    "LocalProtocolError",
    "MockTransport",
    "NetRCAuth",
    "NetworkError",
    "PoolTimeout",
    "ProtocolError",
    "ProxyError",
    "QueryParams",
    "RateLimit",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Request",
    "RequestError",
    "RequestNotRead",
    "Response",
    "ResponseNotRead",
    "Retry",
    "SSLContextWarning",
    "Session",
    "StreamClosed",
    "StreamConsumed",
    "StreamError",
    "TLSError",
    "Timeout",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "UnsupportedProtocol",
    "WSGITransport",
    "WriteError",
    "WriteTimeout",
    "__version__",
    "codes",
    "delete",
    "get",
    "head",
    "options",
    "patch",
    "post",
    "put",
    "request",
    "stream",
]


def __getattr__(name: str) -> object:
    # ``codes`` is loaded on first use (see _codes.py), then bound like any other name.
    if name == "codes":
        from ._codes import codes

        globals()["codes"] = codes
        return codes
    if name in ("URL", "QueryParams"):
        from . import _urltypes

        value = getattr(_urltypes, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'nodelay' has no attribute {name!r}")
