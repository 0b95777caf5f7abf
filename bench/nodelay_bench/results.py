"""Result rows, derived figures (median, CPU per request, ratios) and the JSON document."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .stats import Rep, Summary, cpu_us_per_request, rate, ratio, summarize
from .workloads import H2LAB

REFERENCES = frozenset(
    {
        "asyncio-floor",
        "lwp-floor",
        "perl-socket",
        "ruby-socket",
        *(f"ceiling-{lib}" for lib in ("httpx", "httpx-async", "httpx2", "httpx2-async")),
        "ceiling-requests",
    }
)
"""Rows that bound what a client can reach instead of competing: the least a request costs
on asyncio's event loop, through the cheapest client written in Perl or in Ruby (a bare
socket through the interpreter's own I/O calls), under LWP::UserAgent with that Perl client
as its transport, and
through httpx's or httpx2's client over a transport that does no I/O, and through requests'
``Session`` over an adapter that does none (``ceiling-*``).
They are never a "fastest peer" (docs/performance.md, "Ceilings")."""

__all__ = [
    "REFERENCES",
    "SCHEMA",
    "Row",
    "add_ratios",
    "document",
    "environment",
    "load",
    "rows_of",
    "save",
]

SCHEMA = "nodelay-bench/2"
"""Version 2 added the timing summaries (``latency_ms``, ``connect_ms``, ``tls_ms``), the
HTTP/2 workloads as ordinary rows and ``converted_from``; docs/performance.md documents it."""

Timing = dict[str, float | None]
"""A timing summary: p50, p90, p99, max, mean (milliseconds) and n (samples); None where
the source (a native tool's report) does not give that figure."""


@dataclass
class Row:
    """One client (or native reference) x one workload (x variant)."""

    workload: str
    client: str
    kind: str
    """"python", "native", "floor", or a ``--lang`` worker's language ("perl")."""
    unit: str
    variant: str = ""
    flavour: str = "sync"
    status: str = "ok"
    """"ok", "skipped" or "failed"."""
    reason: str = ""
    reps: list[Rep] = field(default_factory=list)
    protocol: str = ""
    peak_rss_kb: int | None = None
    chunks: dict[str, float] | None = None
    note: str = ""
    writes_per_request: float | None = None
    ratio_fastest_peer: float | None = None
    ratio_floor: float | None = None
    fastest_peer: str = ""
    latency_ms: Timing | None = None
    """Per-request latency over every timed repetition."""
    connect_ms: Timing | None = None
    """TCP connect time of the connections opened while timed (where the client tells)."""
    tls_ms: Timing | None = None
    """TLS handshake time of those connections."""
    summary_only: Summary | None = None
    """Rows converted from a log that kept only the median and spread, not repetitions."""
    cpu_us_only: float | None = None
    cpu_s_per_gb_only: float | None = None
    capped: bool = False
    """A language worker's row that reached the lab's time cap (``runner.ROW_SECONDS``):
    its repetitions sent fewer requests than asked."""

    @property
    def label(self) -> str:
        return f"{self.client} {self.variant}" if self.variant else self.client

    @property
    def is_nodelay(self) -> bool:
        return self.client.startswith("nodelay")

    @property
    def is_peer(self) -> bool:
        """A client nodelay is compared with: not nodelay, not a reference row."""
        return not self.is_nodelay and self.client not in REFERENCES

    def summary(self) -> Summary | None:
        rates = [rate(r, self.unit) for r in self.reps]
        return summarize(rates) if rates else self.summary_only

    def median(self) -> float | None:
        s = self.summary()
        return s.median if s else None

    def cpu_us(self) -> float | None:
        return cpu_us_per_request(self.reps) if self.reps else self.cpu_us_only

    def cpu_s_per_gb(self) -> float | None:
        values = [(r.cpu_user + r.cpu_sys) / (r.bytes / 1e9) for r in self.reps if r.bytes]
        if not values:
            return self.cpu_s_per_gb_only
        return sorted(values)[len(values) // 2]

    def errors(self) -> int:
        return sum(r.errors for r in self.reps)

    def to_dict(self) -> dict[str, Any]:
        s = self.summary()
        return {
            "workload": self.workload,
            "variant": self.variant,
            "client": self.client,
            "label": self.label,
            "kind": self.kind,
            "flavour": self.flavour,
            "status": self.status,
            "reason": self.reason,
            "unit": self.unit,
            "summary": s.to_dict() if s else None,
            "cpu_us_per_request": self.cpu_us(),
            "cpu_s_per_gb": self.cpu_s_per_gb() if self.unit == "MB/s" else None,
            "peak_rss_kb": self.peak_rss_kb,
            "errors": self.errors(),
            "protocol": self.protocol,
            "chunks": self.chunks,
            "note": self.note,
            "writes_per_request": self.writes_per_request,
            "ratio_fastest_peer": self.ratio_fastest_peer,
            "fastest_peer": self.fastest_peer,
            "ratio_floor": self.ratio_floor,
            "latency_ms": self.latency_ms,
            "connect_ms": self.connect_ms,
            "tls_ms": self.tls_ms,
            "capped": self.capped,
            "reps": [r.to_dict() for r in self.reps],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Row:
        """A row of a results file (to redraw its chart and report, or compare two files)."""
        reps = [Rep.from_dict(r) for r in data.get("reps") or []]
        summary = data.get("summary")
        return cls(
            workload=data["workload"],
            client=data["client"],
            kind=data.get("kind", "python"),
            unit=data.get("unit", "req/s"),
            variant=data.get("variant", ""),
            flavour=data.get("flavour", "sync"),
            status=data.get("status", "ok"),
            reason=data.get("reason", ""),
            reps=reps,
            protocol=data.get("protocol", ""),
            peak_rss_kb=data.get("peak_rss_kb"),
            chunks=data.get("chunks"),
            note=data.get("note", ""),
            writes_per_request=data.get("writes_per_request"),
            ratio_fastest_peer=data.get("ratio_fastest_peer"),
            ratio_floor=data.get("ratio_floor"),
            fastest_peer=data.get("fastest_peer", ""),
            latency_ms=data.get("latency_ms"),
            connect_ms=data.get("connect_ms"),
            tls_ms=data.get("tls_ms"),
            summary_only=None if reps or not summary else Summary(**summary),
            cpu_us_only=None if reps else data.get("cpu_us_per_request"),
            cpu_s_per_gb_only=None if reps else data.get("cpu_s_per_gb"),
            capped=bool(data.get("capped", False)),
        )


def add_ratios(rows: list[Row]) -> None:
    """Fill nodelay rows' ratio to the fastest peer of their language and to the floor.

    Peers are the other clients' rows of the row's kind (Python, or a ``--lang`` worker's
    language) of the same workload without a variant (so ``b json()`` is compared with the
    peers' stdlib-json rows, as docs/benchmarks.md's target says), or of the same variant
    for "stream". Rows with errors never count as fastest.
    """
    for row in rows:
        if not row.is_nodelay or row.status != "ok":
            continue
        # HTTP/2 rows (g) are compared over the same transport, their variant.
        same = row.variant == "stream" or row.workload in H2LAB
        peer_variant = row.variant if same else ""
        peers = [
            r
            for r in rows
            if r.workload == row.workload
            and r.kind == row.kind
            and r.is_peer
            and r.variant == peer_variant
            and r.status == "ok"
            and r.errors() == 0
        ]
        best = max(peers, key=lambda r: r.median() or 0.0, default=None)
        if best is not None:
            row.fastest_peer = best.label
            row.ratio_fastest_peer = ratio(row.median(), best.median())
        floor = next(
            (
                r
                for r in rows
                if r.workload == row.workload and r.kind == "floor" and r.status == "ok"
            ),
            None,
        )
        if floor is not None:
            row.ratio_floor = ratio(row.median(), floor.median())


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def environment() -> dict[str, Any]:
    """Machine, Python and every installed distribution's version."""
    import os
    from importlib import metadata

    versions = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            versions[name] = dist.version
    return {
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "packages": dict(sorted(versions.items(), key=lambda kv: kv[0].lower())),
    }


def document(
    rows: list[Row],
    *,
    command: list[str],
    options: dict[str, Any],
    server: dict[str, Any],
    tools: dict[str, str],
    pending: list[tuple[str, str]],
    started: str,
    finished: str,
) -> dict[str, Any]:
    """The JSON results file: every repetition plus what is needed to reproduce it."""
    return {
        "schema": SCHEMA,
        "converted_from": None,
        "command": command,
        "started": started,
        "finished": finished,
        "options": options,
        "server": server,
        "environment": environment(),
        "tools": tools,
        "pending_workloads": [{"workload": w, "reason": r} for w, r in pending],
        "rows": [r.to_dict() for r in rows],
    }


def save(doc: dict[str, Any], path: str | Path) -> None:
    """Write the results document ``doc`` (``document()``) to ``path`` as ``load`` reads it."""
    import json

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")


def load(path: str | Path) -> dict[str, Any]:
    """A results file; ValueError if it is not one of this lab's (any schema version)."""
    import json

    doc = json.loads(Path(path).read_text())
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("nodelay-bench/"):
        raise ValueError(f"{path} is not a nodelay bench results file (no 'schema')")
    return doc


def rows_of(doc: dict[str, Any]) -> list[Row]:
    """The rows of a results document."""
    return [Row.from_dict(r) for r in doc.get("rows", [])]
