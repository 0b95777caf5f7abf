"""nodelay's ``Client`` with workload d's streamed body read by ``iter_into``: one
caller-owned buffer filled again and again (no object per piece), against ``nodelay``'s
row, which reads ``iter_bytes``. Every other workload runs as the ``nodelay`` row does."""

from __future__ import annotations

from .nodelay_sync import Adapter as NodelayAdapter

BUFFER_BYTES = 256 * 1024
"""The reused buffer: the size of ``iter_bytes``'s largest piece, so both rows read the
body in pieces of the same size."""


class Adapter(NodelayAdapter):
    name = "nodelay-readinto"

    def __init__(self) -> None:
        super().__init__()
        self.buffer = bytearray(BUFFER_BYTES)

    def stream(self, url: str) -> tuple[int, list[int]]:
        with self.client.stream("GET", url) as r:
            self.last = r
            return r.status_code, list(r.iter_into(self.buffer))
