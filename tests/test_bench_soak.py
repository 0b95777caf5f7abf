"""``python -m nodelay.bench.soak``: a short run of every kind against its own embedded
server process prints RSS lines and a verdict."""

from __future__ import annotations

import re
import subprocess
import sys

from nodelay.bench import soak


def test_short_soak_of_every_kind() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay.bench.soak",
            "--requests",
            "400",
            "--warmup",
            "100",
            "--every",
            "100",
            "--mix",
            ",".join(soak.KINDS),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = re.findall(r"^\s+([\d,]+)\s+[\d,]+\s+([\d.]+)\s", out.stdout, re.MULTILINE)
    assert [int(n.replace(",", "")) for n, _ in rows] == [100, 200, 300, 400]
    assert all(float(rss) > 0 for _, rss in rows)
    assert "RSS flat within ±10 MB" in out.stdout


def test_unknown_kinds_are_refused() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "nodelay.bench.soak", "--mix", "get,ftp"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "--mix takes kinds among" in out.stderr
