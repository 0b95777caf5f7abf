"""Shared fixtures: the embedded server, a client (sync or async), scripted raw-socket
servers, a test certificate authority, httpbin under waitress (``httpbin``) and the
library an httpx program runs with (``hx``).

Modules marked ``pytestmark = pytest.mark.both_drivers`` run every test twice: with
``Client`` (id ``sync``) and with ``AsyncClient`` behind ``Client``'s blocking API (id
``async``, see ``AsyncAsSync``). A test of such a module marked ``sync_only(reason)`` runs
with ``Client`` only.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any, TypeVar

import nodelay
import pytest
import trustme
from httpbin_server import httpbin  # noqa: F401 (a fixture for every module)
from nodelay import _core
from scripted import ScriptedServer, Step
from whoami_server import tcp_port, unix_server  # noqa: F401 (fixtures for every module)

T = TypeVar("T")
DRIVERS = ("sync", "async")
"""The ids of the two runs of a ``both_drivers`` test."""

# A suite started with SIGINT ignored (a background job of a non-interactive shell: `make
# test &`) passes SIG_IGN on to every child process, where Python then installs no
# KeyboardInterrupt handler and the Ctrl-C tests wait for their timeouts. A handled signal
# is reset to the default on exec, so restoring Python's handler here fixes the children.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"


def expected_bytes(n: int) -> bytes:
    """The body of the embedded server's ``/bytes/{n}`` and ``/chunked/{n}`` routes."""
    return (ALPHABET * (n // len(ALPHABET) + 1))[:n]


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    """A test certificate authority, one per test module."""
    return trustme.CA()


@pytest.fixture(scope="module")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``ca``'s certificate as a PEM file (``verify=ca_file``)."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture(scope="module")
def identity(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A certificate for localhost signed by ``ca``, for a TLS test server: (cert file, key
    file)."""
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    folder = tmp_path_factory.mktemp("leaf")
    cert, key = folder / "cert.pem", folder / "key.pem"
    leaf.cert_chain_pems[0].write_to_path(str(cert))
    for extra in leaf.cert_chain_pems[1:]:
        extra.write_to_path(str(cert), append=True)
    leaf.private_key_pem.write_to_path(str(key))
    return str(cert), str(key)


@pytest.fixture(scope="session")
def server() -> Iterator[_core.TestServer]:
    """The embedded test server (Rust), shared by the whole session."""
    srv = _core.TestServer("127.0.0.1", 0, 2)
    yield srv
    srv.close()


@pytest.fixture(scope="session")
def other_server() -> Iterator[_core.TestServer]:
    """A second embedded server: another origin (same host, other port)."""
    srv = _core.TestServer("127.0.0.1", 0, 1)
    yield srv
    srv.close()


@pytest.fixture(params=["httpx", "nodelay"])
def hx(request: pytest.FixtureRequest) -> ModuleType:
    """The library under test, imported the way an httpx user imports it: the
    ``test_docs_httpx*`` modules run each test with ``httpx`` itself (skipped when it is
    not installed) and with ``nodelay`` in its place."""
    if request.param == "httpx":
        return pytest.importorskip("httpx")
    return nodelay


# -- one client fixture, two drivers ---------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_drivers: run each test of the module with Client and with AsyncClient"
    )
    config.addinivalue_line(
        "markers", "sync_only(reason): in a both_drivers module, run with Client only"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    definition = metafunc.definition
    if definition.get_closest_marker("both_drivers") and not definition.get_closest_marker(
        "sync_only"
    ):
        metafunc.parametrize("driver", DRIVERS, indirect=True)


class _Loop:
    """The event loop the ``async`` runs drive their ``AsyncClient`` on (one per session)."""

    loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def run(cls, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to its end. A Ctrl-C (or any exception) that escapes the loop while
        the coroutine is still pending cancels it and lets the cancellation finish, as
        ``asyncio.run`` does: left pending, an interrupted request would hold its
        connection until some later test happens to run the loop again."""
        loop = cls.loop
        assert loop is not None, "the async_loop fixture starts the loop"
        task = loop.create_task(coro)
        try:
            return loop.run_until_complete(task)
        except BaseException:
            if not task.done():
                task.cancel()
                try:
                    loop.run_until_complete(task)
                except BaseException:  # the cancellation itself, or what the task raised
                    pass
            raise


async def _refused_request() -> None:
    refused = _core.AsyncEngine(_core.EngineOptions()).request(
        "GET", "http://127.0.0.1:1/", [], None, (1.0, 1.0, 1.0, 1.0, None)
    )
    try:
        await refused
    except nodelay.ConnectError:
        pass


@pytest.fixture(scope="session")
def async_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The ``async`` runs' event loop, with the process-wide pieces (tokio runtime, the
    loop's wake-up socket) started by one refused request: session-scoped, so they exist
    before any test counts its file descriptors (hostile/conftest.py)."""
    _Loop.loop = asyncio.new_event_loop()
    _Loop.run(_refused_request())
    yield _Loop.loop
    _Loop.loop.close()
    _Loop.loop = None


_AWAITED = frozenset(
    ("request", "send", "get", "head", "options", "delete", "post", "put", "patch")
)
"""The ``AsyncClient`` methods ``AsyncAsSync`` runs to their end on the loop."""


class AsyncAsSync:
    """Looks like ``nodelay.Client``; is an ``AsyncClient`` whose awaited methods run on
    the session's loop (``_Loop.run``). Everything else (settings, cookies, ``_engine``)
    is the ``AsyncClient``'s own."""

    _follow_default = False

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("follow_redirects", self._follow_default)
        object.__setattr__(self, "_client", nodelay.AsyncClient(**kwargs))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name in _AWAITED:
            return lambda *args, **kwargs: _Loop.run(attr(*args, **kwargs))
        return attr

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._client, name, value)

    def close(self) -> None:
        _Loop.run(self._client.aclose())

    def __enter__(self) -> AsyncAsSync:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def stream(self, method: str, url: str, **kwargs: Any) -> Iterator[nodelay.Response]:
        manager = self._client.stream(method, url, **kwargs)
        response = _Loop.run(manager.__aenter__())
        try:
            yield response
        finally:
            _Loop.run(manager.__aexit__(None, None, None))


class AsyncAsSyncSession(AsyncAsSync):
    """``nodelay.Session`` over ``AsyncClient``: redirects followed by default."""

    _follow_default = True


@pytest.fixture(autouse=True)
def driver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``"sync"``, or ``"async"`` in the ``async`` run of a ``both_drivers`` test: then
    ``nodelay.Client``/``Session`` made inside the test are ``AsyncAsSync`` clients."""
    name: str = getattr(request, "param", "sync")
    if name == "async":
        request.getfixturevalue("async_loop")
        monkeypatch.setattr(nodelay, "Client", AsyncAsSync)
        monkeypatch.setattr(nodelay, "Session", AsyncAsSyncSession)
    return name


@pytest.fixture
def client(driver: str) -> Iterator[nodelay.Client]:
    """A ``Client`` with default settings; in an ``async`` run, an ``AsyncClient`` behind
    the same blocking API."""
    with nodelay.Client() as c:  # AsyncAsSync in an async run (see ``driver``)
        yield c


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    """Factory: ``scripted(script0, script1, ...)`` starts a ``ScriptedServer``; all are
    stopped at teardown."""
    servers: list[ScriptedServer] = []

    def make(*scripts: Sequence[Step]) -> ScriptedServer:
        srv = ScriptedServer(*scripts)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.close()
