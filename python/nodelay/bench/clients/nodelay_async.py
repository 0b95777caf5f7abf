"""nodelay's ``AsyncClient``, once it exists; until then the row is skipped."""

from __future__ import annotations

from typing import Any, ClassVar

import nodelay

from .base import TIMEOUT, AsyncAdapter, Reply


class Adapter(AsyncAdapter):
    name = "nodelay-async"
    module = "nodelay"
    concurrency_note = "asyncio tasks sharing one AsyncClient"
    unsupported: ClassVar[dict[str, str]] = (
        {"stream": "nodelay has no streaming API yet"}
        if hasattr(nodelay, "AsyncClient")
        else {"*": "nodelay.AsyncClient is not implemented yet"}
    )

    async def setup(self) -> None:
        cls: Any = nodelay.AsyncClient  # type: ignore[attr-defined,unused-ignore]
        self.client = cls(timeout=TIMEOUT)
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

    def version(self) -> str:
        return str(self.last.http_version) if self.last is not None else "?"

    async def close(self) -> None:
        await self.client.aclose()
