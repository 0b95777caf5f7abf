"""The tiny interface every client adapter implements, in a sync and an async flavour.

An adapter owns one client object (a session, a pool, a connection) and answers
``get(url) -> (status, body)`` and ``post_form(url, form, body) -> (status, body)``.
Optional powers: ``get_json`` (the client's own JSON decoding), ``stream`` (chunk sizes
of a streamed body), ``run_concurrent`` (a client-native way to keep many requests in
flight, e.g. pycurl's CurlMulti), ``run_batch`` (a client's batch API, its own row) and,
for workload h, ``start_cookies`` / ``save_cookies`` (the client's own cookie store and
a Netscape cookies.txt file).
Anything an adapter lacks is reported as a skipped row with ``unsupported`` giving the
reason.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["TIMEOUT", "AsyncAdapter", "ConnectTime", "Reply", "SyncAdapter"]

Reply = tuple[int, bytes]
"""(status, whole body)."""

ConnectTime = tuple[float, float | None]
"""(TCP connect seconds, TLS handshake seconds or None)."""

TIMEOUT = 30.0
"""Seconds each adapter allows one request: a stuck server fails the row, never hangs."""


class _Common:
    name: ClassVar[str] = ""
    module: ClassVar[str] = ""
    """Import name probed before the run (find_spec, no import in the lab process)."""
    distribution: ClassVar[str] = ""
    """PyPI name whose version the results record (defaults to ``module``)."""
    flavour: ClassVar[str] = "sync"
    thread_safe: ClassVar[bool] = True
    """Sync only: may threads share one instance (workload f)? Else one per thread."""
    unsupported: ClassVar[dict[str, str]] = {}
    """Variant or feature ("json()", "stream", "concurrent") → why this client skips it."""
    concurrency_note: ClassVar[str] = ""
    """How the client keeps requests in flight for workload f (shown in the table)."""

    @classmethod
    def start_connect_timing(cls) -> None:
        """Rows that open a connection per request (j) call this once before the first
        request, where timing connections costs something to turn on."""

    def connect_time(self) -> ConnectTime | None:
        """``(tcp, tls)`` seconds of the connection this adapter's last request opened
        (``tls`` None for cleartext), or None when the client does not tell (most peers):
        the lab's connect and TLS columns, as ab's "Connection Times" table."""
        return None


class SyncAdapter(_Common):
    """A blocking client."""

    def get(self, url: str) -> Reply:
        raise NotImplementedError

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        """POST ``form`` urlencoded (``body`` is the same, pre-encoded, for clients
        without a form API); Content-Type application/x-www-form-urlencoded."""
        raise NotImplementedError

    def get_json(self, url: str) -> tuple[int, Any]:
        raise NotImplementedError

    def stream(self, url: str) -> tuple[int, list[int]]:
        """GET with a streamed body; returns the status and the size of every chunk."""
        raise NotImplementedError

    def version(self) -> str:
        """HTTP version of the last response, as "HTTP/1.1" ("?" if unknown)."""
        return "?"

    def close(self) -> None:
        pass

    def run_concurrent(self, url: str, n: int, concurrency: int) -> list[Reply] | None:
        """Client-native concurrency; None means "use threads sharing this adapter"."""
        return None

    def run_batch(self, url: str, n: int, concurrency: int) -> list[Reply]:
        """The "batch" row: ``n`` GETs through the client's own batch API."""
        raise NotImplementedError

    def start_cookies(self, cookie_file: str | None) -> None:
        """Workload h: keep the cookies responses set and send them back (the client's own
        store), starting from the Netscape cookies.txt ``cookie_file`` when given."""
        raise NotImplementedError

    def save_cookies(self, path: str) -> None:
        """Workload h: write the stored cookies to ``path`` in Netscape cookies.txt format."""
        raise NotImplementedError

    @classmethod
    def has_cookies(cls) -> bool:
        """Whether this adapter implements the cookie methods (else h is skipped)."""
        return cls.save_cookies is not SyncAdapter.save_cookies


class AsyncAdapter(_Common):
    """An asyncio client: ``setup`` runs inside the event loop before any request."""

    flavour: ClassVar[str] = "async"

    async def setup(self) -> None:
        pass

    async def get(self, url: str) -> Reply:
        raise NotImplementedError

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        raise NotImplementedError

    async def get_json(self, url: str) -> tuple[int, Any]:
        raise NotImplementedError

    async def stream(self, url: str) -> tuple[int, list[int]]:
        raise NotImplementedError

    def version(self) -> str:
        return "?"

    async def close(self) -> None:
        pass
