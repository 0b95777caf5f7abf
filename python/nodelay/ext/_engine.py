"""The engine-facing half every bridge (``nodelay.ext.*``) shares, free of any library's types.

A bridge turns its library's request into plain values (method, absolute URL, header
pairs, a body, a timeout tuple), sends them with ``open_stream`` / ``aopen_stream``, reads
the body with ``read_pieces`` (raw: the library decodes content codings itself; an async
bridge reads ``READ_MAX_BYTES`` pieces the same way) and, when the engine raises, looks
the nodelay exception up in its own table with ``mapped_error``. The engine sends exactly
what it is given: no cookies, no redirects, no default headers but ``Host`` and the
body's framing when they are missing.
"""

from __future__ import annotations

import os

from .. import _core
from .._config import (
    DEFAULT_KEEPALIVE_EXPIRY,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_KEEPALIVE,
    Limits,
)
from .._engine_options import engine_options_for
from .._exceptions import RequestError
from .._transports import (
    _CONNECT_FAILURES,
    acall_with_connect_retries,
    call_with_connect_retries,
    extension_timeouts,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from asyncio import AbstractEventLoop
    from collections.abc import AsyncIterable, Iterable, Iterator, Mapping
    from typing import Any, TypeAlias

    from .._core import TimeoutTuple

    Body: TypeAlias = "bytes | _core.Upload | None"
    """A request body as the engine takes it."""

__all__ = [
    "CONNECT_FAILURES",
    "ENGINE_ERRORS",
    "READ_MAX_BYTES",
    "READ_MIN_BYTES",
    "AsyncBody",
    "aopen_stream",
    "engine_options",
    "extension_timeouts",
    "header_pairs",
    "mapped_error",
    "open_stream",
    "read_pieces",
    "stream_body",
]

ENGINE_ERRORS = (RequestError,)
"""What the engine raises for a failed exchange (the root of nodelay's transport errors);
anything else (``KeyboardInterrupt``, an upload iterator's own exception) passes as is."""

CONNECT_FAILURES = _CONNECT_FAILURES
"""What connection retries (``retries=``) retry: failures before anything was sent (the
same classes as ``HTTPTransport(retries=)``)."""

READ_MAX_BYTES = 256 * 1024
"""Bytes at most per piece of a streamed response body: the engine's read buffer size."""

READ_MIN_BYTES = 64 * 1024
"""A piece grows towards this many bytes only with bytes that already arrived (it never
waits for them), so a slow stream (server-sent events) yields each event as it comes."""


def engine_options(
    *,
    verify: Any = True,
    cert: Any = None,
    trust_env: bool = True,
    http1: bool = True,
    http2: bool = False,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    max_keepalive: int | None = DEFAULT_MAX_KEEPALIVE,
    keepalive_expiry: float | None = DEFAULT_KEEPALIVE_EXPIRY,
    proxy: str | None = None,
    uds: str | None = None,
    local_address: str | None = None,
) -> _core.EngineOptions:
    """The engine settings for a transport's arguments (those of httpx's ``HTTPTransport``
    and requests' ``HTTPAdapter``, as plain values).

    ``verify``: bool, CA bundle path or ``ssl.SSLContext``; ``cert``: a PEM path or a
    (certificate, key) pair. ``trust_env``: with ``verify=True``, ``SSL_CERT_FILE`` names
    the CA bundle (httpx's rule); proxies are never read from the environment here (the
    library's client routes them, and gives a transport its ``proxy``). ``http2`` without
    ``http1`` speaks h2 by prior knowledge on http URLs too, as httpcore does.
    """
    if not http1 and not http2:
        raise ValueError("at least one of http1 and http2 must be True")
    if verify is True and trust_env and os.environ.get("SSL_CERT_FILE"):
        verify = os.environ["SSL_CERT_FILE"]
    return engine_options_for(
        Limits(max_connections, max_keepalive, keepalive_expiry),
        verify,
        cert,
        None,
        proxy,
        False,
        "prior_knowledge" if not http1 else http2,
        uds=uds,
        local_address=local_address,
    )


def header_pairs(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """Header fields as raw bytes pairs, in the engine's form (Latin-1 text, as sent)."""
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]


def stream_body(content: bytes | Iterable[bytes] | None) -> Body:
    """A request body for the engine: bytes as they are (sent with the head when small),
    an iterable of bytes as an upload the engine pulls piece by piece with the GIL
    released (``Content-Length`` framing when the headers give one, else chunked)."""
    if content is None or type(content) is bytes:
        return content
    if isinstance(content, (bytearray, memoryview)):
        return bytes(content)
    return _core.Upload([content])


class AsyncBody:
    """An async iterable request body as an upload: the engine pulls it from its own
    threads, each piece awaited on ``loop`` (``nodelay._async_client._AsyncPieces``).
    ``close()`` once the exchange is over releases a pull still waiting."""

    __slots__ = ("_pieces", "upload")

    def __init__(self, content: AsyncIterable[bytes], loop: AbstractEventLoop) -> None:
        from .._async_client import _AsyncPieces

        self._pieces = _AsyncPieces(content, loop)
        self.upload = _core.Upload([self._pieces])

    def close(self) -> None:
        self._pieces.close()


def open_stream(
    engine: _core.Engine,
    method: str,
    url: str,
    headers: list[tuple[str, str]],
    body: Body,
    timeout: TimeoutTuple,
    retries: int = 0,
) -> _core.RawStream:
    """Send a request and return once the response head arrived (the GIL released while
    the engine works). A connection that could not be opened is retried ``retries`` times
    with httpcore's backoff; every other failure raises the engine's exception."""
    if not retries:
        return engine.open(method, url, headers, body, timeout)
    return call_with_connect_retries(
        lambda: engine.open(method, url, headers, body, timeout), retries
    )


async def aopen_stream(
    engine: _core.AsyncEngine,
    method: str,
    url: str,
    headers: list[tuple[str, str]],
    body: Body,
    timeout: TimeoutTuple,
    retries: int = 0,
) -> _core.AsyncRawStream:
    """``open_stream`` on the asyncio engine (awaited without the GIL)."""
    if not retries:
        return await engine.open(method, url, headers, body, timeout)
    return await acall_with_connect_retries(
        lambda: engine.open(method, url, headers, body, timeout), retries
    )


def read_pieces(stream: _core.RawStream) -> Iterator[bytes]:
    """The body of ``stream`` as it arrives, content codings kept (the caller decodes);
    each read waits without the GIL. The stream is closed when the iterator ends or is
    closed early (a body not read to its end closes its connection)."""
    try:
        while piece := stream.read(READ_MAX_BYTES, READ_MIN_BYTES, False):
            yield piece
            if stream.is_closed:  # the last piece ended the body: no read left
                return
    finally:
        stream.close()


def mapped_error(error: BaseException, table: Mapping[type[BaseException], Any]) -> Any:
    """The value ``table`` gives for the most specific class of ``error`` it names (its
    classes are nodelay's: a bridge maps ``ReadTimeout`` to its library's, ``TLSError``
    falls back to ``ConnectError``'s entry), or ``None`` when it names none."""
    for cls in type(error).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    return None
