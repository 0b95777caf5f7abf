"""How long ``import nodelay`` takes, next to its peers (docs/benchmarks.md: "all").

    python -m nodelay_bench.imports                    # nodelay and every installed peer
    python -m nodelay_bench.imports --modules nodelay,httpx --runs 41 --json imports.json

A script that makes one request pays the import before anything else, and a CLI tool pays
it on every run. Each module is imported by ``--runs`` fresh interpreters (this one, with
``-X importtime``), and its time is the cumulative figure Python reports for the top-level
module: its own code and every module it pulls in that the interpreter had not loaded at
startup, without the interpreter's start itself. The interpreters alternate between the
modules, so a slower spell of a loaded machine hits every module alike; the median and the
range are reported. The target is nodelay's alone: under ``TARGET_MS``.

Modules are timed as a pip install leaves them, with their bytecode cached: the children run
without ``PYTHONDONTWRITEBYTECODE``, and an untimed first import of each module writes the
``__pycache__`` files a checkout (``make dev``) or a venv made with that variable set lacks.
Without them every import compiles the sources, which costs nodelay more than its import.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import clients as client_registry

__all__ = ["TARGET_MS", "import_us", "main", "measure", "modules_of_peers"]

TARGET_MS = 30.0
"""docs/benchmarks.md: ``import nodelay`` under 30 ms."""
DEFAULT_RUNS = 21
"""Fresh interpreters per module: enough for a median that a few slow spells do not move."""
IMPORT_TIMEOUT_S = 60.0
"""Longest one interpreter may take to import a module (a hung import is an error)."""

# One line of ``-X importtime``: "import time: <self us> | <cumulative us> | <indent><name>".
_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


def import_us(importtime_output: str, module: str) -> int:
    """The cumulative microseconds of ``module`` in the stderr of ``python -X importtime``:
    the line of the module itself at the top level (indent of one space), not of a module it
    imports that happens to share its name."""
    found = None
    for line in importtime_output.splitlines():
        m = _LINE.match(line)
        if m and m.group(4) == module and len(m.group(3)) == 1:
            found = int(m.group(2))
    if found is None:
        raise ValueError(f"no top-level import time for {module!r} in the output")
    return found


def _caching_env() -> dict[str, str]:
    """This environment, bytecode caches allowed."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _one_import(module: str, python: str) -> int:
    proc = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=_caching_env(),
        timeout=IMPORT_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"import {module} failed: {last[0]}")
    return import_us(proc.stderr, module)


def measure(modules: list[str], runs: int, python: str = sys.executable) -> dict[str, list[int]]:
    """Microseconds of each import over ``runs`` fresh interpreters, the modules taking
    turns within each round, after one untimed import of each (bytecode caches written)."""
    for module in modules:
        _one_import(module, python)
    times: dict[str, list[int]] = {m: [] for m in modules}
    for _ in range(runs):
        for module in modules:
            times[module].append(_one_import(module, python))
    return times


def modules_of_peers() -> list[str]:
    """nodelay, then the import name of each installed peer of the lab, once each."""
    names = dict.fromkeys(["nodelay", *(module for _, module in client_registry.CLIENTS.values())])
    return [n for n in names if n == "nodelay" or importlib.util.find_spec(n) is not None]


def _summary(times: dict[str, list[int]]) -> list[dict[str, Any]]:
    rows = [
        {
            "module": module,
            "median_ms": statistics.median(us) / 1000,
            "min_ms": min(us) / 1000,
            "max_ms": max(us) / 1000,
            "runs": len(us),
        }
        for module, us in times.items()
    ]
    return sorted(rows, key=lambda r: r["median_ms"])


def _print(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    ours = next((r["median_ms"] for r in rows if r["module"] == "nodelay"), None)
    table = Table(title="import time (ms, cumulative, fresh interpreter; -X importtime)")
    for column in ("module", "median", "min-max", "vs nodelay"):
        table.add_column(column, justify="left" if column == "module" else "right")
    for r in rows:
        ratio = f"{r['median_ms'] / ours:.2f}x" if ours else "-"
        table.add_row(
            r["module"], f"{r['median_ms']:.1f}", f"{r['min_ms']:.1f}-{r['max_ms']:.1f}", ratio
        )
    console = Console()
    console.print(table)
    if ours is not None:
        verdict = "met" if ours < TARGET_MS else "not met"
        console.print(f"target: import nodelay < {TARGET_MS:.0f} ms: {verdict} ({ours:.1f} ms)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodelay_bench.imports", description=__doc__)
    parser.add_argument(
        "--modules",
        metavar="NAMES",
        help="comma-separated modules (default: nodelay and every installed peer of the lab)",
    )
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, metavar="N")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    modules = (
        [m.strip() for m in args.modules.split(",") if m.strip()]
        if args.modules
        else modules_of_peers()
    )
    rows = _summary(measure(modules, args.runs))
    _print(rows)
    if args.json:
        doc = {"python": sys.version.split()[0], "target_ms": TARGET_MS, "imports": rows}
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
