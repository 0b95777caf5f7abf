"""httpx's and httpx2's clients over each transport (workload k, and a and b beside it):
their own (httpcore), nodelay's (``nodelay.ext.httpx`` / ``nodelay.ext.httpx2``),
httpx-aiohttp's (async only) and a ceiling, a transport that answers at once with no I/O
(what the library itself costs per request).

Every row uses its library's client with the settings of the lab's httpx rows
(``httpx_.py``: at most ``MAX_CONNECTIONS`` connections, the lab's timeout), so only the
transport differs.
``ADAPTERS`` maps each row name to its adapter class, ``ROWS`` each row name to the
module the lab probes before running it (no client library is imported here).
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import TIMEOUT, AsyncAdapter, Reply, SyncAdapter

__all__ = ["ADAPTERS", "ROWS"]

MAX_CONNECTIONS = 64
"""Connections per client: what the lab's httpx rows allow (``httpx_.py``), for every
transport here."""

TRANSPORTS = ("own", "nodelay", "aiohttp", "ceiling")


def row_name(library: str, flavour: str, transport: str) -> str:
    """``httpx2-async`` (own transport), ``nodelay-under-httpx2-async``,
    ``aiohttp-under-httpx2-async``, ``ceiling-httpx2-async``: nodelay's rows start with
    ``nodelay`` (the lab's rule for its own rows)."""
    base = library if flavour == "sync" else f"{library}-async"
    if transport == "own":
        return base
    if transport == "ceiling":
        return f"ceiling-{base}"
    return f"{transport}-under-{base}"


def _client_factory(library: str, flavour: str, transport: str) -> Any:
    """A function making the row's client (imports happen in the worker only)."""
    asynchronous = flavour == "async"

    def make() -> Any:
        lib = importlib.import_module(library)
        settings = {"timeout": TIMEOUT, "limits": lib.Limits(max_connections=MAX_CONNECTIONS)}
        client_name = "AsyncClient" if asynchronous else "Client"
        if transport == "own":
            return getattr(lib, client_name)(**settings)
        if transport == "nodelay":
            ext = importlib.import_module(f"nodelay.ext.{library}")
            return getattr(ext, client_name)(**settings)
        if transport == "aiohttp":
            if library == "httpx2":
                from httpx_aiohttp.httpx2 import Httpx2AiohttpClient

                return Httpx2AiohttpClient(**settings)
            from httpx_aiohttp import HttpxAiohttpClient

            return HttpxAiohttpClient(**settings)
        return getattr(lib, client_name)(transport=_ceiling(lib, asynchronous), **settings)

    return make


def _ceiling(lib: Any, asynchronous: bool) -> Any:
    """A transport of ``lib`` answering every request at once, with no I/O: the first
    request for a URL (in the warm-up) is fetched from the server once with urllib, and
    every later one gets that answer from memory (status, headers, body), so the rows' checks
    (length, JSON key) hold and the timed requests cost only the library."""
    answers: dict[str, tuple[int, list[tuple[str, str]], bytes]] = {}

    def answer(request: Any) -> Any:
        url = str(request.url)
        if url not in answers:
            import urllib.request

            with urllib.request.urlopen(url, timeout=TIMEOUT) as reply:
                body = reply.read()
                answers[url] = (reply.status, [("Content-Length", str(len(body)))], body)
        status, headers, body = answers[url]
        return lib.Response(status, headers=headers, content=body)

    if asynchronous:

        class AsyncCeiling(lib.AsyncBaseTransport):  # type: ignore[misc]  # a base class of the library given
            async def handle_async_request(self, request: Any) -> Any:
                return answer(request)

        return AsyncCeiling()

    class Ceiling(lib.BaseTransport):  # type: ignore[misc]  # a base class of the library given
        def handle_request(self, request: Any) -> Any:
            return answer(request)

    return Ceiling()


def _note(transport: str, flavour: str) -> str:
    how = "threads sharing one Client" if flavour == "sync" else "asyncio tasks, one AsyncClient"
    over = {
        "own": "its own transport (httpcore)",
        "nodelay": "nodelay's transport",
        "aiohttp": "httpx-aiohttp's transport",
        "ceiling": "a transport answering at once, no I/O",
    }[transport]
    return f"{how}, over {over}"


def _sync_adapter(library: str, transport: str) -> type[SyncAdapter]:
    make = _client_factory(library, "sync", transport)

    class Adapter(SyncAdapter):
        name = row_name(library, "sync", transport)
        module = library
        concurrency_note = _note(transport, "sync")

        def __init__(self) -> None:
            self.client = make()
            self.ver = "?"

        def get(self, url: str) -> Reply:
            r = self.client.get(url)
            self.ver = r.http_version
            return r.status_code, r.content

        def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
            r = self.client.post(url, data=form)
            return r.status_code, r.content

        def get_json(self, url: str) -> tuple[int, Any]:
            r = self.client.get(url)
            return r.status_code, r.json()

        def version(self) -> str:
            return self.ver

        def close(self) -> None:
            self.client.close()

    return Adapter


def _async_adapter(library: str, transport: str) -> type[AsyncAdapter]:
    make = _client_factory(library, "async", transport)

    class Adapter(AsyncAdapter):
        name = row_name(library, "async", transport)
        module = "httpx_aiohttp" if transport == "aiohttp" else library
        distribution = "httpx-aiohttp" if transport == "aiohttp" else ""
        concurrency_note = _note(transport, "async")

        async def setup(self) -> None:
            self.client = make()
            self.ver = "?"

        async def get(self, url: str) -> Reply:
            r = await self.client.get(url)
            self.ver = r.http_version
            return r.status_code, r.content

        async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
            r = await self.client.post(url, data=form)
            return r.status_code, r.content

        async def get_json(self, url: str) -> tuple[int, Any]:
            r = await self.client.get(url)
            return r.status_code, r.json()

        def version(self) -> str:
            return self.ver

        async def close(self) -> None:
            await self.client.aclose()

    return Adapter


def _rows() -> dict[str, type[SyncAdapter] | type[AsyncAdapter]]:
    rows: dict[str, type[SyncAdapter] | type[AsyncAdapter]] = {}
    for library in ("httpx2", "httpx"):
        for transport in TRANSPORTS:
            adapter = _async_adapter(library, transport)
            rows[adapter.name] = adapter
            if transport != "aiohttp":  # httpx-aiohttp is an async transport
                sync = _sync_adapter(library, transport)
                rows[sync.name] = sync
    return rows


ADAPTERS = _rows()
"""Row name → adapter class. The own-transport rows of httpx (``httpx``, ``httpx-async``)
have adapters of their own (``httpx_.py``, ``httpx_async.py``) and are not repeated here."""
for _existing in ("httpx", "httpx-async"):
    del ADAPTERS[_existing]

ROWS = {name: adapter.module for name, adapter in ADAPTERS.items()}

WORKLOADS = frozenset({"a", "b", "k"})
"""What these rows run: the fan-out (k) and the sequential GETs beside it (a, b)."""
