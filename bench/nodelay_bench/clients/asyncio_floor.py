"""The asyncio floor: the least a request can cost on asyncio's own event loop.

A reference row, not a peer (``results.REFERENCES``): one keep-alive connection per
origin driven by an ``asyncio.Protocol``, each request written with one
``transport.write`` and its answer taken from ``data_received`` once the head and
``Content-Length`` bytes are in; no headers object, no decoding, no timer per request
(the runner's ``WORKER_TIMEOUT`` bounds a stuck server). What is left per request is the
event loop's own work (a future, a wake-up, a callback), which every asyncio client
pays, so it bounds what an asyncio client's CPU per request can reach beside a blocking
client's (docs/performance.md, "Ceilings").
It reads only Content-Length framed answers (the lab's servers send them for a, b, c
and e) and fails a row that gets anything else.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar, cast
from urllib.parse import urlsplit

from .base import AsyncAdapter, Reply

HEAD_END = b"\r\n\r\n"
CONTENT_LENGTH = b"\r\ncontent-length:"
"""Searched in the lowered head, from a line start (so X-Content-Length is not it)."""
MAX_HEAD_BYTES = 64 * 1024
"""A head longer than this is not one of the lab's answers: the row fails."""


class FramingError(Exception):
    """An answer this reference row does not read (no Content-Length, a long head)."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection: ``exchange`` writes a request and waits for its answer."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[Reply] | None = None
        self.transport: asyncio.Transport | None = None
        self.open = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, though uvloop's do not subclass asyncio.Transport.
        self.transport, self.open = cast(asyncio.Transport, transport), True

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None or self.waiter.done():
            return
        try:
            reply = self._take_reply()
        except FramingError as exc:
            self.waiter.set_exception(exc)
            return
        if reply is not None:
            self.waiter.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError(f"connection closed: {exc}"))

    def _take_reply(self) -> Reply | None:
        end = self.buffer.find(HEAD_END)
        if end < 0:
            if len(self.buffer) > MAX_HEAD_BYTES:
                raise FramingError("no end of head in the first 64 KiB")
            return None
        head = bytes(self.buffer[:end]).lower()
        at = head.find(CONTENT_LENGTH)
        if at < 0:
            raise FramingError("an answer without Content-Length")
        value = at + len(CONTENT_LENGTH)
        line_end = head.find(b"\r\n", value)  # -1: the head's last line
        length = int(head[value : line_end if line_end >= 0 else None])
        start = end + len(HEAD_END)
        if len(self.buffer) < start + length:
            return None
        status = int(head[9:12])
        body = bytes(self.buffer[start : start + length])
        del self.buffer[: start + length]
        return status, body

    async def exchange(self, request: bytes) -> Reply:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        # No timer per request (a timer is work the floor does not do): the runner's
        # WORKER_TIMEOUT ends a worker whose server stopped answering.
        return await self.waiter


class Adapter(AsyncAdapter):
    name = "asyncio-floor"
    module = "asyncio"
    distribution = "python"
    concurrency_note = "one connection"
    unsupported: ClassVar[dict[str, str]] = {
        "concurrent": "a reference row of one request at a time",
        "stream": "a reference row reads whole Content-Length answers",
    }

    async def setup(self) -> None:
        self.connections: dict[tuple[str, int], _Connection] = {}
        self.targets: dict[str, tuple[tuple[str, int], bytes]] = {}

    def _target(self, url: str) -> tuple[tuple[str, int], bytes]:
        known = self.targets.get(url)
        if known is None:
            parts = urlsplit(url)
            if parts.scheme != "http" or parts.hostname is None:
                raise ValueError(f"asyncio-floor reads plain http:// URLs, not {url}")
            origin = (parts.hostname, parts.port or 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            prefix = f"{path} HTTP/1.1\r\nHost: {parts.netloc}\r\n".encode("ascii")
            known = self.targets[url] = (origin, prefix)
        return known

    async def _connection(self, origin: tuple[str, int]) -> _Connection:
        conn = self.connections.get(origin)
        if conn is None or not conn.open:
            loop = asyncio.get_running_loop()
            _, conn = await loop.create_connection(_Connection, *origin)
            self.connections[origin] = conn
        return conn

    async def get(self, url: str) -> Reply:
        origin, prefix = self._target(url)
        conn = await self._connection(origin)
        return await conn.exchange(b"GET " + prefix + b"\r\n")

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        origin, prefix = self._target(url)
        conn = await self._connection(origin)
        head = b"POST " + prefix + b"Content-Type: application/x-www-form-urlencoded\r\n"
        return await conn.exchange(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def version(self) -> str:
        return "HTTP/1.1"

    async def close(self) -> None:
        for conn in self.connections.values():
            if conn.transport is not None:
                conn.transport.close()
