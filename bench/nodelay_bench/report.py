"""The terminal report: one rich table per workload, then the skipped rows."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table

from .results import Row, Timing
from .workloads import WORKLOADS, title_of

__all__ = ["fmt_ms", "fmt_num", "fmt_ratio", "render", "timing_cells", "workload_table"]

LATENCY_KEYS = ("p50", "p90", "p99", "max")
"""The latency columns of every table (milliseconds)."""


def fmt_num(value: float | None, digits: int = 0) -> str:
    """Thousands separators; "-" for missing values."""
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def fmt_ms(value: float | None) -> str:
    """Milliseconds with three significant decimals below 10 ms ("-" for missing)."""
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:,.1f}"


def timing_cells(timing: Timing | None) -> list[str]:
    """p50, p90, p99, max of a timing summary, formatted."""
    return [fmt_ms(timing.get(k) if timing else None) for k in LATENCY_KEYS]


def connect_cell(timing: Timing | None) -> str:
    """ "p50 / max" of connect or TLS times (ab reports median and max too)."""
    if not timing:
        return "-"
    return f"{fmt_ms(timing.get('p50'))} / {fmt_ms(timing.get('max'))}"


def workload_table(wid: str, rows: Iterable[Row], syscalls: bool = False) -> Table:
    """The table of one workload: measured rows sorted by median, fastest first."""
    measured = sorted((r for r in rows if r.status == "ok"), key=lambda r: -(r.median() or 0.0))
    unit = measured[0].unit if measured else "req/s"
    count = f" ({WORKLOADS[wid].count(1.0):,} requests at scale 1)" if wid in WORKLOADS else ""
    table = Table(
        title=f"{wid} - {title_of(wid)}{count}; latency in ms",
        title_justify="left",
        header_style="bold",
    )
    connects = any(r.connect_ms for r in measured)
    tls = any(r.tls_ms for r in measured)
    table.add_column("client")
    table.add_column(f"{unit} median", justify="right")
    table.add_column("min-max", justify="right")
    table.add_column("CPU us/req" if unit == "req/s" else "CPU s/GB", justify="right")
    for key in LATENCY_KEYS:
        table.add_column(key, justify="right")
    if connects:
        table.add_column("connect p50/max", justify="right")
    if tls:
        table.add_column("TLS p50/max", justify="right")
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
            *timing_cells(r.latency_ms),
            *([connect_cell(r.connect_ms)] if connects else []),
            *([connect_cell(r.tls_ms)] if tls else []),
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
