"""requests' API over nodelay: ``import nodelay.requests as requests``.

Programs written for requests (its quickstart and advanced usage) run unchanged: the same
functions, ``Session``, ``Request``/``PreparedRequest``/``Response``, exceptions, auth,
hooks, adapters and cookie jar, sending through nodelay's engine. docs/migrate-requests.md
lists what still differs and why.
"""

from .. import __version__
from . import (
    adapters,
    api,
    auth,
    cookies,
    exceptions,
    hooks,
    models,
    sessions,
    status_codes,
    structures,
    utils,
)
from .api import delete, get, head, options, patch, post, put, request
from .exceptions import (
    ConnectionError,
    ConnectTimeout,
    FileModeWarning,
    HTTPError,
    JSONDecodeError,
    ReadTimeout,
    RequestException,
    RequestsDependencyWarning,
    Timeout,
    TooManyRedirects,
    URLRequired,
)
from .models import PreparedRequest, Request, Response
from .sessions import Session, session
from .status_codes import codes

__all__ = [
    "ConnectTimeout",
    "ConnectionError",
    "FileModeWarning",
    "HTTPError",
    "JSONDecodeError",
    "PreparedRequest",
    "ReadTimeout",
    "Request",
    "RequestException",
    "RequestsDependencyWarning",
    "Response",
    "Session",
    "Timeout",
    "TooManyRedirects",
    "URLRequired",
    "__version__",
    "adapters",
    "api",
    "auth",
    "codes",
    "cookies",
    "delete",
    "exceptions",
    "get",
    "head",
    "hooks",
    "models",
    "options",
    "patch",
    "post",
    "put",
    "request",
    "session",
    "sessions",
    "status_codes",
    "structures",
    "utils",
]
