"""Transports: what performs one exchange below the client's flow (httpx's API).

A client without ``transport=`` or ``mounts=`` never looks here: its requests go to the
engine directly (the hot path). With them, the flow (``_flow._exchange``) asks
``BaseClient._transport_for(url)`` which transport serves a URL and hands it a
``Request``; redirects, auth, retries, cookies and event hooks stay in the flow above,
so they work the same through any transport.

- ``BaseTransport.handle_request(request) -> Response`` (``Client``) and
  ``AsyncBaseTransport.handle_async_request(request) -> Response`` (``AsyncClient``):
  subclass them to answer requests yourself.
- ``MockTransport(handler)``: ``handler(request)`` returns the ``Response`` (an async
  handler's awaitable is awaited under ``AsyncClient``).
- ``HTTPTransport`` / ``AsyncHTTPTransport``: the engine (a connection pool of its own)
  as a transport object; given as ``transport=`` it becomes the client's engine, so the
  client keeps its hot path.
- ``WSGITransport`` (``_wsgi.py``) and ``ASGITransport`` (``_asgi.py``): call an app
  in-process.

``mounts={"pattern": transport}`` uses httpx's URL patterns (``URLPattern``).
"""

from __future__ import annotations

import time

from . import _core
from ._config import Limits, Timeout
from ._engine_options import engine_options_for
from ._exceptions import ConnectError, ConnectTimeout
from ._headers import _pairs
from ._models import Request, Response, _DetachedRaw, _response_from_raw
from ._urls import DEFAULT_PORTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator, Mapping
    from types import TracebackType
    from typing import Any, Self, TypeAlias, TypeVar

    from ._config import CertTypes, VerifyTypes
    from ._core import TimeoutTuple
    from ._proxy import ProxyTypes

    Handler: TypeAlias = "Callable[[Request], Response | Awaitable[Response]]"
    T = TypeVar("T")

__all__ = [
    "AsyncBaseTransport",
    "AsyncHTTPTransport",
    "BaseTransport",
    "HTTPTransport",
    "MockTransport",
    "Target",
    "URLPattern",
    "acall_with_connect_retries",
    "call_with_connect_retries",
    "detached_response",
    "extension_timeouts",
    "mount_table",
    "request_target",
]

# The mount patterns know no ``ftp`` default port.
_DEFAULT_PORTS = {scheme: DEFAULT_PORTS[scheme] for scheme in ("http", "https", "ws", "wss")}


class BaseTransport:
    """A synchronous transport: ``handle_request(request)`` returns the ``Response``."""

    def handle_request(self, request: Request) -> Response:
        raise NotImplementedError("the handle_request() method should be implemented")

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        self.close()


class AsyncBaseTransport:
    """An asyncio transport: ``await handle_async_request(request)`` returns the
    ``Response``."""

    async def handle_async_request(self, request: Request) -> Response:
        raise NotImplementedError("the handle_async_request() method should be implemented")

    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        await self.aclose()


class MockTransport(AsyncBaseTransport, BaseTransport):
    """Answers every request with ``handler(request)``: a ``Response``, or (under
    ``AsyncClient``) an awaitable of one. Nothing goes to the network."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def handle_request(self, request: Request) -> Response:
        request.read()
        response = self.handler(request)
        if not isinstance(response, Response):
            raise TypeError(
                "a MockTransport handler must return a Response under Client "
                f"(got {type(response).__name__}); use AsyncClient for an async handler"
            )
        return response

    async def handle_async_request(self, request: Request) -> Response:
        await request.aread()
        response = self.handler(request)
        if not isinstance(response, Response):
            response = await response
        return response


# -- the engine as a transport -----------------------------------------------------------------

RETRY_BACKOFF_FACTOR = 0.5
"""Seconds: the n-th retry of a failed connection waits ``0.5 * 2 ** (n - 2)`` (the first
none), as httpcore's ``retries=``."""


def _retry_delays(retries: int) -> Iterator[float]:
    """The waits before each connection retry of ``HTTPTransport(retries=n)``."""
    for attempt in range(retries):
        yield 0.0 if attempt == 0 else RETRY_BACKOFF_FACTOR * 2 ** (attempt - 1)


_CONNECT_FAILURES = (ConnectError, ConnectTimeout)
"""What ``retries=`` retries: failures to open a connection (nothing was sent yet)."""


_DEFAULT_TTUPLE = Timeout().as_tuple()
"""What a request without ``extensions["timeout"]`` waits at most (the client default)."""


def extension_timeouts(timeout: Mapping[str, float | None] | None) -> TimeoutTuple:
    """The engine's timeout tuple for httpx's ``extensions["timeout"]`` shape (``connect``,
    ``read``, ``write``, ``pool`` seconds; a missing key or ``None``: no deadline); no
    mapping at all means the client defaults."""
    if timeout is None:
        return _DEFAULT_TTUPLE
    get = timeout.get
    return (get("connect"), get("read"), get("write"), get("pool"), None)


def _ttuple(request: Request) -> TimeoutTuple:
    """The timeouts a request carries (``extensions["timeout"]``), else the defaults."""
    return extension_timeouts(request.extensions.get("timeout") or None)


def call_with_connect_retries(call: Callable[[], T], retries: int) -> T:
    """``call()``, retried ``retries`` times (``_retry_delays`` apart) while it fails to
    open a connection (``_CONNECT_FAILURES``: nothing was sent)."""
    delays = _retry_delays(retries)
    while True:
        try:
            return call()
        except _CONNECT_FAILURES:
            delay = next(delays, None)
            if delay is None:
                raise
            time.sleep(delay)


async def acall_with_connect_retries(call: Callable[[], Awaitable[T]], retries: int) -> T:
    """``call_with_connect_retries`` for a coroutine: the waits are ``asyncio.sleep``."""
    import asyncio

    delays = _retry_delays(retries)
    while True:
        try:
            return await call()
        except _CONNECT_FAILURES:
            delay = next(delays, None)
            if delay is None:
                raise
            await asyncio.sleep(delay)


class _EngineTransport:
    """What ``HTTPTransport`` and ``AsyncHTTPTransport`` share: the settings, turned into
    an engine of their own (the client's engine settings are not used for it)."""

    _engine: Any
    _new_engine: Callable[[_core.EngineOptions], Any]

    def __init__(
        self,
        verify: VerifyTypes = True,
        cert: CertTypes | None = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: Limits | None = None,
        proxy: ProxyTypes | None = None,
        uds: str | None = None,
        local_address: str | None = None,
        retries: int = 0,
    ) -> None:
        if not http1 and not http2:
            raise ValueError("at least one of http1 and http2 must be True")
        self._retries = int(retries)
        options = engine_options_for(
            Limits() if limits is None else limits,
            verify,
            cert,
            None,
            proxy,
            trust_env,
            http2,
            uds=uds,
            local_address=local_address,
        )
        self._engine = self._new_engine(options)

    @staticmethod
    def _arguments(request: Request) -> tuple[str, str, list[tuple[str, str]], Any, Any]:
        headers = request._headers._list if request._headers is not None else request._pairs
        body = request._body if request._body is not None else (request.content or None)
        return request.method, str(request.url), headers, body, _ttuple(request)


class HTTPTransport(_EngineTransport, BaseTransport):
    """The engine as a transport: a connection pool with these settings (httpx's
    ``HTTPTransport``). ``retries``: how many times to retry a connection that could
    not be opened (connect errors and timeouts only; nothing was sent)."""

    _new_engine = _core.Engine

    def handle_request(self, request: Request) -> Response:
        arguments = self._arguments(request)
        raw = call_with_connect_retries(lambda: self._engine.request(*arguments), self._retries)
        return _response_from_raw(raw, request)

    def close(self) -> None:
        self._engine.close()


class AsyncHTTPTransport(_EngineTransport, AsyncBaseTransport):
    """``HTTPTransport`` for ``AsyncClient`` (an ``AsyncEngine`` of its own)."""

    _new_engine = _core.AsyncEngine

    async def handle_async_request(self, request: Request) -> Response:
        arguments = self._arguments(request)
        raw = await acall_with_connect_retries(
            lambda: self._engine.request(*arguments), self._retries
        )
        return _response_from_raw(raw, request)

    async def aclose(self) -> None:
        self._engine.close()


# -- mounts ------------------------------------------------------------------------------------


def url_parts(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url`` as httpx's ``URL`` gives them: lower case, the
    port ``None`` when it is the scheme's default."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and _DEFAULT_PORTS.get(scheme) == port:
        port = None
    return scheme, (parts.hostname or "").lower(), port


class URLPattern:
    """A ``mounts`` key (httpx's rules): ``"all://"`` any URL, ``"http://"`` a scheme,
    ``"all://example.com"`` one host on any scheme, ``"all://*.example.com"`` its
    subdomains only, ``"all://*example.com"`` the host and its subdomains, and
    ``":port"`` after the host one port. The most specific matching pattern wins: one
    with a port first, then the longer host, then the longer scheme."""

    def __init__(self, pattern: str) -> None:
        if pattern and ":" not in pattern:
            raise ValueError(
                "mount keys are URL forms, not plain scheme strings: "
                f'instead of "{pattern}", use "{pattern}://"'
            )
        scheme, _, rest = pattern.partition("://")
        authority = rest.partition("/")[0]
        host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
        scheme = scheme.lower()
        self.pattern = pattern
        self.scheme = "" if scheme == "all" else scheme
        self.host = "" if host == "*" else host.lower()
        self.port: int | None = int(port) if port else None
        if self.port is not None and _DEFAULT_PORTS.get(self.scheme) == self.port:
            self.port = None
        import re

        if not self.host:
            self.host_regex = None
        elif self.host.startswith("*."):
            self.host_regex = re.compile(f"^.+\\.{re.escape(self.host[2:])}$")
        elif self.host.startswith("*"):
            self.host_regex = re.compile(f"^(.+\\.)?{re.escape(self.host[1:])}$")
        else:
            self.host_regex = re.compile(f"^{re.escape(self.host)}$")

    def matches(self, url: str) -> bool:
        scheme, host, port = url_parts(url)
        if self.scheme and self.scheme != scheme:
            return False
        if self.host_regex is not None and not self.host_regex.match(host):
            return False
        return self.port is None or self.port == port

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))

    def __lt__(self, other: URLPattern) -> bool:
        return self.priority < other.priority

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URLPattern) and self.pattern == other.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)


def mount_table(mounts: Mapping[str, Any] | None) -> list[tuple[URLPattern, Any]]:
    """``mounts`` as ``(pattern, transport)`` pairs, the most specific first."""
    if not mounts:
        return []
    return sorted(((URLPattern(key), value) for key, value in mounts.items()), key=lambda p: p[0])


def close_transports(transports: list[Any]) -> None:
    """Close a sync client's transports (``transport=`` and ``mounts=`` values)."""
    for transport in transports:
        transport.close()


class Target:
    """The parts of a request URL an in-process app is given (WSGI environ, ASGI scope)."""

    __slots__ = ("host", "netloc", "path", "port", "query", "raw_path", "scheme")

    def __init__(self, url: str) -> None:
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(str(url))
        self.scheme = parts.scheme.lower()
        self.host = parts.hostname or ""
        self.netloc = parts.netloc.rpartition("@")[2]
        try:
            port = parts.port
        except ValueError:
            port = None
        self.port = port if port is not None else _DEFAULT_PORTS.get(self.scheme, 80)
        raw_path = parts.path or "/"
        self.raw_path = raw_path.encode("ascii", "backslashreplace")
        self.path = unquote(raw_path)
        self.query = parts.query.encode("ascii", "backslashreplace")


def request_target(url: str) -> Target:
    """``url`` split for an in-process app."""
    return Target(url)


def detached_response(status: int, headers: Any, body: bytes) -> Response:
    """A ``Response`` with exactly the head an in-process app sent (no framing header
    added, unlike ``Response(content=...)``)."""
    return _response_from_raw(_DetachedRaw(status, _pairs(headers), body), None)
