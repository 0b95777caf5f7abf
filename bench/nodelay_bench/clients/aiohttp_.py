"""aiohttp's ``ClientSession``."""

from __future__ import annotations

from typing import Any

import aiohttp  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, AsyncAdapter, Reply


def _version(v: Any) -> str:
    return "?" if v is None else f"HTTP/{v.major}.{v.minor}"


class Adapter(AsyncAdapter):
    name = "aiohttp"
    module = "aiohttp"
    concurrency_note = "asyncio tasks sharing one ClientSession"

    async def setup(self) -> None:
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT))
        self.ver = "?"

    async def get(self, url: str) -> Reply:
        async with self.session.get(url) as r:
            body = await r.read()
            self.ver = _version(r.version)
            return r.status, body

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        async with self.session.post(url, data=form) as r:
            data = await r.read()
            self.ver = _version(r.version)
            return r.status, data

    async def get_json(self, url: str) -> tuple[int, Any]:
        async with self.session.get(url) as r:
            return r.status, await r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        async with self.session.get(url) as r:
            sizes = [len(chunk) async for chunk in r.content.iter_any()]
            return r.status, sizes

    def version(self) -> str:
        return self.ver

    async def close(self) -> None:
        await self.session.close()
