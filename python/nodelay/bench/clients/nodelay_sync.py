"""nodelay's ``Client`` (threads share one Client for workload f)."""

from __future__ import annotations

from typing import Any, ClassVar

import nodelay

from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "nodelay"
    module = "nodelay"
    concurrency_note = "threads sharing one Client"
    unsupported: ClassVar[dict[str, str]] = {
        "stream": "nodelay has no streaming API yet (client.stream arrives later)"
    }

    def __init__(self) -> None:
        self.client = nodelay.Client(timeout=TIMEOUT)
        self.last: nodelay.Response | None = None

    def get(self, url: str) -> Reply:
        r = self.last = self.client.get(url)
        return r.status_code, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.last = self.client.post(url, data=form)
        return r.status_code, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.last = self.client.get(url)
        return r.status_code, r.json()

    def version(self) -> str:
        return self.last.http_version if self.last is not None else "?"

    def close(self) -> None:
        self.client.close()
