"""nodelay's ``AsyncClient``."""

from __future__ import annotations

from typing import Any

import nodelay
from nodelay import _core

from .base import TIMEOUT, AsyncAdapter, ConnectTime, Reply


class Adapter(AsyncAdapter):
    name = "nodelay-async"
    module = "nodelay"
    concurrency_note = "asyncio tasks sharing one AsyncClient"

    async def setup(self) -> None:
        # The default Limits: every connection the pool may open is kept alive (see
        # DEFAULT_MAX_KEEPALIVE in _config.py), as aiohttp and pyreqwest do by default.
        self.client = nodelay.AsyncClient(timeout=TIMEOUT)
        self.last: Any = None

    async def get(self, url: str) -> Reply:
        r = self.last = await self.client.get(url)
        return r.status_code, r.content

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.last = await self.client.post(url, data=form)
        return r.status_code, r.content

    async def get_json(self, url: str) -> tuple[int, Any]:
        r = self.last = await self.client.get(url)
        return r.status_code, r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        async with self.client.stream("GET", url) as r:
            sizes = [len(chunk) async for chunk in r.aiter_bytes()]
            return r.status_code, sizes

    @classmethod
    def start_connect_timing(cls) -> None:
        _core.record_connect_timings(True)

    def connect_time(self) -> ConnectTime | None:
        # The engine records the last connection opened in this process since the previous
        # call: after a request on a fresh client, that request's connection.
        timings = _core.take_connect_timings()
        if timings is None:
            return None
        dns, tcp, tls = timings
        return (dns or 0.0) + tcp, tls

    def version(self) -> str:
        return str(self.last.http_version) if self.last is not None else "?"

    async def close(self) -> None:
        await self.client.aclose()
