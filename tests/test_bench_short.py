"""``make bench``'s short lab (``nodelay bench --short``) and the lab's one line per
finished row when stderr is not a terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bench_lab import run_lab
from nodelay_bench import clients as client_registry
from nodelay_bench.short import (
    SHORT_PEER_COUNT,
    SHORT_PEERS,
    SHORT_WORKLOADS,
    short_clients,
)

ROOT = Path(__file__).resolve().parents[1]


def test_short_lab_takes_the_fastest_installed_peers() -> None:
    installed = {"rnet", "aiohttp", "http.client", "httpx"}

    def probe(name: str) -> str | None:
        return None if name in installed else f"{name} is not installed"

    assert short_clients(probe) == ["nodelay", "nodelay-async", "floor", "rnet", "aiohttp"]
    assert short_clients(lambda name: "missing") == ["nodelay", "nodelay-async", "floor"]
    assert SHORT_PEER_COUNT <= len(SHORT_PEERS)
    assert all(name in client_registry.CLIENTS for name in SHORT_PEERS)


@pytest.mark.timeout(180)
def test_short_lab_runs_the_headline_workloads_and_says_each_row(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    proc, doc = run_lab(tmp_path / "short.json", "--short", "--no-pin", timeout=170)
    options = doc["options"]
    assert options["short"] is True and options["workloads"] == list(SHORT_WORKLOADS)
    assert options["clients"] == short_clients(client_registry.probe)
    rows = doc["rows"]
    assert {r["workload"] for r in rows} == set(SHORT_WORKLOADS)
    assert all(r["status"] in ("ok", "skipped") and r.get("errors", 0) == 0 for r in rows)
    # stderr is a pipe here: one line per row, numbered, with its figure or its reason.
    lines = [line for line in proc.stderr.splitlines() if line.startswith("nodelay bench: [")]
    assert len(lines) == len(rows), proc.stderr
    assert lines[-1].startswith(f"nodelay bench: [{len(rows)}/{len(rows)}] ")
    assert any(re.search(r"\] a: nodelay: [\d,]+ req/s, [\d.]+ µs CPU/req", line) for line in lines)


def test_make_bench_runs_the_short_lab_and_bench_full_the_matrix() -> None:
    makefile = (ROOT / "Makefile").read_text()
    bench = re.search(r"^bench: .*?(?=^\S)", makefile, re.S | re.M)
    full = re.search(r"^bench-full: .*?(?=^\S)", makefile, re.S | re.M)
    assert bench and "--short" in bench.group(0)
    assert full and "--short" not in full.group(0) and "nodelay bench" in full.group(0)
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## The two set-up commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^- `(make [\w-]+)`", setup, re.M)
    assert commands == ["make bench", "make test"]
