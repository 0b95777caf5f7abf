"""nodelay's ``AsyncClient``."""

from __future__ import annotations

from typing import Any

import nodelay

from .base import TIMEOUT, AsyncAdapter, Reply


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

    def version(self) -> str:
        return str(self.last.http_version) if self.last is not None else "?"

    async def close(self) -> None:
        await self.client.aclose()
