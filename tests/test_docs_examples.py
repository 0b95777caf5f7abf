"""Every example in README.md and docs/ runs as shown (docs/examples.md has the rules).

Each ```python block runs as a program of its own, in a fresh interpreter, in an empty
folder; each ```sh or ```console block whose lines are all ``nodelay`` commands (not
``serve`` or ``bench``) runs in bash the same way. Examples talk to ``DOC_SERVER``, the
address of ``nodelay serve --port 8080 --h2``; the test starts ``nodelay serve`` on a free
port instead (other programs may hold 8080) and puts its address in their place. A block
preceded by ``<!-- example: not run (the reason) -->`` is not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_SERVER = "http://127.0.0.1:8080"
"""The server the examples name: ``nodelay serve --port 8080 --h2``."""

EXAMPLE_TIMEOUT = 60.0
"""Seconds one example may run (a fresh interpreter; some examples wait on purpose)."""

SERVER_START_TIMEOUT = 30.0
"""Seconds ``nodelay serve`` may take to say where it listens."""

NOT_RUN = re.compile(r"^<!-- example: not run \((?P<reason>.+)\) -->$")
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<lang>[\w-]*)\s*$")
SHELL = ("sh", "console", "bash", "shell")
SHELL_SKIPPED = ("nodelay serve", "nodelay bench")
"""Commands a shell example may show but the test does not run: they run until stopped."""


@dataclass(frozen=True)
class Example:
    """One fenced block of a page: where it starts, its language and text, and why it is
    not run (``None``: it runs)."""

    page: str
    line: int
    language: str
    code: str
    not_run: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> Iterator[Example]:
    """The fenced blocks of ``path``, with the marker of the line before each."""
    lines = path.read_text("utf-8").splitlines()
    page = str(path.relative_to(ROOT))
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i].strip())
        if opened is None:
            i += 1
            continue
        # A fence closes with as many backticks; blocks inside a longer fence (a page
        # showing how to write an example) are its text, not examples.
        end = i + 1
        while end < len(lines) and lines[end].strip() != opened["fence"]:
            end += 1
        marker = NOT_RUN.match(lines[i - 1].strip()) if i else None
        code = "\n".join(lines[i + 1 : end]) + "\n"
        yield Example(page, i + 1, opened["lang"], code, marker["reason"] if marker else None)
        i = end + 1


def _commands(example: Example) -> list[str]:
    """The command lines of a shell block (comments, blank lines and ``$ `` prompts out)."""
    lines = [line.strip().removeprefix("$ ") for line in example.code.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def runnable(example: Example) -> bool:
    """A Python block, or a shell block of ``nodelay`` commands the test can run."""
    if example.language == "python":
        return True
    if example.language not in SHELL:
        return False
    commands = _commands(example)
    return bool(commands) and all(
        c.startswith("nodelay ") and not c.startswith(SHELL_SKIPPED) for c in commands
    )


EXAMPLES = [e for path in pages() for e in blocks(path) if runnable(e)]


@pytest.fixture(scope="module")
def doc_server() -> Iterator[str]:
    """``nodelay serve --h2`` in its own process: its base URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "nodelay", "serve", "--port", "0", "--h2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "nodelay server listening on http://..."
        found = re.search(r"(http://\S+)", line)
        assert found, f"nodelay serve said {line!r}"
        yield found.group(1).rstrip("/")
    finally:
        server.terminate()
        server.wait(timeout=SERVER_START_TIMEOUT)


def _environment(folder: Path) -> dict[str, str]:
    proxies = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    env = {k: v for k, v in os.environ.items() if k.lower() not in proxies}
    # A shell example's `nodelay` is this interpreter's.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(folder)  # no ~/.netrc or ~/.curlrc of the machine
    return env


def run_example(example: Example, server: str, folder: Path) -> subprocess.CompletedProcess[str]:
    if example.language == "python":
        command = [sys.executable, "-c", example.code.replace(DOC_SERVER, server)]
    else:
        script = "\n".join(_commands(example)).replace(DOC_SERVER, server)
        command = ["bash", "-e", "-o", "pipefail", "-c", script]
    return subprocess.run(
        command,
        cwd=folder,
        env=_environment(folder),
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example_runs(example: Example, doc_server: str, tmp_path: Path) -> None:
    if example.not_run is not None:
        pytest.skip(f"marked not run: {example.not_run}")
    done = run_example(example, doc_server, tmp_path)
    assert done.returncode == 0, (
        f"{example.id} exited {done.returncode}\n--- stdout\n{done.stdout}\n"
        f"--- stderr\n{done.stderr}"
    )


def test_markers_sit_right_before_a_fence_and_give_a_reason() -> None:
    misplaced = []
    for path in pages():
        lines = path.read_text("utf-8").splitlines()
        for i, line in enumerate(lines):
            if "<!-- example:" not in line:
                continue
            follows = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if not NOT_RUN.match(line.strip()) or not FENCE.match(follows):
                misplaced.append(f"{path.relative_to(ROOT)}:{i + 1}: {line.strip()}")
    assert misplaced == []


def test_the_extraction_finds_the_examples() -> None:
    found = {e.page for e in EXAMPLES}
    assert {"README.md", "docs/quickstart.md", "docs/guide/cookies.md"} <= found
    assert all(e.code.strip() for e in EXAMPLES)
