"""``http.client``: one HTTPConnection per adapter (not thread-safe: one per thread in f)."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from .base import TIMEOUT, Reply, SyncAdapter

_FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}


class Adapter(SyncAdapter):
    name = "http.client"
    module = "http.client"
    distribution = "python"
    thread_safe = False
    concurrency_note = "32 threads, one HTTPConnection each"

    def __init__(self) -> None:
        self.conn: http.client.HTTPConnection | None = None
        self.paths: dict[str, str] = {}
        self.ver = 0

    def _path(self, url: str) -> str:
        path = self.paths.get(url)
        if path is None:
            parts = urlsplit(url)
            if self.conn is None:
                self.conn = http.client.HTTPConnection(
                    parts.hostname or "127.0.0.1", parts.port, timeout=TIMEOUT
                )
            path = self.paths[url] = parts.path + (f"?{parts.query}" if parts.query else "")
        return path

    def _send(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        path = self._path(url)
        conn = self.conn
        assert conn is not None
        conn.request(method, path, body, headers)
        r = conn.getresponse()
        data = r.read()
        self.ver = r.version
        return r.status, data

    def get(self, url: str) -> Reply:
        return self._send("GET", url, None, {})

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        return self._send("POST", url, body, _FORM_HEADERS)

    def get_json(self, url: str) -> tuple[int, Any]:
        status, body = self.get(url)
        return status, json.loads(body)

    def stream(self, url: str) -> tuple[int, list[int]]:
        path = self._path(url)
        conn = self.conn
        assert conn is not None
        conn.request("GET", path)
        r = conn.getresponse()
        sizes: list[int] = []
        while chunk := r.read1(65536):
            sizes.append(len(chunk))
        r.read()  # at length 0 this releases the connection for the next request
        self.ver = r.version
        return r.status, sizes

    def version(self) -> str:
        return {10: "HTTP/1.0", 11: "HTTP/1.1"}.get(self.ver, "?")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
