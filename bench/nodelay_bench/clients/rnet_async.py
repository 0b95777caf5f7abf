"""rnet's asyncio ``Client``."""

from __future__ import annotations

from typing import Any

import rnet  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import AsyncAdapter, Reply
from .rnet_ import _version


class Adapter(AsyncAdapter):
    name = "rnet-async"
    module = "rnet"
    concurrency_note = "asyncio tasks sharing one Client"

    async def setup(self) -> None:
        self.client = rnet.Client()
        self.ver: object = None

    async def get(self, url: str) -> Reply:
        r = await self.client.get(url)
        self.ver = r.version
        return int(r.status), await r.bytes()

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = await self.client.post(url, form=list(form.items()))
        self.ver = r.version
        return int(r.status), await r.bytes()

    async def get_json(self, url: str) -> tuple[int, Any]:
        r = await self.client.get(url)
        return int(r.status), await r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        r = await self.client.get(url)
        sizes: list[int] = []
        async with r.stream() as chunks:
            async for chunk in chunks:
                sizes.append(len(chunk))
        return int(r.status), sizes

    def version(self) -> str:
        return _version(self.ver)
