"""The HTML report: one self-contained file (styles inline, the chart a PNG data URI, no
script, no external address), readable offline and attachable to a pull request.

Built from a results document and its rows, so it can be rebuilt from any results file
(``nodelay bench --from FILE --html OUT``).
"""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path
from typing import Any

from .report import connect_cell, fmt_ms, fmt_num, fmt_ratio, timing_cells
from .results import Row, Timing
from .workloads import WORKLOADS, title_of

__all__ = ["render_html", "write_html"]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1400px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; }
th { background: #f2f2f2; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.nodelay td { font-weight: 600; color: #a31515; } tr.native td { color: #666; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 1em; }
dt { font-weight: 600; } dd { margin: 0; } code { font-size: 12px; }
img { max-width: 100%; border: 1px solid #ddd; } .note { color: #555; }
"""
"""The report's only styling (inline: the file needs nothing else to render)."""


def _cell(text: str, numeric: bool = False) -> str:
    return f'<td class="n">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>"


def _chart(rows: list[Row], title: str) -> str:
    """The PNG chart as an ``<img>`` with a data URI ("" when matplotlib is missing)."""
    try:
        from .plot import plot
    except ImportError:
        return ""
    buf = io.BytesIO()
    try:
        plot(rows, buf, title=title)
    except (ImportError, ValueError):
        return ""
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{escape(title)}" src="data:image/png;base64,{data}">'


def _workload_table(wid: str, rows: list[Row], syscalls: bool) -> str:
    measured = sorted((r for r in rows if r.status == "ok"), key=lambda r: -(r.median() or 0.0))
    if not measured:
        return ""
    unit = measured[0].unit
    connects = any(r.connect_ms for r in measured)
    tls = any(r.tls_ms for r in measured)
    head = ["client", f"{unit} median", "min-max", "CPU µs/req" if unit == "req/s" else "CPU s/GB"]
    head += ["p50 ms", "p90 ms", "p99 ms", "max ms"]
    head += ["connect ms p50 / max"] if connects else []
    head += ["TLS ms p50 / max"] if tls else []
    head += ["RSS MB", "errors", "protocol"]
    head += ["writes/req"] if syscalls else []
    head += ["vs fastest peer", "vs floor", "notes"]
    count = f" ({WORKLOADS[wid].count(1.0):,} requests at scale 1)" if wid in WORKLOADS else ""
    out = [f'<h2 id="w-{escape(wid)}">{escape(wid)} - {escape(title_of(wid))}{count}</h2>']
    out.append("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>")
    for r in measured:
        s = r.summary()
        cpu = r.cpu_us() if unit == "req/s" else r.cpu_s_per_gb()
        notes = "; ".join(x for x in (r.note, r.reason) if x)
        cells = [
            _cell(r.label + ("" if r.kind == "python" else f" [{r.kind}]")),
            _cell(fmt_num(s.median if s else None), True),
            _cell(f"{fmt_num(s.min if s else None)}-{fmt_num(s.max if s else None)}", True),
            _cell(fmt_num(cpu, 1 if unit == "req/s" else 2), True),
            *(_cell(c, True) for c in timing_cells(r.latency_ms)),
        ]
        if connects:
            cells.append(_cell(connect_cell(r.connect_ms), True))
        if tls:
            cells.append(_cell(connect_cell(r.tls_ms), True))
        cells += [
            _cell(fmt_num(r.peak_rss_kb / 1024 if r.peak_rss_kb else None, 1), True),
            _cell(str(r.errors()), True),
            _cell(r.protocol or "?"),
        ]
        if syscalls:
            cells.append(_cell(fmt_num(r.writes_per_request, 2), True))
        peer = fmt_ratio(r.ratio_fastest_peer) + (f" ({r.fastest_peer})" if r.fastest_peer else "")
        cells += [_cell(peer, True), _cell(fmt_ratio(r.ratio_floor), True), _cell(notes)]
        kind = "nodelay" if r.is_nodelay else ("native" if r.kind != "python" else "")
        out.append(f'<tr class="{kind}">' + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _connection_times(rows: list[Row]) -> str:
    """ab's "Connection Times" table: the rows that opened connections while timed."""
    opened = [r for r in rows if r.status == "ok" and (r.connect_ms or r.tls_ms)]
    if not opened:
        return ""
    head = ["workload", "row", "phase", "mean", "p50", "p90", "p99", "max", "connections"]
    out = [
        "<h2>Connection times (ms)</h2>",
        '<p class="note">Rows that opened connections while timed, where the client or '
        "tool reports it (nodelay, pycurl, ab, curl, h2load).</p>",
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>",
    ]
    for r in opened:
        phases: list[tuple[str, Timing | None]] = [("connect", r.connect_ms), ("TLS", r.tls_ms)]
        for phase, timing in phases:
            if not timing:
                continue
            n = timing.get("n")
            out.append(
                "<tr>"
                + _cell(r.workload)
                + _cell(f"{r.label} [{r.kind}]" if r.kind != "python" else r.label)
                + _cell(phase)
                + _cell(fmt_ms(timing.get("mean")), True)
                + "".join(_cell(c, True) for c in timing_cells(timing))
                + _cell("-" if n is None else f"{n:,.0f}", True)
                + "</tr>"
            )
    out.append("</table>")
    return "\n".join(out)


def _skipped(rows: list[Row], doc: dict[str, Any]) -> str:
    items = [
        f"<li>{escape(r.status)}: {escape(r.workload)} {escape(r.label)}: {escape(r.reason)}</li>"
        for r in rows
        if r.status != "ok"
    ]
    items += [
        f"<li>pending: {escape(p['workload'])}: {escape(p['reason'])}</li>"
        for p in doc.get("pending_workloads", [])
    ]
    if not items:
        return ""
    return "<h2>Skipped and failed rows</h2><ul>" + "".join(items) + "</ul>"


def _header(doc: dict[str, Any], title: str) -> str:
    env = doc.get("environment", {})
    facts = [
        ("started", doc.get("started", "?")),
        ("finished", doc.get("finished", "?")),
        ("machine", f"{env.get('cpu_model', '?')}, {env.get('cpus', '?')} CPUs"),
        ("platform", env.get("platform", "?")),
        ("python", f"{env.get('python_implementation', '')} {env.get('python', '?')}"),
        ("nodelay", env.get("packages", {}).get("nodelay", "?")),
        ("server", ", ".join(f"{k}: {v}" for k, v in doc.get("server", {}).items())),
        ("command", " ".join(doc.get("command", []))),
    ]
    if doc.get("converted_from"):
        facts.append(("converted from", str(doc["converted_from"])))
    dl = "".join(f"<dt>{escape(k)}</dt><dd><code>{escape(str(v))}</code></dd>" for k, v in facts)
    return (
        f"<h1>{escape(title)}</h1><dl>{dl}</dl>"
        '<p class="note">Throughput is the median over repetitions (min-max beside it); CPU '
        "is the client process's user+system time per request; latency percentiles cover "
        "every request of every timed repetition (nearest rank). Compare ratios measured in "
        "the same run, never figures from different machines.</p>"
    )


def render_html(doc: dict[str, Any], rows: list[Row], title: str) -> str:
    """The whole report as one HTML string."""
    order: list[str] = []
    for r in rows:
        if r.workload not in order:
            order.append(r.workload)
    syscalls = bool(doc.get("options", {}).get("syscalls"))
    tables = [
        _workload_table(wid, [r for r in rows if r.workload == wid], syscalls) for wid in order
    ]
    body = "\n".join(
        x
        for x in (
            _header(doc, title),
            _chart(rows, title),
            *tables,
            _connection_times(rows),
            _skipped(rows, doc),
        )
        if x
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def write_html(doc: dict[str, Any], rows: list[Row], path: Path, title: str) -> None:
    """Write the report to ``path``."""
    path.write_text(render_html(doc, rows, title), encoding="utf-8")
