"""Write syscalls per request, counted with ``strace -c`` (when strace is installed).

Start-up and warm-up also write, so the worker runs twice, with n1 and n2 requests, and
the figure is the difference of the two counts over ``n2 - n1``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from . import child_env

__all__ = ["STRACE_TRACE", "count_writes", "parse_strace_summary", "writes_per_request"]

STRACE_TRACE = "write,writev,sendto,sendmsg"
N1, N2 = 50, 250
TIMEOUT = 300.0

ArgvFor = Callable[[int], list[str]]
"""n requests -> the command that sends them."""


def parse_strace_summary(text: str) -> int:
    """Total calls of the traced syscalls from ``strace -c`` output."""
    total = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[-1] in STRACE_TRACE.split(","):
            # % time, seconds, usecs/call, calls, [errors,] syscall
            m = re.fullmatch(r"\d+", parts[3])
            if m:
                total += int(parts[3])
    return total


def count_writes(argv: Sequence[str], out: Path, env: dict[str, str] | None = None) -> int | None:
    strace = shutil.which("strace")
    if strace is None:
        return None
    proc = subprocess.run(
        [strace, "-f", "-c", "-e", f"trace={STRACE_TRACE}", "-o", str(out), *argv],
        capture_output=True,
        timeout=TIMEOUT,
        env=env if env is not None else child_env(),
    )
    if proc.returncode != 0 or not out.exists():
        return None
    return parse_strace_summary(out.read_text())


def writes_per_request(
    argv_for: ArgvFor, tmp: Path, env: dict[str, str] | None = None
) -> float | None:
    """``argv_for(n)`` builds the command for n requests (run with ``env``, default the lab's
    child environment); None if strace is missing."""
    c1 = count_writes(argv_for(N1), tmp / "strace1.txt", env)
    c2 = count_writes(argv_for(N2), tmp / "strace2.txt", env)
    if c1 is None or c2 is None:
        return None
    return max(0.0, (c2 - c1) / (N2 - N1))
