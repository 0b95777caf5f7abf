"""pyreqwest's asyncio ``Client``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pyreqwest.client import ClientBuilder  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, AsyncAdapter, Reply


class Adapter(AsyncAdapter):
    name = "pyreqwest-async"
    module = "pyreqwest"
    concurrency_note = "asyncio tasks sharing one Client"

    async def setup(self) -> None:
        self.client = ClientBuilder().timeout(timedelta(seconds=TIMEOUT)).build()
        self.ver = "?"

    async def get(self, url: str) -> Reply:
        r = await self.client.get(url).build().send()
        self.ver = r.version
        return r.status, bytes(await r.bytes())

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = await self.client.post(url).form(form).build().send()
        self.ver = r.version
        return r.status, bytes(await r.bytes())

    async def get_json(self, url: str) -> tuple[int, Any]:
        r = await self.client.get(url).build().send()
        return r.status, await r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        sizes: list[int] = []
        async with self.client.get(url).build_streamed() as r:
            reader = r.body_reader
            for _ in range(10_000_000):
                chunk = await reader.read_chunk()
                if chunk is None:
                    break
                sizes.append(len(chunk))
            return r.status, sizes

    def version(self) -> str:
        return self.ver

    async def close(self) -> None:
        await self.client.close()
