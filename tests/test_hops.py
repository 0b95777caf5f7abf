"""docs/architecture.md's hop count ("Hop count") is what the counter (tools/hops.py) reads
on this checkout's build: the sync path's figures on the page are the counter's, so the page
cannot drift from the code silently. The counter's own arithmetic is checked on a chain
written here."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nodelay
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from hops import Chain, Frame  # noqa: E402  (tools/ is not a package)

PAGE = ROOT / "docs" / "architecture.md"
COUNTER_TIMEOUT = 600.0
"""Seconds for one run of the counter: gdb loads the dev build's line tables (tens of
seconds on a busy machine)."""
_ROW = re.compile(
    r"^\| `(?P<path>\w+)` \|[^|]*\| (?P<hops>\d+) \| (?P<functions>\d+) \| (?P<files>\d+) \|$"
)


def page_counts() -> dict[str, tuple[int, int, int]]:
    """The page's table: path → (hops, functions, files)."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Hop count") :]
    rows = {}
    for line in section.splitlines():
        m = _ROW.match(line.strip())
        if m:
            rows[m["path"]] = (int(m["hops"]), int(m["functions"]), int(m["files"]))
    return rows


def test_a_hop_is_a_call_into_another_file() -> None:
    chain = Chain(
        "sync",
        (
            Frame("Client.get", "python/nodelay/_client.py"),
            Frame("Client._get", "python/nodelay/_client.py"),
            Frame("Engine::fetch", "crates/nodelay-py/src/engine.rs"),
            Frame("send", "crates/nodelay-core/src/client.rs"),
            Frame("Engine::helper", "crates/nodelay-py/src/engine.rs"),
        ),
    )
    assert (chain.hops, len(chain.frames), chain.files) == (3, 5, 3)


def test_the_page_has_every_path() -> None:
    from hops import PATHS

    assert set(page_counts()) == set(PATHS)


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
@pytest.mark.timeout(COUNTER_TIMEOUT + 30)
def test_sync_count_on_the_page_is_the_counters() -> None:
    if not Path(nodelay.__file__).resolve().is_relative_to(ROOT / "python"):
        pytest.skip("the counter reads this checkout's dev build (make dev), not a wheel")
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "hops.py"), "sync", "--json"],
        capture_output=True,
        text=True,
        timeout=COUNTER_TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (chain,) = json.loads(run.stdout)
    measured = (chain["hops"], chain["functions"], chain["files"])
    assert page_counts()["sync"] == measured, "\n".join(
        f"{f['file']}  {f['function']}" for f in chain["frames"]
    )
