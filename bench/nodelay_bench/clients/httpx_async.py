"""httpx's ``AsyncClient`` (HTTP/1.1)."""

from __future__ import annotations

from typing import Any

import httpx  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, AsyncAdapter, Reply


class Adapter(AsyncAdapter):
    name = "httpx-async"
    module = "httpx"
    concurrency_note = "asyncio tasks sharing one AsyncClient"

    async def setup(self) -> None:
        self.client = httpx.AsyncClient(timeout=TIMEOUT, limits=httpx.Limits(max_connections=64))
        self.ver = "?"

    async def get(self, url: str) -> Reply:
        r = await self.client.get(url)
        self.ver = r.http_version
        return r.status_code, r.content

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = await self.client.post(url, data=form)
        self.ver = r.http_version
        return r.status_code, r.content

    async def get_json(self, url: str) -> tuple[int, Any]:
        r = await self.client.get(url)
        return r.status_code, r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        async with self.client.stream("GET", url) as r:
            sizes = [len(chunk) async for chunk in r.aiter_raw()]
            self.ver = r.http_version
            return r.status_code, sizes

    def version(self) -> str:
        return self.ver

    async def close(self) -> None:
        await self.client.aclose()
