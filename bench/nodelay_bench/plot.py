"""PNG charts: one panel per workload, horizontal bars (median) with min-max whiskers.

Every row (HTTP/1.1 and HTTP/2 alike) carries its repetitions, so every bar has whiskers;
rows converted from old logs carry the median and spread only, drawn the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .results import Row
from .workloads import title_of

__all__ = ["plot"]

NODELAY = "#d62728"
PYTHON = "#1f77b4"
NATIVE = "#9e9e9e"

TITLE_INCHES = 0.6
"""Height added to the figure for the chart's title."""


@dataclass
class Bar:
    label: str
    median: float
    below: float = 0.0
    """Whisker length down to the slowest repetition."""
    above: float = 0.0
    """Whisker length up to the fastest repetition."""
    color: str = PYTHON
    bold: bool = False


@dataclass
class Panel:
    title: str
    xlabel: str
    bars: list[Bar] = field(default_factory=list)


def plot(rows: list[Row], out: Path | IO[bytes], title: str = "") -> None:
    """Write the chart of the measured rows to ``out`` (a path or a binary file), as PNG."""
    panels = _row_panels(rows)
    if not panels:
        raise ValueError("nothing was measured: no chart to draw")
    _draw(panels, out, title)


def _row_panels(rows: list[Row]) -> list[Panel]:
    order: list[str] = []
    for r in rows:
        if r.status == "ok" and r.summary() is not None and r.workload not in order:
            order.append(r.workload)
    panels = []
    for wid in order:
        measured = [r for r in rows if r.workload == wid and r.status == "ok" and r.summary()]
        measured.sort(key=lambda r: r.median() or 0.0)
        unit = measured[0].unit
        panel = Panel(f"{wid} - {title_of(wid)}", f"{unit} (median; whiskers: min-max)")
        for r in measured:
            s = r.summary()
            assert s is not None
            panel.bars.append(
                Bar(
                    r.label if r.kind == "python" else f"{r.label} [{r.kind}]",
                    s.median,
                    s.median - s.min,
                    s.max - s.median,
                    NODELAY if r.is_nodelay else (PYTHON if r.kind == "python" else NATIVE),
                    r.is_nodelay,
                )
            )
        panels.append(panel)
    return panels


def _draw(panels: list[Panel], out: Path | IO[bytes], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heights = [max(1.2, 0.28 * len(p.bars) + 0.8) for p in panels]
    total = sum(heights) + TITLE_INCHES
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(10, total),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        bars = panel.bars
        medians = [b.median for b in bars]
        above = [b.above for b in bars]
        y = range(len(bars))
        ax.barh(
            y,
            medians,
            xerr=[[b.below for b in bars], above],
            color=[b.color for b in bars],
            capsize=3,
            error_kw={"lw": 1},
        )
        ax.set_yticks(list(y), [b.label for b in bars], fontsize=8)
        for tick, bar in zip(ax.get_yticklabels(), bars, strict=True):
            if bar.bold:
                tick.set_fontweight("bold")
                tick.set_color(NODELAY)
        for i, m in enumerate(medians):  # after the whisker, so the two never overlap
            ax.text(m + above[i], i, f" {m:,.0f}", va="center", fontsize=7)
        ax.set_title(panel.title, fontsize=10, loc="left")
        ax.set_xlabel(panel.xlabel, fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlim(0, max(m + a for m, a in zip(medians, above, strict=True)) * 1.15)
        ax.grid(axis="x", alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=11, y=1.0 - 0.15 / total)
    # tight_layout keeps the title clear of the first panel (it accounts for suptitle).
    fig.tight_layout()
    fig.savefig(out, dpi=110, format="png")
    plt.close(fig)
