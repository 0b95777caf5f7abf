"""The two libraries the matrix runs every check under: nodelay and httpx (the oracle).

nodelay follows httpx's API, so a check calls ``client.get``, ``client.stream``,
``AsyncClient`` and the exception classes the same way under both. What differs lives
here: how a client is configured for an endpoint's protocol (HTTP/2 by ALPN, prior
knowledge, a CA file) and how many requests are sent at once (nodelay's ``get_many``; for
httpx an ``AsyncClient`` with ``asyncio.gather`` bounded by a semaphore, its documented
way to run requests concurrently).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator, Sequence
from typing import Any

from .servers.base import Endpoint

#: Timeout of every request of the matrix unless a check sets its own: long enough for a
#: 10 MiB upload to a slow Python server on a loaded machine, short enough that a hung
#: check ends.
REQUEST_TIMEOUT_S = 30.0

#: Requests in flight at once in a batch, for both libraries (nodelay's default).
BATCH_CONCURRENCY = 32


class Library:
    """One HTTP library as the checks see it."""

    name: str
    module: Any

    @property
    def ReadTimeout(self) -> type[BaseException]:
        return self.module.ReadTimeout  # type: ignore[no-any-return]

    def timeout(self, total: float = REQUEST_TIMEOUT_S, **phases: float) -> Any:
        return self.module.Timeout(total, **phases)

    def client(self, ep: Endpoint, **kwargs: Any) -> Any:
        """A sync client for ``ep`` (a context manager)."""
        raise NotImplementedError

    def async_client(self, ep: Endpoint, **kwargs: Any) -> Any:
        """An async client for ``ep`` (an async context manager)."""
        raise NotImplementedError

    def batcher(self, ep: Endpoint) -> contextlib.AbstractContextManager[Any]:
        """A context whose value has ``get_many(urls) -> list[response]`` on one client."""
        raise NotImplementedError


class Nodelay(Library):
    name = "nodelay"

    def __init__(self) -> None:
        import nodelay

        self.module = nodelay

    def _options(self, ep: Endpoint, kwargs: dict[str, Any]) -> dict[str, Any]:
        modes: dict[str, bool | str] = {"h2": True, "h2c": "prior_knowledge"}
        http2 = modes.get(ep.protocol, False)
        kwargs.setdefault("timeout", self.timeout())
        return {"verify": ep.verify, "http2": http2, **kwargs}

    def client(self, ep: Endpoint, **kwargs: Any) -> Any:
        return self.module.Client(**self._options(ep, kwargs))

    def async_client(self, ep: Endpoint, **kwargs: Any) -> Any:
        return self.module.AsyncClient(**self._options(ep, kwargs))

    @contextlib.contextmanager
    def batcher(self, ep: Endpoint) -> Iterator[Any]:
        with self.client(ep) as client:
            yield _NodelayBatch(client)


class _NodelayBatch:
    def __init__(self, client: Any) -> None:
        self.client = client

    def get_many(self, urls: Sequence[str]) -> list[Any]:
        return self.client.get_many(urls, concurrency=BATCH_CONCURRENCY)  # type: ignore[no-any-return]


class Httpx(Library):
    name = "httpx"

    def __init__(self) -> None:
        import httpx

        self.module = httpx

    def _options(self, ep: Endpoint, kwargs: dict[str, Any]) -> dict[str, Any]:
        verify: Any = ep.verify
        if isinstance(verify, str):  # a CA file: httpx 0.28 takes an SSLContext
            verify = ssl.create_default_context(cafile=verify)
        options: dict[str, Any] = {"verify": verify, "timeout": self.timeout()}
        if ep.protocol == "h2":
            options["http2"] = True
        elif ep.protocol == "h2c":  # httpx speaks HTTP/2 in clear only with prior knowledge
            options.update(http1=False, http2=True)
        return {**options, **kwargs}

    def client(self, ep: Endpoint, **kwargs: Any) -> Any:
        return self.module.Client(**self._options(ep, kwargs))

    def async_client(self, ep: Endpoint, **kwargs: Any) -> Any:
        return self.module.AsyncClient(**self._options(ep, kwargs))

    @contextlib.contextmanager
    def batcher(self, ep: Endpoint) -> Iterator[Any]:
        loop = asyncio.new_event_loop()
        client = self.async_client(ep)
        try:
            yield _HttpxBatch(loop, client)
        finally:
            loop.run_until_complete(client.aclose())
            loop.close()


class _HttpxBatch:
    """httpx's way of sending many requests: one AsyncClient, gather under a semaphore,
    on one event loop kept for the batcher's life (so connections are reused between
    batches, as nodelay's batch pool reuses them)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, client: Any) -> None:
        self.loop = loop
        self.client = client

    def get_many(self, urls: Sequence[str]) -> list[Any]:
        async def run() -> list[Any]:
            gate = asyncio.Semaphore(BATCH_CONCURRENCY)

            async def one(url: str) -> Any:
                async with gate:
                    return await self.client.get(url)

            return await asyncio.gather(*(one(u) for u in urls))

        return self.loop.run_until_complete(run())


def libraries(names: Sequence[str] = ("nodelay", "httpx")) -> list[Library]:
    known: dict[str, type[Library]] = {"nodelay": Nodelay, "httpx": Httpx}
    return [known[n]() for n in names]
