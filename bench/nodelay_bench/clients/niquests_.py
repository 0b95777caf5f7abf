"""niquests' ``Session`` (HTTP/1.1 here: the server is cleartext)."""

from __future__ import annotations

from typing import Any

import niquests  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "niquests"
    module = "niquests"
    concurrency_note = "threads sharing one Session (pool 32)"

    def __init__(self) -> None:
        self.session = niquests.Session(pool_maxsize=32)
        self.last: Any = None

    def get(self, url: str) -> Reply:
        r = self.last = self.session.get(url, timeout=TIMEOUT)
        return int(r.status_code or 0), r.content or b""

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.last = self.session.post(url, data=form, timeout=TIMEOUT)
        return int(r.status_code or 0), r.content or b""

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.last = self.session.get(url, timeout=TIMEOUT)
        return int(r.status_code or 0), r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        r = self.session.get(url, stream=True, timeout=TIMEOUT)
        sizes = [len(chunk) for chunk in r.iter_content(65536)]
        r.close()
        return int(r.status_code or 0), sizes

    def version(self) -> str:
        v = getattr(getattr(self.last, "raw", None), "version", 0)
        return {10: "HTTP/1.0", 11: "HTTP/1.1", 20: "HTTP/2", 30: "HTTP/3"}.get(v, "?")

    def close(self) -> None:
        self.session.close()
