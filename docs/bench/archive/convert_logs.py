"""How the dated JSON files of docs/bench/ were made from the text logs kept here.

    PYTHONPATH=bench python docs/bench/archive/convert_logs.py docs/bench/archive/LOG.txt OUT.json

A log holds the lab's terminal tables (one per workload): median, min-max, CPU per request
(or per GB), RSS, errors, protocol, writes per request, ratios and notes of every row. That
is what a converted row keeps (``summary`` with ``n`` the repetitions, no ``reps``, no
latency: the lab did not measure it then); the document says ``converted_from``. A log
holding several runs gives one file per run (``-1``, ``-2``, ...). The former HTTP/2 lab's
JSON (a list of median runs, ``h2lab-*.json``) converts to rows with that one run as their
repetition. The HTTP/2 lab's and the soak's text logs have no tables and stay here as text.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from nodelay_bench.results import SCHEMA

NATIVE_NAMES = {"floor", "wrk", "ab", "h2load", "curl"}
VARIANTS = ("json()", "stream", "batch")
RUN = re.compile(
    r"^nodelay bench: (\w+) server at \S+ (\d+) rows, (\d+) repetition\(s\) each, scale ([\d.]+)"
)
TITLE = re.compile(r"^([a-j]) - ")


def _num(text: str) -> float | None:
    text = text.strip().replace(",", "")
    return None if text in ("", "-") else float(text)


def _row(cells: dict[str, str], workload: str, unit: str, repeat: int) -> dict[str, Any]:
    label = cells["client"].strip()
    kind = "python"
    m = re.match(r"(.*) \[(native|floor)\]$", label)
    if m:
        label, kind = m.group(1), m.group(2)
    elif label in NATIVE_NAMES:
        kind = "floor" if label == "floor" else "native"
    client, variant = label, ""
    for v in VARIANTS:
        if label.endswith(" " + v):
            client, variant = label[: -len(v) - 1], v
    lo, _, hi = cells["min-max"].strip().rpartition("-")
    peer = cells.get("vs fastest peer", "").strip()
    pm = re.match(r"([\d.]+)x \((.+)\)", peer)
    floor = cells.get("vs floor", "").strip().rstrip("x")
    cpu = _num(cells.get("CPU us/req", cells.get("CPU s/GB", "")))
    rss = _num(cells.get("RSS MB", ""))
    return {
        "workload": workload,
        "variant": variant,
        "client": client,
        "label": label,
        "kind": kind,
        "flavour": "async" if client.endswith("-async") or client == "aiohttp" else "sync",
        "status": "ok",
        "reason": "",
        "unit": unit,
        "summary": {
            "median": _num(cells[f"{unit} median"]),
            "min": _num(lo),
            "max": _num(hi),
            "mean": None,
            "n": repeat,
        },
        "cpu_us_per_request": cpu if unit == "req/s" else None,
        "cpu_s_per_gb": cpu if unit == "MB/s" else None,
        "peak_rss_kb": round(rss * 1024) if rss is not None else None,
        "errors": int(_num(cells.get("errors", "0")) or 0),
        "protocol": cells.get("protocol", "").strip(),
        "chunks": None,
        "note": cells.get("notes", "").strip(),
        "writes_per_request": _num(cells.get("writes/req", "")),
        "ratio_fastest_peer": float(pm.group(1)) if pm else None,
        "fastest_peer": pm.group(2) if pm else "",
        "ratio_floor": _num(floor) if floor not in ("", "-") else None,
        "latency_ms": None,
        "connect_ms": None,
        "tls_ms": None,
        "reps": [],
    }


def _split(line: str, sep: str) -> list[str]:
    return [c for c in line.strip().strip(sep).split(sep)]


def convert(text: str, source: str, date: str) -> list[dict[str, Any]]:
    """One results document per run found in ``text``."""
    docs: list[dict[str, Any]] = []
    doc: dict[str, Any] | None = None
    workload = unit = ""
    header: list[str] = []
    command: list[str] = []
    repeat = 0
    for line in text.splitlines():
        if line.startswith("$ "):
            command = line[2:].split()
        if m := RUN.match(line):
            repeat = int(m.group(3))
            doc = {
                "schema": SCHEMA,
                "converted_from": source,
                "command": command,
                "started": date,
                "finished": date,
                "options": {"repeat": repeat, "scale": float(m.group(4)), "syscalls": False},
                "server": {"kind": m.group(1)},
                "environment": {"note": "not recorded in the text log"},
                "tools": {},
                "pending_workloads": [],
                "rows": [],
            }
            docs.append(doc)
            command = []
        elif (m := TITLE.match(line)) and doc is not None:
            workload, header = m.group(1), []
        elif line.startswith("┃") and doc is not None:
            header = [c.strip() for c in _split(line, "┃")]
            if "client" not in header:  # the skipped/failed table: not rows
                header = []
                continue
            unit = "MB/s" if any(h.startswith("MB/s") for h in header) else "req/s"
            if "writes/req" in header:
                doc["options"]["syscalls"] = True
        elif line.startswith("│") and header and doc is not None:
            values = _split(line, "│")
            cells = dict(zip(header, values, strict=False))
            if not cells["client"].strip():  # a wrapped cell: notes continue
                if doc["rows"]:
                    doc["rows"][-1]["note"] += " " + cells.get("notes", "").strip()
                continue
            doc["rows"].append(_row(cells, workload, unit, repeat))
        elif line.startswith("└"):
            header = []
    return [d for d in docs if d["rows"]]


def convert_h2lab(runs: list[dict[str, Any]], source: str, date: str) -> list[dict[str, Any]]:
    """The former HTTP/2 lab's rows (each the median of ``runs`` runs) as one document."""
    from nodelay_bench.h2lab import _row
    from nodelay_bench.results import add_ratios

    rows = []
    for r in runs:
        if r["workload"] == "g":
            client, variant = r["client"], r["transport"]
        else:
            h2 = r["client"].startswith("nodelay h2")
            client, variant = "nodelay", f"{'h2 x1' if h2 else 'h1 x6'} {r['transport']}"
        row = _row(r["workload"], client, variant, [{**r, "bytes": 0}])
        row.note = f"median of {r.get('runs', '?')} runs; {row.note}"
        rows.append(row)
    add_ratios(rows)
    doc = {
        "schema": SCHEMA,
        "converted_from": source,
        "command": ["python", "-m", "nodelay.bench.h2lab", "--repeat", "5"],
        "started": date,
        "finished": date,
        "options": {"workloads": ["g", "i"], "repeat": 1, "syscalls": False},
        "server": {"kind": "embedded", "h2": "embedded h2c and h2+TLS"},
        "environment": {"note": "not recorded"},
        "tools": {},
        "pending_workloads": [],
        "rows": [row.to_dict() for row in rows],
    }
    return [doc]


def main(argv: list[str]) -> int:
    src, out = Path(argv[0]), Path(argv[1])
    match = re.search(r"(\d{4}-\d{2}-\d{2})", src.name)
    date = match.group(1) if match else "?"
    if src.suffix == ".json":
        docs = convert_h2lab(json.loads(src.read_text()), f"archive/{src.name}", date)
    else:
        docs = convert(src.read_text(), f"archive/{src.name}", date)
    for i, doc in enumerate(docs, 1):
        target = out if len(docs) == 1 else out.with_name(f"{out.stem}-{i}{out.suffix}")
        target.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"{src.name}: {len(doc['rows'])} rows -> {target}")
    return 0 if docs else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
