"""primp's ``Client`` (Rust)."""

from __future__ import annotations

from typing import Any, ClassVar

import primp  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "primp"
    module = "primp"
    concurrency_note = "threads sharing one Client"
    unsupported: ClassVar[dict[str, str]] = {"stream": "adapter does not stream with primp"}

    def __init__(self) -> None:
        self.client = primp.Client(timeout=TIMEOUT)

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        return r.status_code, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, data=form)
        return r.status_code, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return r.status_code, r.json()

    def version(self) -> str:
        return "?"
