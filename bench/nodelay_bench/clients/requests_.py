"""requests' ``Session``."""

from __future__ import annotations

from typing import Any

import requests  # type: ignore[import-untyped,import-not-found,unused-ignore]
import requests.adapters  # type: ignore[import-untyped,import-not-found,unused-ignore]

from ._cookiefile import load_cookie_file, save_cookie_file
from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "requests"
    module = "requests"
    concurrency_note = "threads sharing one Session (pool 32)"

    def __init__(self) -> None:
        self.session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(pool_maxsize=32)
        self.session.mount("http://", adapter)
        self.ver = 0

    def get(self, url: str) -> Reply:
        r = self.session.get(url, timeout=TIMEOUT)
        self.ver = r.raw.version
        return r.status_code, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.session.post(url, data=form, timeout=TIMEOUT)
        self.ver = r.raw.version
        return r.status_code, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.session.get(url, timeout=TIMEOUT)
        return r.status_code, r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        with self.session.get(url, stream=True, timeout=TIMEOUT) as r:
            sizes = [len(chunk) for chunk in r.iter_content(65536)]
            self.ver = r.raw.version
            return r.status_code, sizes

    def start_cookies(self, cookie_file: str | None) -> None:
        if cookie_file is not None:
            self.session.cookies.update(load_cookie_file(cookie_file))

    def save_cookies(self, path: str) -> None:
        # requests types its jar as a mapping of names; iterating it gives Cookie objects.
        save_cookie_file(self.session.cookies, path)  # type: ignore[arg-type]

    def version(self) -> str:
        return {10: "HTTP/1.0", 11: "HTTP/1.1"}.get(self.ver, "?")

    def close(self) -> None:
        self.session.close()
