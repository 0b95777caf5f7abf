"""zapros's ``Client`` (pure Python: its standard-library handler over ``socket``, ``ssl``
and h11).

Written as zapros's quick start and "Core Models" pages show it (its repository's
``docs/quickstart.md``, ``docs/models.md``, ``docs/python-std.md``): a ``Client`` over a
``StdNetworkHandler`` that carries the timeouts, ``client.get(url)``, the status in
``response.status``, the body from ``response.read()``, the form as ``form=``, streaming
with ``client.stream("GET", url)`` and ``iter_bytes()``. The handler does not report the
HTTP version it spoke.
"""

from __future__ import annotations

from typing import Any

import zapros  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter

__all__ = ["STREAM_PIECE", "Adapter"]

STREAM_PIECE = 65536
"""Bytes per piece of workload d's streamed row (``iter_bytes(chunk_size=)``; zapros's default
is 8 KiB, the lab asks every client for reads of 64 KiB where it can choose)."""


class Adapter(SyncAdapter):
    name = "zapros"
    module = "zapros"
    concurrency_note = "threads sharing one Client"

    def __init__(self) -> None:
        handler = zapros.StdNetworkHandler(total_timeout=TIMEOUT, read_timeout=TIMEOUT)
        self.client = zapros.Client(handler=handler)

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        return r.status, r.read()

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, form=form)
        return r.status, r.read()

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return r.status, r.json

    def stream(self, url: str) -> tuple[int, list[int]]:
        with self.client.stream("GET", url) as r:
            sizes = [len(chunk) for chunk in r.iter_bytes(chunk_size=STREAM_PIECE)]
            return r.status, sizes

    def close(self) -> None:
        self.client.close()
