"""urllib3's ``PoolManager`` (thread-safe)."""

from __future__ import annotations

from typing import Any

import urllib3  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter

_FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}


class Adapter(SyncAdapter):
    name = "urllib3"
    module = "urllib3"
    concurrency_note = "threads sharing one PoolManager (maxsize 32)"

    def __init__(self) -> None:
        self.pool = urllib3.PoolManager(maxsize=32, timeout=TIMEOUT, retries=False)
        self.ver = 0

    def get(self, url: str) -> Reply:
        r = self.pool.request("GET", url)
        self.ver = r.version
        return r.status, r.data

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.pool.request("POST", url, body=body, headers=_FORM_HEADERS)
        self.ver = r.version
        return r.status, r.data

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.pool.request("GET", url)
        self.ver = r.version
        return r.status, r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        r = self.pool.request("GET", url, preload_content=False)
        sizes = [len(chunk) for chunk in r.stream(65536)]
        r.release_conn()
        self.ver = r.version
        return r.status, sizes

    def version(self) -> str:
        return {10: "HTTP/1.0", 11: "HTTP/1.1", 20: "HTTP/2"}.get(self.ver, "?")

    def close(self) -> None:
        self.pool.clear()
