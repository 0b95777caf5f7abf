"""The public surface: ``__all__``, ``__version__``, import cost."""

from __future__ import annotations

import subprocess
import sys
import types

import nodelay
from nodelay import _core

EXPECTED = {
    "HTTPError",
    "RequestError",
    "TransportError",
    "TimeoutException",
    "ConnectTimeout",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "NetRCAuth",
    "NetworkError",
    "ConnectError",
    "TLSError",
    "StreamConsumed",
    "StreamError",
    "stream",
    "ReadError",
    "WriteError",
    "CloseError",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "HeaderTooLarge",
    "ProxyError",
    "UnsupportedProtocol",
    "DecodingError",
    "TooManyRedirects",
    "HTTPStatusError",
    "InvalidURL",
    "Client",
    "AsyncClient",
    "ResponseNotRead",
    "Retry",
    "Session",
    "Headers",
    "Request",
    "Response",
    "Timeout",
    "Limits",
    "RateLimit",
    "CookieJar",
    "Cookie",
    "Auth",
    "BasicAuth",
    "DigestAuth",
    "BearerAuth",
    "FunctionAuth",
    "request",
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "options",
    "__version__",
    "codes",
    # transports (httpx's API)
    "BaseTransport",
    "AsyncBaseTransport",
    "MockTransport",
    "HTTPTransport",
    "AsyncHTTPTransport",
    "WSGITransport",
    "ASGITransport",
    # httpx's data types
    "URL",
    "QueryParams",
    "Cookies",
    # httpx's stream-state and cookie errors
    "StreamClosed",
    "RequestNotRead",
    "CookieConflict",
    # a verify=ssl.SSLContext setting nodelay's TLS does not apply
    "SSLContextWarning",
}


def test_all_is_exactly_the_public_names() -> None:
    assert len(nodelay.__all__) == len(set(nodelay.__all__)), "duplicates in __all__"
    assert set(nodelay.__all__) == EXPECTED
    for name in nodelay.__all__:
        assert hasattr(nodelay, name), name
    public = {
        name
        for name, value in vars(nodelay).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(nodelay.__all__) - {"__version__"}
    # Right after import, the only submodules bound on the package are private ones
    # (public subpackages such as the benchmark lab are only bound once imported).
    code = (
        "import types, nodelay\n"
        "print(sorted(n for n, v in vars(nodelay).items()"
        " if isinstance(v, types.ModuleType) and not n.startswith('_')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert out.stdout.strip() == "[]"


def test_star_import() -> None:
    namespace: dict[str, object] = {}
    exec("from nodelay import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(nodelay.__all__)


def test_version() -> None:
    assert nodelay.__version__ == _core.__version__
    assert isinstance(nodelay.__version__, str) and nodelay.__version__


def test_public_items_are_documented() -> None:
    for name in nodelay.__all__:
        if name == "__version__":
            continue
        assert getattr(nodelay, name).__doc__, name


def test_py_typed_is_shipped() -> None:
    from importlib import resources

    assert resources.files("nodelay").joinpath("py.typed").is_file()


def test_import_does_not_load_heavy_modules() -> None:
    heavy = [
        "asyncio",
        "email",
        "http.cookiejar",
        "urllib.request",
        "json",
        "datetime",
        "argparse",
        "http.client",
        "ssl",
        "http",
        "nodelay._codes",
        "typing",
    ]
    code = f"import sys, nodelay\nprint(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert out.stdout.strip() == "", f"import nodelay loaded: {out.stdout.strip()}"
