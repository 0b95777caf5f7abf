"""PNG charts: one panel per workload, horizontal bars (median) with min-max whiskers."""

from __future__ import annotations

from pathlib import Path

from .results import Row
from .workloads import WORKLOADS

__all__ = ["plot"]

NODELAY = "#d62728"
PYTHON = "#1f77b4"
NATIVE = "#9e9e9e"


def plot(rows: list[Row], path: Path, title: str = "") -> None:
    """Write the chart of the measured rows to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order: list[str] = []
    for r in rows:
        if r.status == "ok" and r.workload not in order:
            order.append(r.workload)
    if not order:
        raise ValueError("nothing was measured: no chart to draw")
    panels = []
    for wid in order:
        measured = [r for r in rows if r.workload == wid and r.status == "ok" and r.reps]
        measured.sort(key=lambda r: r.median() or 0.0)
        panels.append((wid, measured))
    heights = [max(1.2, 0.28 * len(m) + 0.8) for _, m in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(10, sum(heights)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, (wid, measured) in zip(axes[:, 0], panels, strict=True):
        w = WORKLOADS[wid]
        labels, medians, lo, hi, colors = [], [], [], [], []
        for r in measured:
            s = r.summary()
            assert s is not None
            labels.append(r.label if r.kind == "python" else f"{r.label} [{r.kind}]")
            medians.append(s.median)
            lo.append(s.median - s.min)
            hi.append(s.max - s.median)
            colors.append(NODELAY if r.is_nodelay else (PYTHON if r.kind == "python" else NATIVE))
        y = range(len(measured))
        ax.barh(y, medians, xerr=[lo, hi], color=colors, capsize=3, error_kw={"lw": 1})
        ax.set_yticks(list(y), labels, fontsize=8)
        for tick, r in zip(ax.get_yticklabels(), measured, strict=True):
            if r.is_nodelay:
                tick.set_fontweight("bold")
                tick.set_color(NODELAY)
        for i, m in enumerate(medians):  # after the whisker, so the two never overlap
            ax.text(m + hi[i], i, f" {m:,.0f}", va="center", fontsize=7)
        ax.set_title(f"{w.id} - {w.title}", fontsize=10, loc="left")
        ax.set_xlabel(f"{w.unit} (median; whiskers: min-max)", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlim(0, max(medians + [m + h for m, h in zip(medians, hi, strict=True)]) * 1.15)
        ax.grid(axis="x", alpha=0.3)
    total = sum(heights)
    if title:
        fig.suptitle(title, fontsize=11, y=1.0 - 0.15 / total)
    # Leave 0.6 inch at the top for the title so it never covers the first panel.
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.6 / total))
    fig.savefig(path, dpi=110)
    plt.close(fig)
