"""Statistics over repetitions: median and spread, per-request costs, ratios."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Rep", "Summary", "cpu_us_per_request", "rate", "ratio", "summarize"]

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
    mean: float
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
