"""One end-to-end run of the lab (``python -m nodelay_bench ... --json FILE``) for the tests
of tests/test_bench.py and tests/test_bench_lang.py: the process and its results file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from nodelay_bench import child_env

__all__ = ["check_reference_rows", "run_lab"]


def run_lab(
    out_json: Path,
    *args: str,
    timeout: float,
    module: tuple[str, ...] = ("nodelay_bench",),
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the lab with ``args`` at one repetition (``--quick``) and scale 0.05, writing
    ``out_json``; returns the finished process and the results document. ``module``: how
    the lab is started (``("nodelay", "bench")``: through the package's command). Fails the
    test if the lab exits non-zero."""
    argv = [sys.executable, "-m", *module, "--quick", "--scale", "0.05", *args]
    proc = subprocess.run(
        [*argv, "--json", str(out_json)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env() if env is None else env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out_json.read_text())


def check_reference_rows(
    doc: dict[str, Any], reference: str, ours: str, peer: str, workloads: str = "ae"
) -> list[dict[str, Any]]:
    """Asserts that the reference row ``reference`` (results.REFERENCES) ran each workload
    with every answer right (the same checks as every row's) and that the nodelay row
    ``ours`` was compared with ``peer`` ("" for none), never with the reference row.
    Returns the reference rows for the caller's own checks."""
    rows = {(r["workload"], r["client"]): r for r in doc["rows"]}
    found = []
    for wid in workloads:
        row = rows[(wid, reference)]
        assert row["status"] == "ok" and row["errors"] == 0, row
        assert row["cpu_us_per_request"] > 0 and row["ratio_fastest_peer"] is None
        assert rows[(wid, ours)]["fastest_peer"] == peer
        found.append(row)
    return found
