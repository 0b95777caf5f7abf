"""wreq's blocking ``Client`` (Rust, over the wreq crate; rnet's successor).

Written as wreq's README and the docstrings of ``wreq/blocking.py`` show a user writing it:
``wreq.blocking.Client(timeout=...)``, ``client.get(url)``, ``client.post(url, form=...)``,
the status in ``response.status`` and the body from ``response.bytes()``, a read-only
``memoryview`` copied to ``bytes`` here (``bytes(view)``, as the docstring says) because
the lab's checks parse and search the body.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import wreq  # type: ignore[import-untyped,import-not-found,unused-ignore]
import wreq.blocking  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter

__all__ = ["Adapter", "version_text"]

_VERSIONS = {"HTTP_10": "HTTP/1.0", "HTTP_11": "HTTP/1.1", "HTTP_2": "HTTP/2", "HTTP_3": "HTTP/3"}


def version_text(version: object) -> str:
    """``Version.HTTP_11`` → ``HTTP/1.1`` ("?" for anything else)."""
    return _VERSIONS.get(str(version).rpartition(".")[2], "?")


class Adapter(SyncAdapter):
    name = "wreq"
    module = "wreq"
    concurrency_note = "threads sharing one blocking Client"

    def __init__(self) -> None:
        self.client = wreq.blocking.Client(timeout=timedelta(seconds=TIMEOUT))
        self.ver: object = None

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        self.ver = r.version
        return r.status.as_int(), bytes(r.bytes())

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, form=form)
        self.ver = r.version
        return r.status.as_int(), bytes(r.bytes())

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return r.status.as_int(), r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        # The streamer yields the body's pieces as memoryviews and trailers as a HeaderMap.
        with self.client.get(url) as r, r.stream() as chunks:
            sizes = [len(chunk) for chunk in chunks if isinstance(chunk, memoryview)]
            return r.status.as_int(), sizes

    def version(self) -> str:
        return version_text(self.ver)
