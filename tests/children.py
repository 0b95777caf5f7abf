"""Child processes for the tests that need one: a forked copy of the test process (fork
safety) and a fresh interpreter interrupted with Ctrl-C (SIGINT reaches a blocked request).

Both are bounded: a child that hangs is killed and fails the test.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable

__all__ = ["CHILD_DEADLINE", "exit_code_after_ctrl_c", "forked_child_succeeds", "read_line"]

CHILD_DEADLINE = 20.0
"""Seconds a child may take before it counts as hung (it needs a few under load)."""
INTERRUPT_AFTER = 0.5
"""Seconds between the child's "ready" and the SIGINT: long enough to be blocked inside
the request, not merely about to start it."""
INTERRUPT_WITHIN = 3.0
"""Seconds the child may take to exit after the SIGINT."""


def forked_child_succeeds(child: Callable[[], bool], parent: Callable[[], None]) -> None:
    """Fork; the child runs ``child`` and exits 0 if it returned True (1 if False, 2 if it
    raised), never returning into pytest; meanwhile the parent runs ``parent``. Then assert
    the child exited 0 within ``CHILD_DEADLINE``."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if child() else 1
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    try:
        parent()
    finally:
        status = _wait(pid)
    assert os.waitstatus_to_exitcode(status) == 0


def _wait(pid: int) -> int:
    deadline = time.monotonic() + CHILD_DEADLINE
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("forked child hung")


def exit_code_after_ctrl_c(script: str, *args: str) -> int:
    """Run ``python -c script *args``; once it prints "ready" (and ``INTERRUPT_AFTER``
    later), send SIGINT and return its exit code, asserting it exits within
    ``INTERRUPT_WITHIN``. The script exits 42 from its ``except KeyboardInterrupt``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read_line(proc, CHILD_DEADLINE).strip() == "ready"
        time.sleep(INTERRUPT_AFTER)
        sent_at = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=INTERRUPT_WITHIN)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"child still running {INTERRUPT_WITHIN} s after SIGINT") from None
        assert time.monotonic() - sent_at < INTERRUPT_WITHIN
        if proc.returncode != 42 and proc.stderr is not None:
            sys.stderr.write(proc.stderr.read())  # shown by pytest with the failure
        return proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)


def read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """One line of the child's stdout, or fail after ``timeout`` seconds."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise AssertionError(f"no output from child within {timeout} s")
    return proc.stdout.readline()
