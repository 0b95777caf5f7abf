"""pyqwest's ``SyncClient`` (Rust, over reqwest).

Written as pyqwest's README and the docstrings of ``pyqwest/_pyqwest.pyi`` show it: a
``SyncHTTPTransport`` carries the settings (here the lab's timeout) and a ``SyncClient``
over it issues the requests; ``get`` returns a ``FullResponse`` whose ``status`` and
``content`` (bytes) the lab checks. pyqwest has no form API (a dict body is sent as JSON),
so the form goes as its urlencoded bytes with its Content-Type, as the docs say to send any
other body. A ``FullResponse`` does not carry the HTTP version; the streamed response does.
"""

from __future__ import annotations

from typing import Any

import pyqwest  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter

__all__ = ["FORM_HEADERS", "Adapter", "version_text"]

FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}
"""The header of workload e's body, which pyqwest sends as the bytes it is given."""


def version_text(version: object) -> str:
    """A ``pyqwest.HTTPVersion`` as ``HTTP/1.1`` ("?" for anything else)."""
    names = ((pyqwest.HTTPVersion.HTTP1, "HTTP/1.1"), (pyqwest.HTTPVersion.HTTP2, "HTTP/2"))
    return next((text for v, text in names if v == version), "?")  # HTTPVersion: no hash


class Adapter(SyncAdapter):
    name = "pyqwest"
    module = "pyqwest"
    concurrency_note = "threads sharing one SyncClient"

    def __init__(self) -> None:
        self.transport = pyqwest.SyncHTTPTransport(timeout=TIMEOUT)
        self.client = pyqwest.SyncClient(self.transport)
        self.ver = "?"

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        return r.status, r.content

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, headers=FORM_HEADERS, content=body)
        return r.status, r.content

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return r.status, r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        with self.client.stream("GET", url) as r:
            self.ver = version_text(r.http_version)
            sizes = [len(chunk) for chunk in r.content]
            return r.status, sizes

    def version(self) -> str:
        return self.ver

    def close(self) -> None:
        self.transport.close()
