"""rnet's ``BlockingClient`` (Rust, reqwest-based)."""

from __future__ import annotations

from typing import Any

import rnet.blocking  # type: ignore[import-untyped,import-not-found,unused-ignore]

from .base import Reply, SyncAdapter


def _version(v: object) -> str:
    text = str(v).rpartition(".")[2]  # "Version.HTTP_11"
    return {"HTTP_10": "HTTP/1.0", "HTTP_11": "HTTP/1.1", "HTTP_2": "HTTP/2"}.get(text, "?")


class Adapter(SyncAdapter):
    name = "rnet"
    module = "rnet"
    concurrency_note = "threads sharing one BlockingClient"

    def __init__(self) -> None:
        self.client = rnet.blocking.BlockingClient()
        self.ver: object = None

    def get(self, url: str) -> Reply:
        r = self.client.get(url)
        self.ver = r.version
        return int(r.status), r.bytes()

    def post_form(self, url: str, form: dict[str, str], body: bytes) -> Reply:
        r = self.client.post(url, form=list(form.items()))
        self.ver = r.version
        return int(r.status), r.bytes()

    def get_json(self, url: str) -> tuple[int, Any]:
        r = self.client.get(url)
        return int(r.status), r.json()

    def stream(self, url: str) -> tuple[int, list[int]]:
        r = self.client.get(url)
        sizes = [len(chunk) for chunk in r.stream()]
        return int(r.status), sizes

    def version(self) -> str:
        return _version(self.ver)
