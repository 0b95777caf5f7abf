"""httpr's ``Client`` (Rust, httpx-like API)."""

from __future__ import annotations

from typing import Any, ClassVar

import httpr  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "httpr"
    module = "httpr"
    concurrency_note = "threads sharing one Client"
    unsupported: ClassVar[dict[str, str]] = {"stream": "adapter does not stream with httpr"}

    def __init__(self) -> None:
        self.client = httpr.Client(timeout=TIMEOUT)
        self.ver = "?"

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        self.ver = str(r.http_version)
        return r.status_code, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, data=form)
        self.ver = str(r.http_version)
        return r.status_code, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return r.status_code, r.json()

    def version(self) -> str:
        return self.ver

    def close(self) -> None:
        self.client.close()
