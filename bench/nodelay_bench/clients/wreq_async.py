"""wreq's asyncio ``Client``.

Written as wreq's README shows it: ``async with client.get(url) as response`` and
``await response.bytes()`` (a read-only ``memoryview``, copied to ``bytes`` for the lab's
checks), the form as ``form=``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import wreq  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, AsyncAdapter, Reply
from .wreq_ import version_text


class Adapter(AsyncAdapter):
    name = "wreq-async"
    module = "wreq"
    concurrency_note = "asyncio tasks sharing one Client"

    async def setup(self) -> None:
        self.client = wreq.Client(timeout=timedelta(seconds=TIMEOUT))
        self.ver: object = None

    async def get(self, url: str) -> Reply:
        async with self.client.get(url) as r:
            self.ver = r.version
            return r.status.as_int(), bytes(await r.bytes())

    async def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        async with self.client.post(url, form=form) as r:
            self.ver = r.version
            return r.status.as_int(), bytes(await r.bytes())

    async def get_json(self, url: str) -> tuple[int, Any]:
        async with self.client.get(url) as r:
            return r.status.as_int(), await r.json()

    async def stream(self, url: str) -> tuple[int, list[int]]:
        sizes: list[int] = []
        async with self.client.get(url) as r:
            async with r.stream() as chunks:
                async for chunk in chunks:
                    if isinstance(chunk, memoryview):  # not the trailers' HeaderMap
                        sizes.append(len(chunk))
            return r.status.as_int(), sizes

    def version(self) -> str:
        return version_text(self.ver)

    async def close(self) -> None:
        self.client.close()
