"""nodelay's ``Client`` (threads share one Client for workload f)."""

from __future__ import annotations

from typing import Any

import nodelay
from nodelay import _core

from .base import TIMEOUT, ConnectTime, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "nodelay"
    module = "nodelay"
    concurrency_note = "threads sharing one Client"

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

    def stream(self, url: str) -> tuple[int, list[int]]:
        with self.client.stream("GET", url) as r:
            self.last = r
            return r.status_code, [len(chunk) for chunk in r.iter_bytes()]

    def run_batch(self, url: str, n: int, concurrency: int) -> list[Reply]:
        responses = self.client.get_many([url] * n, concurrency=concurrency)
        if responses:
            self.last = responses[-1]
        return [(r.status_code, r.content) for r in responses]

    def start_cookies(self, cookie_file: str | None) -> None:
        # A Client keeps cookies in its own jar; a saved file becomes the jar of a new one.
        if cookie_file is not None:
            self.client.close()
            self.client = nodelay.Client(
                timeout=TIMEOUT, cookies=nodelay.CookieJar.load(cookie_file)
            )

    def save_cookies(self, path: str) -> None:
        self.client.cookies.save(path)

    @classmethod
    def start_connect_timing(cls) -> None:
        _core.record_connect_timings(True)

    def connect_time(self) -> ConnectTime | None:
        # The engine records the last connection opened in this process since the previous
        # call: after a request on a fresh client, that request's connection.
        timings = _core.take_connect_timings()
        if timings is None:
            return None
        dns, tcp, tls = timings
        return (dns or 0.0) + tcp, tls

    def version(self) -> str:
        return self.last.http_version if self.last is not None else "?"

    def close(self) -> None:
        self.client.close()
