"""The terminal report: one rich table per workload, then the skipped rows."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table

from .results import Row
from .workloads import WORKLOADS

__all__ = ["fmt_num", "fmt_ratio", "render", "workload_table"]


def fmt_num(value: float | None, digits: int = 0) -> str:
    """Thousands separators; "-" for missing values."""
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def workload_table(wid: str, rows: Iterable[Row], syscalls: bool = False) -> Table:
    """The table of one workload: measured rows sorted by median, fastest first."""
    w = WORKLOADS[wid]
    measured = sorted((r for r in rows if r.status == "ok"), key=lambda r: -(r.median() or 0.0))
    unit = w.unit
    table = Table(
        title=f"{w.id} - {w.title} ({w.count(1.0):,} requests at scale 1)",
        title_justify="left",
        header_style="bold",
    )
    table.add_column("client")
    table.add_column(f"{unit} median", justify="right")
    table.add_column("min-max", justify="right")
    table.add_column("CPU us/req" if unit == "req/s" else "CPU s/GB", justify="right")
    table.add_column("RSS MB", justify="right")
    table.add_column("errors", justify="right")
    table.add_column("protocol")
    if syscalls:
        table.add_column("writes/req", justify="right")
    table.add_column("vs fastest peer", justify="right")
    table.add_column("vs floor", justify="right")
    table.add_column("notes")
    for r in measured:
        s = r.summary()
        cpu = r.cpu_us() if unit == "req/s" else r.cpu_s_per_gb()
        style = "bold green" if r.is_nodelay else ("dim" if r.kind != "python" else "")
        notes = r.note
        if r.chunks:
            c = r.chunks
            notes = (
                f"{c['chunks_per_response']:.0f} chunks/resp, mean {c['mean']:,.0f} B "
                f"(min {c['min']:,.0f}, max {c['max']:,.0f})"
            )
        if r.reason:
            notes = f"{notes}; {r.reason}" if notes else r.reason
        cells = [
            r.label + ("" if r.kind == "python" else f" [{r.kind}]"),
            fmt_num(s.median if s else None, 0),
            f"{fmt_num(s.min if s else None)}-{fmt_num(s.max if s else None)}",
            fmt_num(cpu, 1 if unit == "req/s" else 2),
            fmt_num(r.peak_rss_kb / 1024 if r.peak_rss_kb else None, 1),
            str(r.errors()),
            r.protocol or "?",
        ]
        if syscalls:
            cells.append(fmt_num(r.writes_per_request, 2))
        cells += [
            fmt_ratio(r.ratio_fastest_peer) + (f" ({r.fastest_peer})" if r.fastest_peer else ""),
            fmt_ratio(r.ratio_floor),
            notes,
        ]
        table.add_row(*cells, style=style)
    return table


def skipped_table(rows: Iterable[Row], pending: list[tuple[str, str]]) -> Table | None:
    """Rows that were skipped or failed, grouped by client and reason."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        if r.status != "ok":
            grouped.setdefault((r.status, r.label, r.reason), []).append(r.workload)
    if not grouped and not pending:
        return None
    table = Table(title="skipped / failed", title_justify="left", header_style="bold")
    table.add_column("status")
    table.add_column("row")
    table.add_column("workloads")
    table.add_column("reason")
    for wid, reason in pending:
        table.add_row("pending", "(all clients)", wid, reason)
    for (status, label, reason), wids in grouped.items():
        table.add_row(
            status, label, ",".join(wids), reason, style="red" if status == "failed" else ""
        )
    return table


def render(
    rows: list[Row], pending: list[tuple[str, str]], console: Console, syscalls: bool = False
) -> None:
    """Print every workload's table, then the skipped rows."""
    order: list[str] = []
    for r in rows:
        if r.workload not in order:
            order.append(r.workload)
    for wid in order:
        of_workload = [r for r in rows if r.workload == wid]
        if any(r.status == "ok" for r in of_workload):  # all skipped: only the list below
            console.print(workload_table(wid, of_workload, syscalls))
    table = skipped_table(rows, pending)
    if table is not None:
        console.print(table)
