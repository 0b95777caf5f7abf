"""``nodelay bench --compare OLD NEW``: each row's change between two results files, so
the effect of a change is one command (run the lab before and after, then compare).

Rows are matched by workload, variant, client and kind. Each matched row shows throughput
(req/s or MB/s), CPU per request (or per GB) and p99 latency, old and new, and the change
in per cent; rows found in only one file are listed after.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .report import fmt_ms, fmt_num
from .results import Row, load, rows_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Change", "compare_files", "compare_rows", "pct"]

Key = tuple[str, str, str, str]


@dataclass(frozen=True)
class Change:
    """One row in both files: (old, new) of each figure, None where a file lacks it."""

    workload: str
    label: str
    unit: str
    rate: tuple[float | None, float | None]
    cpu: tuple[float | None, float | None]
    p99_ms: tuple[float | None, float | None]


def _key(r: Row) -> Key:
    return (r.workload, r.variant, r.client, r.kind)


def _cpu(r: Row) -> float | None:
    return r.cpu_us() if r.unit == "req/s" else r.cpu_s_per_gb()


def _p99(r: Row) -> float | None:
    return r.latency_ms.get("p99") if r.latency_ms else None


def pct(old: float | None, new: float | None) -> float | None:
    """The change from ``old`` to ``new`` in per cent (None when either is missing or 0)."""
    if old is None or new is None or old == 0:
        return None
    return (new - old) / old * 100


def compare_rows(old: list[Row], new: list[Row]) -> tuple[list[Change], list[Row], list[Row]]:
    """(changes of the rows measured in both, rows only in ``old``, rows only in ``new``)."""
    old_ok = {_key(r): r for r in old if r.status == "ok"}
    new_ok = {_key(r): r for r in new if r.status == "ok"}
    changes = []
    for key, n in new_ok.items():
        o = old_ok.get(key)
        if o is None:
            continue
        label = n.label if n.kind == "python" else f"{n.label} [{n.kind}]"
        changes.append(
            Change(
                n.workload,
                label,
                n.unit,
                (o.median(), n.median()),
                (_cpu(o), _cpu(n)),
                (_p99(o), _p99(n)),
            )
        )
    only_old = [r for k, r in old_ok.items() if k not in new_ok]
    only_new = [r for k, r in new_ok.items() if k not in old_ok]
    return changes, only_old, only_new


def _delta(old: float | None, new: float | None, higher_is_better: bool) -> str:
    change = pct(old, new)
    if change is None:
        return "-"
    good = change >= 0 if higher_is_better else change <= 0
    colour = "green" if good else "red"
    return f"[{colour}]{change:+.1f}%[/{colour}]"


def compare_files(old_path: Path, new_path: Path, console: Console) -> int:
    """Print the comparison; exit status 2 when a file cannot be read."""
    from rich.table import Table

    try:
        old_doc, new_doc = load(old_path), load(new_path)
    except (OSError, ValueError) as exc:
        console.print(f"[red]nodelay bench: {exc}")
        return 2
    changes, only_old, only_new = compare_rows(rows_of(old_doc), rows_of(new_doc))
    table = Table(
        title=f"{old_path} ({old_doc.get('started', '?')}) -> "
        f"{new_path} ({new_doc.get('started', '?')})",
        title_justify="left",
        header_style="bold",
    )
    for column in ("workload", "row", "unit", "old", "new", "change"):
        table.add_column(
            column, justify="left" if column in ("workload", "row", "unit") else "right"
        )
    for column in ("CPU old", "CPU new", "change", "p99 ms old", "p99 ms new", "change"):
        table.add_column(column, justify="right")
    for c in sorted(changes, key=lambda c: (c.workload, c.label)):
        table.add_row(
            c.workload,
            c.label,
            c.unit,
            fmt_num(c.rate[0]),
            fmt_num(c.rate[1]),
            _delta(*c.rate, higher_is_better=True),
            fmt_num(c.cpu[0], 1),
            fmt_num(c.cpu[1], 1),
            _delta(*c.cpu, higher_is_better=False),
            fmt_ms(c.p99_ms[0]),
            fmt_ms(c.p99_ms[1]),
            _delta(*c.p99_ms, higher_is_better=False),
        )
    console.print(table)
    for name, rows in (("only in OLD", only_old), ("only in NEW", only_new)):
        if rows:
            console.print(f"{name}: " + ", ".join(f"{r.workload} {r.label}" for r in rows))
    return 0
