"""The workload registry (docs/benchmarks.md, workloads a-k).

A ``Workload`` says what to send, how many times, how many in flight, and how to check
each answer, so a fast wrong client cannot win. The HTTP/2 workloads (g, i) are run by
the HTTP/2 part of the runner (``h2lab.py``: its own servers, h2c and TLS) and listed in
``H2LAB``; their rows are ordinary rows of the same tables, JSON and charts;
a workload the lab cannot run at all would sit in ``PENDING`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlencode

__all__ = [
    "COOKIE_POST_PATH",
    "DEFAULT_WORKLOADS",
    "FORM",
    "H2LAB",
    "LOGIN_FORM",
    "LOGIN_PATH",
    "PENDING",
    "WORKLOADS",
    "Workload",
    "form_body",
    "parse_ids",
    "title_of",
]

Check = Literal["bytes", "json", "echo", "cookies"]
Unit = Literal["req/s", "MB/s"]

FORM: dict[str, str] = {
    "user": "bench",
    "action": "update",
    "id": "42",
    "note": "a small urlencoded body, like a login or a form post",
}
"""The body of workload e, sent with each client's own form API where it has one."""


LOGIN_PATH = "/login"
"""Workload h's login: a POST the embedded server answers with ``Set-Cookie: session=…``."""
LOGIN_FORM: dict[str, str] = {"user": "bench", "password": "hunter2"}
COOKIE_POST_PATH = "/anything/cookies"
"""Workload h's POSTs: the server echoes the request headers, so the check sees the Cookie
header; its GETs go to the workload's path (``/cookies``, which echoes the cookies)."""


def form_body() -> bytes:
    """``FORM`` urlencoded: what the server must echo back."""
    return urlencode(FORM).encode("ascii")


@dataclass(frozen=True)
class Workload:
    """One benchmark workload; ``requests`` is the count at ``--scale 1``."""

    id: str
    title: str
    path: str
    requests: int
    check: Check
    unit: Unit = "req/s"
    method: str = "GET"
    expect_length: int | None = None
    """Exact body length to check (None: checked another way, e.g. JSON)."""
    concurrency: int = 1
    fresh_client: bool = False
    """True: a new client per request (workload j)."""
    variants: tuple[str, ...] = ()
    """Extra rows: "json()" (decode with the client's own JSON method), "stream", "batch"
    (the client's own batch API, e.g. ``Client.get_many``)."""
    variant_only: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Variant → the only clients that get that row (absent: every client)."""
    natives: tuple[str, ...] = ()
    """Native references that can run it: floor, wrk, ab, h2load, curl."""
    protocol: str = "HTTP/1.1"
    seed: str = ""
    listed_only: bool = False
    """True: run only by the rows that name it in ``clients.WORKLOADS_OF`` (workload k runs
    through the incumbents' clients over each transport, not through every peer)."""

    def count(self, scale: float) -> int:
        """Requests per repetition at ``scale`` (at least 1, at least the concurrency)."""
        return max(1, self.concurrency, round(self.requests * scale))

    def warmup(self, scale: float) -> int:
        """Untimed requests before the first repetition: a tenth, 2..200."""
        return max(2, min(200, self.count(scale) // 10))


_SEQ_NATIVES = ("floor", "wrk", "ab")

WORKLOADS: dict[str, Workload] = {
    w.id: w
    for w in (
        Workload(
            "a",
            "202 B GET, sequential keep-alive",
            "/bytes/202",
            5000,
            "bytes",
            expect_length=202,
            natives=_SEQ_NATIVES,
            seed="Perl comparison",
        ),
        Workload(
            "b",
            "16 KiB JSON GET + json.loads + check key",
            "/json/16384",
            3000,
            "json",
            variants=("json()",),
            variant_only={"json()": ("nodelay", "nodelay-async")},
            natives=_SEQ_NATIVES,
            seed="Ruby/Java comparison",
        ),
        Workload(
            "c",
            "335 KiB GET",
            "/bytes/343040",
            500,
            "bytes",
            unit="MB/s",
            expect_length=343040,
            natives=(*_SEQ_NATIVES, "curl"),
            seed="Perl comparison",
        ),
        Workload(
            "d",
            "10 MiB GET, whole body",
            "/bytes/10485760",
            20,
            "bytes",
            unit="MB/s",
            expect_length=10485760,
            variants=("stream",),
            natives=("floor", "curl"),
            seed="Ruby Net::HTTP buffers",
        ),
        Workload(
            "e",
            "small urlencoded POST /echo, sequential",
            "/echo",
            3000,
            "echo",
            method="POST",
            natives=_SEQ_NATIVES,
            seed="Perl curl/LWP POSTs; Nagle stall",
        ),
        Workload(
            "f",
            "202 B GET, 32 in flight",
            "/bytes/202",
            1000,
            "bytes",
            expect_length=202,
            concurrency=32,
            variants=("batch",),
            variant_only={"batch": ("nodelay",)},
            natives=("floor", "wrk", "ab", "h2load"),
            seed="concurrency",
        ),
        Workload(
            "h",
            "login POST, then GET /cookies and POST /anything alternating with the cookie;"
            " cookie file saved and reloaded",
            "/cookies",
            1000,
            "cookies",
            seed="cookie flow",
        ),
        Workload(
            "k",
            "202 B GET, 256 in flight, through httpx2's / httpx's client over each transport"
            " and requests' Session over its adapter and nodelay's",
            "/bytes/202",
            5000,
            "bytes",
            expect_length=202,
            concurrency=256,
            listed_only=True,
            seed="LLM and API fan-out: httpx pool timeouts under concurrency",
        ),
        Workload(
            "j",
            "new client per request",
            "/bytes/202",
            500,
            "bytes",
            expect_length=202,
            fresh_client=True,
            natives=("floor",),
            seed="common misuse",
        ),
    )
}

H2LAB: dict[str, str] = {
    "g": "202 B GET, 32 in flight, over h2c and h2+TLS",
    "i": "crawl of the generated site: h1 over 6 connections vs h2 over one",
}
"""Workloads run by the HTTP/2 part of the runner (``h2lab.run_rows``), with their titles."""

PENDING: dict[str, str] = {}
"""Workloads of docs/benchmarks.md the lab cannot run yet, with the reason (none today)."""

DEFAULT_WORKLOADS = tuple(sorted([*WORKLOADS, *H2LAB]))


def title_of(wid: str) -> str:
    """A workload's one-line title, for tables and charts (the HTTP/2 ones included)."""
    return WORKLOADS[wid].title if wid in WORKLOADS else H2LAB.get(wid, wid)


def parse_ids(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """``"a,b,g"`` → (runnable ids, [(pending id, reason)]); unknown ids raise ValueError.

    Runnable ids include the HTTP/2 ones (``H2LAB``), which ``h2lab.run_rows`` runs.
    """
    ids = [part.strip().lower() for part in text.split(",") if part.strip()]
    runnable: list[str] = []
    pending: list[tuple[str, str]] = []
    for wid in ids:
        if wid in WORKLOADS or wid in H2LAB:
            if wid not in runnable:
                runnable.append(wid)
        elif wid in PENDING:
            pending.append((wid, PENDING[wid]))
        else:
            known = ", ".join(sorted([*WORKLOADS, *H2LAB, *PENDING]))
            raise ValueError(f"unknown workload {wid!r} (known: {known})")
    return runnable, pending
