"""Result rows, derived figures (median, CPU per request, ratios) and the JSON document."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field
from typing import Any

from .stats import Rep, Summary, cpu_us_per_request, rate, ratio, summarize

__all__ = ["SCHEMA", "Row", "add_ratios", "document", "environment"]

SCHEMA = "nodelay-bench/1"


@dataclass
class Row:
    """One client (or native reference) x one workload (x variant)."""

    workload: str
    client: str
    kind: str
    """"python", "native" or "floor"."""
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

    @property
    def label(self) -> str:
        return f"{self.client} {self.variant}" if self.variant else self.client

    @property
    def is_nodelay(self) -> bool:
        return self.client.startswith("nodelay")

    def summary(self) -> Summary | None:
        rates = [rate(r, self.unit) for r in self.reps]
        return summarize(rates) if rates else None

    def median(self) -> float | None:
        s = self.summary()
        return s.median if s else None

    def cpu_us(self) -> float | None:
        return cpu_us_per_request(self.reps)

    def cpu_s_per_gb(self) -> float | None:
        values = [(r.cpu_user + r.cpu_sys) / (r.bytes / 1e9) for r in self.reps if r.bytes]
        if not values:
            return None
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
            "reps": [r.to_dict() for r in self.reps],
        }


def add_ratios(rows: list[Row]) -> None:
    """Fill nodelay rows' ratio to the fastest Python peer and to the floor.

    Peers are the other Python clients' rows of the same workload without a variant (so
    ``b json()`` is compared with the peers' stdlib-json rows, as BENCHMARKS.md's target
    says), or of the same variant for "stream". Rows with errors never count as fastest.
    """
    for row in rows:
        if not row.is_nodelay or row.status != "ok":
            continue
        peer_variant = "stream" if row.variant == "stream" else ""
        peers = [
            r
            for r in rows
            if r.workload == row.workload
            and r.kind == "python"
            and not r.is_nodelay
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
