"""The interop matrix's process runner (tests/interop/servers/base.py ``running``): a server
that exits in the middle of a run leaves its log's tail on stderr, since its scratch
directory (and so the log) is deleted with the run."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from interop.servers.base import free_port, running

# The server listens, then dies with a message on its own stderr, as a crashing server does.
DYING_SERVER = """
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
time.sleep(0.3)
print("fatal: the server's last words", file=sys.stderr, flush=True)
sys.exit(3)
"""
EXIT_WAIT_S = 10.0


def test_a_server_that_dies_during_the_run_prints_its_log_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    with running([sys.executable, "-c", DYING_SERVER, str(port)], tmp_path / "s.log", port) as proc:
        deadline = time.monotonic() + EXIT_WAIT_S
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    err = capsys.readouterr().err
    assert "exited with 3 during the run" in err
    assert "fatal: the server's last words" in err


def test_a_server_stopped_by_the_run_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    with running([sys.executable, "-c", DYING_SERVER, str(port)], tmp_path / "s.log", port):
        pass
    assert capsys.readouterr().err == ""
