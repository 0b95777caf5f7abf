"""zapros's ``AsyncClient`` (pure Python over asyncio and h11), written as ``zapros_.py``
with the docs' async forms: ``await client.get(url)``, ``await response.aread()``,
``async with client.stream(...)`` and ``async_iter_bytes()``."""

from __future__ import annotations

from typing import Any

import zapros  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, AsyncAdapter, Reply
from .zapros_ import STREAM_PIECE


class Adapter(AsyncAdapter):
    name = "zapros-async"
    module = "zapros"
    concurrency_note = "asyncio tasks sharing one AsyncClient"

    async def setup(self) -> None:
        handler = zapros.AsyncStdNetworkHandler(total_timeout=TIMEOUT, read_timeout=TIMEOUT)
        self.client = zapros.AsyncClient(handler=handler)

    async def get(self, url: str) -> Reply:
        r = await self.client.get(url)
        return r.status, await r.aread()

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = await self.client.post(url, form=form)
        return r.status, await r.aread()

    async def get_json(self, url: str) -> tuple[int, Any]:
        r = await self.client.get(url)
        return r.status, r.json

    async def stream(self, url: str) -> tuple[int, list[int]]:
        async with self.client.stream("GET", url) as r:
            sizes = [len(chunk) async for chunk in r.async_iter_bytes(chunk_size=STREAM_PIECE)]
            return r.status, sizes

    async def close(self) -> None:
        await self.client.aclose()
