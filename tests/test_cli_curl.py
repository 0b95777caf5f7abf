"""The ``nodelay`` command as curl users type it, with curl itself as the oracle.

Each test runs curl and ``python -m nodelay`` with the same arguments against the same
server (the embedded one, or a scripted one for broken replies), each in a folder of its
own, and compares what they did: exit code, bytes on stdout, files written (response heads
compared modulo their ``Date`` value). stderr is compared only for being empty or not
with ``-s``/``-sS`` (the messages' words differ, docs/cli.md).
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from nodelay import _core
from scripted import Close, Recv, Reset, ScriptedServer, Send, Sleep

CURL = shutil.which("curl")
pytestmark = pytest.mark.skipif(CURL is None, reason="curl is not installed")

TOOLS = ("curl", "nodelay")
RUN_TIMEOUT = 30.0
"""Seconds one command may take before the test fails."""

_DATE = re.compile(rb"(?im)^(date: ).*$")


@dataclass
class Ran:
    """What one command did."""

    code: int
    stdout: bytes
    stderr: bytes
    files: dict[str, bytes]
    seconds: float


def command(tool: str, args: list[str]) -> list[str]:
    # -q first: curl reads no ~/.curlrc.
    if tool == "curl":
        return [str(CURL), "-q", *args]
    return [sys.executable, "-m", "nodelay", *args]


def _environment() -> dict[str, str]:
    proxies = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    return {k: v for k, v in os.environ.items() if k.lower() not in proxies}


def run(tool: str, args: list[str], folder: Path, stdin: bytes = b"") -> Ran:
    """Run ``tool`` in ``folder`` (created); the files it wrote there come back."""
    folder.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in folder.iterdir()}
    started = time.monotonic()
    done = subprocess.run(
        command(tool, args),
        cwd=folder,
        input=stdin,
        capture_output=True,
        timeout=RUN_TIMEOUT,
        env=_environment(),
    )
    seconds = time.monotonic() - started
    written = {p.name: p.read_bytes() for p in folder.iterdir() if p.name not in before}
    return Ran(done.returncode, done.stdout, done.stderr, written, seconds)


def both(
    args: list[str], tmp_path: Path, inputs: dict[str, bytes] | None = None, stdin: bytes = b""
) -> tuple[Ran, Ran]:
    """curl's run and nodelay's, each in its own folder holding ``inputs``."""
    ran = []
    for tool in TOOLS:
        folder = tmp_path / tool
        folder.mkdir(parents=True)
        for name, data in (inputs or {}).items():
            (folder / name).write_bytes(data)
        ran.append(run(tool, args, folder, stdin))
    return ran[0], ran[1]


def undated(data: bytes) -> bytes:
    return _DATE.sub(rb"\1*", data)


def assert_same(curl: Ran, ours: Ran) -> None:
    assert ours.code == curl.code, (ours.stderr, curl.stderr)
    assert undated(ours.stdout) == undated(curl.stdout)
    assert {k: undated(v) for k, v in ours.files.items()} == {
        k: undated(v) for k, v in curl.files.items()
    }


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the command line itself -------------------------------------------------------------------


def test_a_url_first_means_get() -> None:
    from nodelay._cli import build_parser, with_command

    parser = build_parser()
    assert with_command(parser, ["-fsSL", "http://x/"]) == ["get", "-fsSL", "http://x/"]
    assert with_command(parser, ["example.org"]) == ["get", "example.org"]
    assert with_command(parser, ["serve", "--port", "1"]) == ["serve", "--port", "1"]
    assert with_command(parser, ["--version"]) == ["--version"]
    args = parser.parse_args(with_command(parser, ["-fsSLo", "out", "http://x/"]))
    assert (args.fail, args.silent, args.show_error, args.location) == (True, True, True, True)
    assert args.output == "out"


BODY = b"a=1\nb=2\r\nc=3 4&5\n"
DOC = b'{"name": "nodelay",\n "list": [1, 2]}\n'

SAME = {
    "url without get": ["{u}/bytes/100"],
    "-sS on 404": ["-sS", "{u}/status/404"],
    "-fsSL": ["-fsSL", "{u}/redirect/2"],
    "-fsS on 404 exits 22": ["-fsS", "{u}/status/404"],
    "-sfi on 404 prints the head": ["-sfi", "{u}/status/404"],
    "-sSLo bundled with its value": ["-sSLo", "out", "{u}/redirect/1"],
    "-O": ["-sO", "{u}/bytes/100"],
    "-O drops the query": ["-sO", "{u}/bytes/7?x=1"],
    "-O without a name exits 23": ["-sO", "{u}/"],
    "-o - is stdout": ["-so", "-", "{u}/bytes/10"],
    "-o of an empty body": ["-so", "empty", "{u}/bytes/0"],
    "-o skipped by -f": ["-sfo", "nothing", "{u}/status/500"],
    "-w": [
        "-sL",
        "-o",
        "body",
        "-w",
        "%{http_code} %{response_code} %{size_download} %{url_effective} %{content_type} "
        "%{num_redirects} %{size_header} %{http_version} %{method} %{exitcode} %{url}\\n%%\\t%x",
        "{u}/redirect/2",
    ],
    "-w %header": ["-s", "-o", "body", "-w", "[%header{content-type}]", "{u}/bytes/3"],
    "-w after a refused connect": [
        "-s",
        "-w",
        "[%{http_code}|%{url_effective}|%{num_redirects}|%{exitcode}|%{size_download}]",
        "http://127.0.0.1:{dead}/x",
    ],
    "-w with -f": ["-sf", "-w", "%{http_code}", "{u}/status/404"],
    "-w %{stderr}": ["-s", "-w", "a%{stderr}b%{stdout}c", "{u}/bytes/2"],
    "-w @file": ["-s", "-w", "@format", "{u}/bytes/2"],
    "gzip as received": ["-s", "{u}/gzip/3000"],
    "--compressed gzip": ["-s", "--compressed", "{u}/gzip/3000"],
    "--compressed deflate": ["-s", "--compressed", "{u}/deflate/3000"],
    "--compressed brotli": ["-s", "--compressed", "{u}/brotli/3000"],
    "--compressed zstd": ["-s", "--compressed", "{u}/zstd/3000"],
    "-d @file strips line ends": ["-s", "-d", "@body.txt", "{u}/echo"],
    "--data-binary @file": ["-s", "--data-binary", "@body.txt", "{u}/echo"],
    "--data-binary @- (stdin)": ["-s", "--data-binary", "@-", "{u}/echo"],
    "--data-raw keeps @": ["-s", "--data-raw", "@body.txt", "-d", "x=1", "{u}/echo"],
    "--data-urlencode": [
        "-s",
        "--data-urlencode",
        "q=a b&c/é",
        "--data-urlencode",
        "@body.txt",
        "--data-urlencode",
        "=x y",
        "{u}/echo",
    ],
    "-G": [
        "-s",
        "-G",
        "-d",
        "a=1",
        "--data-urlencode",
        "b=x y",
        "-w",
        "%{url_effective}",
        "-o",
        "body",
        "{u}/bytes/3?z=0",
    ],
    "-G -I": ["-sGI", "-d", "a=1", "-w", "%{url_effective} %{method}", "{u}/bytes/3"],
    "--json @file": ["-s", "-D", "-", "--json", "@doc.json", "{u}/echo"],
    "--json text": ["-s", "-D", "-", "--json", '{"a": [1, 2]}', "{u}/echo"],
    "-D file with -L": ["-sL", "-D", "heads", "-o", "body", "{u}/redirect/2"],
    "-D -": ["-s", "-D", "-", "{u}/bytes/5"],
    "-i with -L shows every head": ["-siL", "{u}/redirect/1"],
    "-I": ["-sI", "{u}/bytes/10"],
    "-X with a body": ["-s", "-X", "PUT", "--data-binary", "@body.txt", "{u}/echo"],
    "--max-redirs exceeded exits 47": ["-sL", "--max-redirs", "1", "{u}/redirect/3"],
    "a name that does not resolve exits 6": ["-s", "http://nodelay-cli-test.invalid/"],
    "a refused connection exits 7": ["-s", "http://127.0.0.1:{dead}/"],
    "-m exceeded exits 28": ["-s", "-m", "0.5", "{u}/delay/3000"],
    "TLS to a cleartext server exits 35": ["-s", "https://127.0.0.1:{port}/"],
}
INPUTS = {"body.txt": BODY, "doc.json": DOC, "format": b"%{http_code}:%{size_download}\\n"}


@pytest.mark.parametrize("case", SAME)
def test_same_as_curl(case: str, server: _core.TestServer, tmp_path: Path) -> None:
    values = {"{u}": server.url, "{dead}": str(dead_port()), "{port}": str(server.port)}
    args = SAME[case]
    for name, value in values.items():
        args = [arg.replace(name, value) for arg in args]
    curl, ours = both(args, tmp_path, INPUTS, stdin=BODY)
    assert_same(curl, ours)
    silent = any(a.startswith("-") and not a.startswith("--") and "s" in a for a in args)
    if silent:
        assert bool(ours.stderr) == bool(curl.stderr), (ours.stderr, curl.stderr)


def test_the_engine_s_failures_exit_as_curl_s(
    scripted: Callable[..., ScriptedServer], tmp_path: Path
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
    replies = {
        "empty reply, 52": [Recv(), Close()],
        "body cut short, 18": [Recv(), Send(head + b"abc"), Close()],
        "connection reset, 56": [Recv(), Send(head + b"abc"), Sleep(0.2), Reset()],
        "not HTTP, 8": [Recv(), Send(b"HELLO WORLD\r\n\r\n"), Close()],
    }
    for name, script in replies.items():
        url = scripted(script).url + "/"
        folder = tmp_path / name.split(",")[0].replace(" ", "-")
        curl, ours = both(["-sS", url], folder)
        if name.startswith("not HTTP"):
            # curl calls this reply HTTP/0.9 (1); nodelay a weird server reply (8).
            assert (curl.code, ours.code) == (1, 8)
            continue
        if name.startswith("body cut short"):
            # The engine raises on the read that meets the early end and drops what that
            # read got, where curl writes it (docs/cli.md): a prefix of curl's output.
            assert ours.code == curl.code
            assert curl.stdout.startswith(ours.stdout)
            continue
        assert_same(curl, ours)
        assert ours.code == int(name.rsplit(" ", 1)[1]), name


@pytest.fixture(scope="module")
def tls_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer(tls=True)
    yield srv
    srv.close()


def test_an_untrusted_certificate_exits_60(tls_server: _core.TestServer, tmp_path: Path) -> None:
    url = f"https://localhost:{tls_server.port}/bytes/3"
    curl, ours = both(["-sS", url], tmp_path)
    assert_same(curl, ours)
    assert ours.code == 60
    ca = tmp_path / "ca.pem"
    ca.write_text(_core.test_ca_pem())
    curl, ours = both(["-sS", "--cacert", str(ca), url], tmp_path / "trusted")
    assert_same(curl, ours)
    assert ours.stdout == b"abc"


def test_retry_waits_and_tries_again_like_curl(
    scripted: Callable[..., ScriptedServer], tmp_path: Path
) -> None:
    busy = (
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\nConnection: close\r\n\r\nbusy\n"
    )
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
    ran = {}
    for tool in TOOLS:
        for output in ("stdout", "file"):
            srv = scripted([Recv(), Send(busy), Close()], [Recv(), Send(ok), Sleep(0.5)])
            args = ["-sS", "--retry", "2", "-D", "heads", srv.url + "/"]
            args += ["-o", "body"] if output == "file" else []
            ran[tool, output] = run(tool, args, tmp_path / tool / output)
            assert len(srv.requests) == 2, (tool, output)
    for output in ("stdout", "file"):
        curl, ours = ran["curl", output], ran["nodelay", output]
        assert_same(curl, ours)
        # curl waits 1 s before its first retry.
        assert ours.seconds >= 1.0 and curl.seconds >= 1.0
    # Standard output keeps the first attempt's body; a file starts again (as curl does).
    assert ran["nodelay", "stdout"].stdout == b"busy\nok\n"
    assert ran["nodelay", "file"].files["body"] == b"ok\n"


# -- the progress meter ------------------------------------------------------------------------


def run_on_a_terminal(tool: str, args: list[str], folder: Path) -> str:
    """What ``tool`` wrote to stderr when stderr is a terminal (a pseudo-terminal here)
    and stdout is not."""
    folder.mkdir(parents=True)
    master, replica = pty.openpty()
    child = subprocess.Popen(
        command(tool, args),
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=replica,
        env=_environment(),
    )
    os.close(replica)
    seen = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every writer of the terminal has gone
                break
            if not chunk:
                break
            seen += chunk
    finally:
        child.wait(timeout=RUN_TIMEOUT)
        os.close(master)
    return seen.decode().replace("\r\n", "\n")


def _meter(text: str) -> tuple[list[str], list[str]]:
    """The heading lines and the fields of the last row drawn."""
    lines = text.split("\n")
    last_row = lines[2].rsplit("\r", 1)[-1]
    return lines[:2], last_row.split()


SPEED_FIELDS = (6, 11)
"""The average and current speed columns: the only ones that differ between two runs."""


@pytest.mark.parametrize("path", ["/bytes/300000", "/chunked/300000", "/bytes/0"])
def test_progress_meter_has_curl_s_shape(
    path: str, server: _core.TestServer, tmp_path: Path
) -> None:
    metres = {}
    for tool in TOOLS:
        text = run_on_a_terminal(tool, ["-o", "out", server.url + path], tmp_path / tool)
        metres[tool] = _meter(text)
    (curl_heading, curl_row), (heading, row) = metres["curl"], metres["nodelay"]
    assert heading == curl_heading
    assert len(row) == len(curl_row) == 12
    for i, (ours, theirs) in enumerate(zip(row, curl_row, strict=True)):
        if i not in SPEED_FIELDS:
            assert ours == theirs, (i, row, curl_row)


def test_no_meter_with_s_or_when_stderr_is_no_terminal(
    server: _core.TestServer, tmp_path: Path
) -> None:
    for tool in TOOLS:
        quiet = run_on_a_terminal(
            tool, ["-s", "-o", "out", server.url + "/bytes/1000"], tmp_path / tool
        )
        assert quiet == "", tool
    ours = run("nodelay", ["-o", "out", server.url + "/bytes/1000"], tmp_path / "pipe")
    assert ours.stderr == b""  # curl draws it on a pipe too: the difference docs/cli.md names


def test_write_out_times_have_curl_s_form(server: _core.TestServer, tmp_path: Path) -> None:
    fmt = "%{time_namelookup} %{time_connect} %{time_starttransfer} %{time_total} %{speed_download}"
    curl, ours = both(["-s", "-o", "body", "-w", fmt, server.url + "/bytes/1000"], tmp_path)
    form = re.compile(rb"^(\d+\.\d{6} ){4}\d+$")
    assert form.match(curl.stdout), curl.stdout
    assert form.match(ours.stdout), ours.stdout
    seconds = [float(v) for v in ours.stdout.split()[:4]]
    assert seconds[1] <= seconds[2] <= seconds[3] < RUN_TIMEOUT


def test_meter_row_shows_percent_and_eta_as_curl_computes_them() -> None:
    from nodelay._get_progress import row

    # 5 MiB of 10 MiB after 2 s: curl's row for it (progress.c's formats).
    mib = 1024 * 1024
    assert row(5 * mib, 10 * mib, 2.0, 2.5 * mib) == (
        " 50 10.0M   50 5120k    0     0  2560k      0  0:00:04  0:00:02  0:00:02 2560k"
    )
    # Unknown size: the total is what came so far; no percent received, no times but spent.
    assert row(300_000, None, 3.0, 100_000) == (
        "100  292k    0  292k    0     0    97k      0 --:--:--  0:00:03 --:--:--   97k"
    )


def test_http2_heads_as_curl_prints_them(tmp_path: Path) -> None:
    h2c = _core.TestServer(http2=True)
    try:
        for i, flags in enumerate((["-sI"], ["-si"], ["-s", "-D", "-", "-o", "body"])):
            args = [*flags, "--http2-prior-knowledge", h2c.url + "/bytes/10"]
            curl, ours = both(args, tmp_path / str(i))
            assert_same(curl, ours)
            assert ours.stdout.startswith(b"HTTP/2 200 \r\n")
    finally:
        h2c.close()
