"""The soak (``python -m nodelay_bench.soak``, ``make soak``): a short run of every kind
prints its progress lines and passes; its verdict fails on growth, fd leaks and crossed
responses; unknown kinds are refused."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from nodelay_bench import child_env, soak


@pytest.mark.timeout(120)
def test_short_soak_of_every_kind_passes() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay_bench.soak",
            "--requests",
            "800",
            "--every",
            "200",
            "--load-requests",
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=110,
        env=child_env(),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = re.findall(r"^\s+([\d,]+)\s+[\d,]+\s+([\d.]+)\s+\d+$", out.stdout, re.MULTILINE)
    assert [int(n.replace(",", "")) for n, _ in rows] == [200, 400, 600, 800]
    assert all(float(rss) > 0 for _, rss in rows)
    ops = re.search(r"ops: (\{.*\})", out.stdout)
    assert ops is not None
    assert all(f"'{kind}'" in ops.group(1) for kind in soak.KINDS)  # every kind ran
    assert "crossed responses: 0, unexpected outcomes: 0" in out.stdout
    assert out.stdout.rstrip().endswith("soak: OK")


def test_verdict_fails_on_growth_leaks_and_crossing() -> None:
    report = soak.Report(limit_kib=10 * 1024, rss_warm_kib=50_000, rss_end_kib=50_000 + 10 * 1024)
    report.fds_warm = report.fds_end = 12
    assert report.problems() == []  # exactly at the limit
    report.rss_end_kib += 1
    report.fds_end = 13
    report.crossed = 1
    problems = report.problems()
    assert len(problems) == 3
    assert "RSS grew by 10.0 MB (limit 10 MB)" in problems[1]
    assert "fd count grew from 12 to 13" in problems[2]


def test_unknown_kinds_are_refused() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "nodelay_bench.soak", "--mix", "keepalive,ftp"],
        capture_output=True,
        text=True,
        timeout=30,
        env=child_env(),
    )
    assert out.returncode == 2 and "--mix takes kinds among" in out.stderr
