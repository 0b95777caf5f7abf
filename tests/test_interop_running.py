"""The interop matrix's process runner (tests/interop/servers/base.py ``running``): a server
that exits in the middle of a run leaves its log's tail on stderr, since its scratch
directory (and so the log) is deleted with the run; and each protocol's checks get a server
process of their own (tests/interop/run.py ``run_server``)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from interop import report
from interop.servers.base import Endpoint, free_port, running

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


class _CountingLauncher:
    """A launcher whose every start yields two endpoints (h1, h2c) named by that start."""

    name = "counting"

    def __init__(self) -> None:
        self.starts = 0

    def unavailable(self) -> None:
        return None

    @contextlib.contextmanager
    def start(self, env: object) -> Iterator[list[Endpoint]]:
        self.starts += 1
        yield [
            Endpoint(self.name, p, f"http://127.0.0.1:{self.starts}/{p}", True)
            for p in ("h1", "h2c")
        ]


def test_each_protocol_gets_a_fresh_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that crashes during one protocol's checks costs only that protocol's: the
    next protocol's checks run on a server process started for them."""
    from interop import run

    ran: list[tuple[str, str]] = []
    monkeypatch.setattr(
        run, "run_endpoint", lambda ep, *args: ran.append((ep.protocol, ep.base_url))
    )
    launcher = _CountingLauncher()
    results = report.Results([], ["nodelay"])
    run.run_server(launcher, None, ["h1", "h1tls", "h2c"], [], [], results, False, 1)  # type: ignore[arg-type]
    assert ran == [("h1", "http://127.0.0.1:1/h1"), ("h2c", "http://127.0.0.1:2/h2c")]
    assert launcher.starts == 2
