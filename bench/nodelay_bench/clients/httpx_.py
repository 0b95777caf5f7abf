"""httpx's ``Client`` (HTTP/1.1)."""

from __future__ import annotations

from typing import Any

import httpx  # type: ignore[import-untyped,import-not-found,unused-ignore]

from ._cookiefile import load_cookie_file, save_cookie_file
from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "httpx"
    module = "httpx"
    concurrency_note = "threads sharing one Client"

    def __init__(self) -> None:
        self.client = httpx.Client(timeout=TIMEOUT, limits=httpx.Limits(max_connections=64))
        self.ver = "?"

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        self.ver = r.http_version
        return r.status_code, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, data=form)
        self.ver = r.http_version
        return r.status_code, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return r.status_code, r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        with self.client.stream("GET", url) as r:
            sizes = [len(chunk) for chunk in r.iter_raw()]
            self.ver = r.http_version
            return r.status_code, sizes

    def start_cookies(self, cookie_file: str | None) -> None:
        if cookie_file is not None:
            self.client.cookies = load_cookie_file(cookie_file)

    def save_cookies(self, path: str) -> None:
        save_cookie_file(self.client.cookies.jar, path)

    def version(self) -> str:
        return self.ver

    def close(self) -> None:
        self.client.close()
