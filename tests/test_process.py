"""Whole-process behaviour: Ctrl-C, write syscalls per request, the ``nodelay`` command."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import nodelay
import pytest
from children import exit_code_after_ctrl_c, read_line
from nodelay import _core


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=5)


def test_ctrl_c_interrupts_a_blocking_request(server: _core.TestServer) -> None:
    script = textwrap.dedent(
        """
        import sys, nodelay
        print("ready", flush=True)
        try:
            nodelay.get(sys.argv[1] + "/delay/10000", timeout=30)
        except KeyboardInterrupt:
            sys.exit(42)
        sys.exit(0)
        """
    )
    assert exit_code_after_ctrl_c(script, server.url) == 42


def _strace_works() -> str | None:
    if shutil.which("strace") is None:
        return "strace is not installed"
    probe = subprocess.run(
        ["strace", "-f", "-o", os.devnull, "true"], capture_output=True, timeout=30
    )
    if probe.returncode != 0:
        return f"strace cannot trace here: {probe.stderr.decode(errors='replace').strip()}"
    return None


def test_small_post_is_one_write_syscall(server: _core.TestServer, tmp_path: Path) -> None:
    reason = _strace_works()
    if reason is not None:
        pytest.skip(reason)
    script = textwrap.dedent(
        """
        import os, sys, nodelay
        url = sys.argv[1]
        with nodelay.Client() as client:
            assert client.get(url + "/bytes/10").status_code == 200
            os.write(2, b"MARK\\n")
            assert client.post(url + "/anything", data={"a": "1"}).status_code == 200
        """
    )
    trace = tmp_path / "trace.txt"
    subprocess.run(
        [
            "strace",
            "-f",
            "-qq",
            "-yy",
            "-e",
            "trace=write,writev,sendto,sendmsg",
            "-o",
            str(trace),
            sys.executable,
            "-c",
            script,
            server.url,
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    lines = trace.read_text(errors="replace").splitlines()
    marks = [i for i, line in enumerate(lines) if '"MARK\\n"' in line]
    assert len(marks) == 1, "marker write not found in the trace"
    syscall = re.compile(r"^(?:\d+\s+)?(write|writev|sendto|sendmsg)\(\d+<(TCP|TCPv6|socket)")
    socket_writes = [line for line in lines[marks[0] + 1 :] if syscall.match(line)]
    assert len(socket_writes) == 1, "\n".join(socket_writes)


def _serve_command() -> list[list[str]]:
    commands = [[sys.executable, "-m", "nodelay"]]
    script = Path(sys.executable).with_name("nodelay")
    if script.exists():
        commands.append([str(script)])
    return commands


@pytest.mark.parametrize(
    "command", _serve_command(), ids=lambda c: "python-m" if "-m" in c else "script"
)
def test_serve_command(command: list[str]) -> None:
    proc = subprocess.Popen(
        [*command, "serve", "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = read_line(proc, 20)
        match = re.fullmatch(r"nodelay server listening on (http://127\.0\.0\.1:(\d+))\n", line)
        assert match, line
        url = match.group(1)
        assert int(match.group(2)) > 0
        r = nodelay.get(f"{url}/bytes/5")
        assert r.content == b"abcde"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
    finally:
        _stop(proc)


def test_cli_usage() -> None:
    from nodelay import _cli

    with pytest.raises(SystemExit) as info:
        _cli.main([])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        _cli.main(["serve", "--port", "not-a-number"])
    assert info.value.code == 2
    help_text = _cli.build_parser().format_help()
    assert "serve" in help_text
    out = subprocess.run(
        [sys.executable, "-m", "nodelay", "--version"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0
    assert out.stdout.strip() == f"nodelay {nodelay.__version__}"


def test_get_prints_an_event_stream_as_it_arrives(server: _core.TestServer) -> None:
    # Three events 4 s apart: the first line must show long before the stream ends.
    proc = subprocess.Popen(
        [sys.executable, "-m", "nodelay", "get", f"{server.url}/drip/3?ms=4000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read_line(proc, 3.5) == "data: 0\n"
        assert proc.poll() is None  # still streaming
    finally:
        _stop(proc)
