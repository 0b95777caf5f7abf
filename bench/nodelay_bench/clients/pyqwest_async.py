"""pyqwest's asyncio ``Client``.

As ``pyqwest_.py``, with the README's ``await client.get(url)``: an ``HTTPTransport``
carries the lab's timeout (the async client has no per-request timeout, its docstring
says), the form goes as its urlencoded bytes.
"""

from __future__ import annotations

from typing import Any

import pyqwest  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, AsyncAdapter, Reply
from .pyqwest_ import FORM_HEADERS, version_text


class Adapter(AsyncAdapter):
    name = "pyqwest-async"
    module = "pyqwest"
    concurrency_note = "asyncio tasks sharing one Client"

    async def setup(self) -> None:
        self.transport = pyqwest.HTTPTransport(timeout=TIMEOUT)
        self.client = pyqwest.Client(self.transport)
        self.ver = "?"

    async def get(self, url: str) -> Reply:
        r = await self.client.get(url)
        return r.status, r.content

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = await self.client.post(url, headers=FORM_HEADERS, content=body)
        return r.status, r.content

    async def get_json(self, url: str) -> tuple[int, Any]:
        r = await self.client.get(url)
        return r.status, r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        async with self.client.stream("GET", url) as r:
            self.ver = version_text(r.http_version)
            sizes = [len(chunk) async for chunk in r.content]
            return r.status, sizes

    def version(self) -> str:
        return self.ver

    async def close(self) -> None:
        await self.transport.aclose()
