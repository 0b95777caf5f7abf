"""The public surface: ``__all__``, ``__version__``, import cost."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

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
    "ProxyError",
    "UnsupportedProtocol",
    "DecodingError",
    "TooManyRedirects",
    "HTTPStatusError",
    "InvalidURL",
    "Client",
    "Session",
    "Headers",
    "Request",
    "Response",
    "Timeout",
    "Limits",
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
    ]
    code = f"import sys, nodelay\nprint(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert out.stdout.strip() == "", f"import nodelay loaded: {out.stdout.strip()}"


def test_import_is_fast(tmp_path: Path) -> None:
    # Cumulative microseconds that -X importtime reports for "nodelay", best of three, with
    # bytecode cached (in tmp_path: the first run writes it) as in any installed package.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path)
    best = None
    for _ in range(4):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import nodelay"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
            env=env,
        )
        for line in out.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == "nodelay":
                us = int(parts[1])
                best = us if best is None else min(best, us)
    assert best is not None
    assert best < 30_000, f"import nodelay took {best / 1000:.1f} ms"
