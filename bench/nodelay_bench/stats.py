"""Statistics over repetitions: median and spread, per-request costs, ratios."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "PERCENTILES",
    "Rep",
    "Summary",
    "cpu_us_per_request",
    "percentile",
    "rate",
    "ratio",
    "summarize",
    "timing_summary",
]

PERCENTILES = (50, 90, 99)
"""The latency percentiles every row reports (ab and wrk users read these first), plus max."""

MB = 1_000_000
"""MB/s uses decimal megabytes (10^6 bytes), like wrk and curl."""


@dataclass(frozen=True)
class Rep:
    """One timed repetition of one client x workload."""

    seconds: float
    requests: int
    bytes: int
    cpu_user: float
    cpu_sys: float
    errors: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rep:
        return cls(
            seconds=float(data["seconds"]),
            requests=int(data["requests"]),
            bytes=int(data.get("bytes", 0)),
            cpu_user=float(data.get("cpu_user", 0.0)),
            cpu_sys=float(data.get("cpu_sys", 0.0)),
            errors=int(data.get("errors", 0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Summary:
    """Median and min-max of a sample (``n`` values)."""

    median: float
    min: float
    max: float
    mean: float | None
    """None in rows converted from text logs, which printed no mean."""
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(values: Sequence[float]) -> Summary:
    """Median, min, max and mean of a non-empty sample."""
    if not values:
        raise ValueError("summarize() needs at least one value")
    return Summary(
        median=statistics.median(values),
        min=min(values),
        max=max(values),
        mean=statistics.fmean(values),
        n=len(values),
    )


def rate(rep: Rep, unit: str) -> float:
    """Throughput of one repetition: requests/s, or MB/s of body bytes for "MB/s"."""
    if rep.seconds <= 0:
        return 0.0
    if unit == "MB/s":
        return rep.bytes / MB / rep.seconds
    return rep.requests / rep.seconds


def cpu_us_per_request(reps: Sequence[Rep]) -> float | None:
    """Median over repetitions of the client's user+sys CPU µs per request."""
    values = [(r.cpu_user + r.cpu_sys) / r.requests * 1e6 for r in reps if r.requests > 0]
    return statistics.median(values) if values else None


def ratio(value: float | None, reference: float | None) -> float | None:
    """``value / reference``, or None when either is missing or the reference is 0."""
    if value is None or reference is None or reference <= 0:
        return None
    return value / reference


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of an ascending, non-empty sample by the nearest-rank method
    (the smallest value with at least ``q`` % of the sample at or below it), as ab's
    "Percentage of the requests served within a certain time" table computes it: always one
    of the measured values, never an interpolation between two."""
    if not ordered:
        raise ValueError("percentile() needs at least one value")
    if not 0 < q <= 100:
        raise ValueError(f"percentile {q} is outside (0, 100]")
    rank = math.ceil(q / 100 * len(ordered))
    return ordered[rank - 1]


def timing_summary(samples: Sequence[float]) -> dict[str, float | None] | None:
    """``{"p50", "p90", "p99", "max", "mean", "n"}`` of a sample of durations (whatever unit
    they are in: the lab passes milliseconds); None for an empty sample."""
    if not samples:
        return None
    ordered = sorted(samples)
    out: dict[str, float | None] = {f"p{q}": percentile(ordered, q) for q in PERCENTILES}
    out["max"] = ordered[-1]
    out["mean"] = statistics.fmean(ordered)
    out["n"] = len(ordered)
    return out
