"""pyreqwest's ``SyncClient`` (Rust, reqwest-based)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pyreqwest.client import SyncClientBuilder  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import TIMEOUT, Reply, SyncAdapter


class Adapter(SyncAdapter):
    name = "pyreqwest"
    module = "pyreqwest"
    concurrency_note = "threads sharing one SyncClient"

    def __init__(self) -> None:
        self.client = SyncClientBuilder().timeout(timedelta(seconds=TIMEOUT)).build()
        self.ver = "?"

    def get(self, url: str) -> Reply:
        r = self.client.get(url).build().send()
        self.ver = r.version
        return r.status, bytes(r.bytes())

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url).form(form).build().send()
        self.ver = r.version
        return r.status, bytes(r.bytes())

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url).build().send()
        return r.status, r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        sizes: list[int] = []
        with self.client.get(url).build_streamed() as r:
            reader = r.body_reader
            for _ in range(10_000_000):
                chunk = reader.read_chunk()
                if chunk is None:
                    break
                sizes.append(len(chunk))
            return r.status, sizes

    def version(self) -> str:
        return self.ver

    def close(self) -> None:
        self.client.close()
