"""mkdocs hook: the "Latest lab results" page, generated from the lab's JSON in docs/bench/.

The page's Markdown holds a marker comment; this hook replaces it with the newest results
file (a JSON object with a ``rows`` list, as ``nodelay bench --json`` writes): the machine,
the date and the command, then per workload a bar chart (inline SVG) and a table. Every
field is read with a default, so a file written by an older or newer lab still renders;
files that are not lab results (other JSON in docs/bench/) are ignored.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = "<!-- lab-results -->"
PAGE = "lab-results.md"
BAR_WIDTH_PX = 420
"""Width of the longest bar in a chart."""
BAR_HEIGHT_PX = 18
LABEL_WIDTH_PX = 190
"""Room for the client names left of the bars."""


def _load_results(bench_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for path in sorted(bench_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("rows"), list):
            found.append((path, data))
    # Newest first: by the run's start time when present, else by the (dated) file name.
    found.sort(key=lambda item: (str(item[1].get("started", "")), item[0].name), reverse=True)
    return found


def _num(value: Any, digits: int = 0) -> str:
    if not isinstance(value, int | float):
        return ""
    return f"{value:,.{digits}f}"


def _timing(row: dict[str, Any], key: str, field: str) -> str:
    timing = row.get(key)
    if not isinstance(timing, dict):
        return ""
    value = timing.get(field)
    return _num(value, 2 if isinstance(value, int | float) and value < 10 else 1)


def _median(row: dict[str, Any]) -> float | None:
    summary = row.get("summary")
    if isinstance(summary, dict) and isinstance(summary.get("median"), int | float):
        return float(summary["median"])
    return None


def _spread(row: dict[str, Any]) -> str:
    summary = row.get("summary") or {}
    low, high = summary.get("min"), summary.get("max")
    if isinstance(low, int | float) and isinstance(high, int | float):
        return f"{low:,.0f} - {high:,.0f}"
    return ""


def _chart(rows: list[dict[str, Any]], unit: str) -> str:
    bars: list[tuple[str, float]] = []
    for row in rows:
        value = _median(row)
        if value:
            bars.append((str(row.get("label") or row.get("client", "?")), value))
    if not bars:
        return ""
    top = max(value for _, value in bars)
    height = BAR_HEIGHT_PX * len(bars) + 8
    width = LABEL_WIDTH_PX + BAR_WIDTH_PX + 110
    parts = [
        f'<svg class="lab-chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (label, value) in enumerate(bars):
        y = 4 + i * BAR_HEIGHT_PX
        length = max(1.0, BAR_WIDTH_PX * value / top)
        colour = "#3f51b5" if label.startswith("nodelay") else "#9e9e9e"
        parts.append(
            f'<text x="{LABEL_WIDTH_PX - 6}" y="{y + 13}" text-anchor="end" '
            f'font-size="12">{html.escape(label)}</text>'
            f'<rect x="{LABEL_WIDTH_PX}" y="{y + 2}" width="{length:.1f}" '
            f'height="{BAR_HEIGHT_PX - 5}" fill="{colour}"/>'
            f'<text x="{LABEL_WIDTH_PX + length + 4:.1f}" y="{y + 13}" font-size="12">'
            f"{value:,.0f} {html.escape(unit)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _columns(unit: str) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    def ratio(row: dict[str, Any]) -> str:
        value = row.get("ratio_fastest_peer")
        return f"{value:.2f}x" if isinstance(value, int | float) else ""

    return [
        ("client", lambda r: str(r.get("label") or r.get("client", "?"))),
        (f"{unit} (median)", lambda r: _num(_median(r))),
        ("min - max", _spread),
        ("CPU µs/req", lambda r: _num(r.get("cpu_us_per_request"), 1)),
        ("p50 ms", lambda r: _timing(r, "latency_ms", "p50")),
        ("p90 ms", lambda r: _timing(r, "latency_ms", "p90")),
        ("p99 ms", lambda r: _timing(r, "latency_ms", "p99")),
        ("max ms", lambda r: _timing(r, "latency_ms", "max")),
        ("connect ms (p50)", lambda r: _timing(r, "connect_ms", "p50")),
        ("TLS ms (p50)", lambda r: _timing(r, "tls_ms", "p50")),
        ("writes/req", lambda r: _num(r.get("writes_per_request"), 2)),
        ("vs fastest peer", ratio),
    ]


def _table(rows: list[dict[str, Any]], unit: str) -> list[str]:
    """A Markdown table; columns that no row fills (an older lab, no --syscalls) are left out."""
    cells = [(name, [fill(r).replace("|", "/") for r in rows]) for name, fill in _columns(unit)]
    cells = [(name, values) for i, (name, values) in enumerate(cells) if i < 2 or any(values)]
    lines = [
        "| " + " | ".join(name for name, _ in cells) + " |",
        "|" + "|".join("---" if i == 0 else "--:" for i in range(len(cells))) + "|",
    ]
    for i in range(len(rows)):
        lines.append("| " + " | ".join(values[i] for _, values in cells) + " |")
    return lines


def render(path: Path, data: dict[str, Any], older: list[Path]) -> str:
    env = data.get("environment") or {}
    command = data.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    out = [
        f"Results file: [`{path.name}`](bench/{path.name}).",
        "",
        f"- **Date**: {data.get('started', 'unknown')}",
        f"- **Machine**: {env.get('cpu_model', 'unknown CPU')}, {env.get('cpus', '?')} CPUs, "
        f"{env.get('platform', 'unknown platform')}; Python {env.get('python', '?')}",
        f"- **Command**: `{command or 'unknown'}`",
        "",
    ]
    rows = [r for r in data["rows"] if isinstance(r, dict)]
    workloads = sorted({str(r.get("workload", "?")) for r in rows})
    for workload in workloads:
        ok = [r for r in rows if r.get("workload") == workload and r.get("status", "ok") == "ok"]
        ok.sort(key=lambda r: _median(r) or 0.0, reverse=True)
        variants = sorted({str(r.get("variant") or "") for r in ok})
        out.append(f"## Workload {workload}")
        out.append("")
        for variant in variants:
            group = [r for r in ok if str(r.get("variant") or "") == variant]
            unit = str(group[0].get("unit", "")) if group else ""
            if variant:
                out += [f"### {workload} {variant}", ""]
            out += [_chart(group, unit), "", *_table(group, unit), ""]
        skipped = [r for r in rows if r.get("workload") == workload and r not in ok]
        if skipped:
            out.append(
                "Not measured: "
                + "; ".join(
                    f"{r.get('label') or r.get('client')} ({r.get('status')}: "
                    f"{r.get('reason', '')})".replace("|", "/")
                    for r in skipped
                )
            )
            out.append("")
    if older:
        out.append("## Earlier results files")
        out.append("")
        out += [f"- [`{p.name}`](bench/{p.name})" for p in older]
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE or MARKER not in markdown:
        return markdown
    results = _load_results(Path(config["docs_dir"]) / "bench")
    if not results:
        body = (
            "No lab results file is in `docs/bench/` yet. `make bench` writes one "
            "(`bench-results/results.json`); a dated copy in `docs/bench/` appears here."
        )
    else:
        (path, data), older = results[0], [p for p, _ in results[1:]]
        body = render(path, data, older)
    return markdown.replace(MARKER, body)
