"""``nodelay bench --short`` (``make bench``): the lab a newcomer runs first.

The seeds' headline workloads against nodelay's sync and async rows, the Rust floor and
the fastest peers installed, at three repetitions: about 25 rows, where the whole matrix
(``make bench-full``) has about 200 at five.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "SHORT_NODELAY",
    "SHORT_PEERS",
    "SHORT_PEER_COUNT",
    "SHORT_REFERENCES",
    "SHORT_REPEAT",
    "SHORT_WORKLOADS",
    "short_clients",
]

SHORT_WORKLOADS = ("a", "b", "e", "f")
"""Small GET, JSON GET, small POST, 32 in flight: the seeds' headline comparisons
(docs/benchmarks.md)."""

SHORT_NODELAY = ("nodelay", "nodelay-async")
"""nodelay's rows (f adds its batch row to ``nodelay`` by itself)."""

SHORT_REFERENCES = ("floor",)
"""The reference rows: the plain Rust loop every target is measured against."""

SHORT_PEERS = ("pycurl", "pyreqwest", "rnet", "primp", "httpr", "aiohttp", "http.client")
"""Python peers, fastest first on workloads a, b, e and f in the lab's record
(docs/bench/2026-11-25-after2-embedded.json: pycurl, then pyreqwest, then rnet; primp and
httpr beside them in docs/benchmarks.md's figures; aiohttp and http.client always at hand)."""

SHORT_PEER_COUNT = 2
"""How many of ``SHORT_PEERS`` the short lab runs: the first ones installed."""

SHORT_REPEAT = 3
"""Timed repetitions per row in the short lab (the full lab's default is 5)."""


def short_clients(probe: Callable[[str], str | None]) -> list[str]:
    """The short lab's rows: nodelay's, the reference rows, and the first
    ``SHORT_PEER_COUNT`` of ``SHORT_PEERS`` that ``probe`` finds installed (``probe``
    returns why a client is missing, ``None`` when it is there)."""
    peers = [name for name in SHORT_PEERS if probe(name) is None][:SHORT_PEER_COUNT]
    return [*SHORT_NODELAY, *SHORT_REFERENCES, *peers]
