"""curl_cffi's ``requests.Session`` (one curl handle: one Session per thread in f)."""

from __future__ import annotations

from typing import Any

from curl_cffi import requests as cr  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "curl_cffi"
    module = "curl_cffi"
    thread_safe = False
    concurrency_note = "32 threads, one Session each"

    def __init__(self) -> None:
        self.session: Any = cr.Session(timeout=TIMEOUT)
        self.last: Any = None

    def get(self, url: str) -> Reply:
        r = self.last = self.session.get(url)
        return r.status_code, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.last = self.session.post(url, data=form)
        return r.status_code, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.last = self.session.get(url)
        return r.status_code, r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        r = self.session.get(url, stream=True)
        try:
            sizes = [len(chunk) for chunk in r.iter_content()]
        finally:
            r.close()
        return r.status_code, sizes

    def version(self) -> str:
        v = getattr(self.last, "http_version", None)
        return {1: "HTTP/1.0", 2: "HTTP/1.1", 3: "HTTP/2"}.get(int(v or 0), "?")

    def close(self) -> None:
        self.session.close()
