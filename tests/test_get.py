"""``nodelay get``: output, -o, -H, -d, -I, -f and curl's exit codes (embedded server)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from conftest import expected_bytes
from nodelay import _core, _get
from nodelay._exceptions import ConnectError, ReadError, ReadTimeout, TooManyRedirects


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="nodelay")
    _get.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["get", *argv])
    return _get.main(args)


def test_prints_the_body(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert run([f"{server.url}/bytes/100"]) == 0
    assert capsysbinary.readouterr().out == expected_bytes(100)


def test_scheme_defaults_to_http(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert run([f"127.0.0.1:{server.port}/bytes/5"]) == 0
    assert capsysbinary.readouterr().out == b"abcde"


def test_output_file(server: _core.TestServer, tmp_path: Path) -> None:
    target = tmp_path / "body.bin"
    assert run(["-o", str(target), f"{server.url}/bytes/300000"]) == 0
    assert target.read_bytes() == expected_bytes(300000)


def test_headers_are_sent(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert run(["-H", "X-Bench: yes", "-H", "Accept: text/plain", f"{server.url}/anything"]) == 0
    sent = json.loads(capsysbinary.readouterr().out)
    headers = {k.lower(): v for k, v in sent["headers"]}
    assert headers["x-bench"] == "yes" and headers["accept"] == "text/plain"


def test_data_posts_a_form(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert run(["-d", "a=1", "-d", "b=2", f"{server.url}/anything"]) == 0
    sent = json.loads(capsysbinary.readouterr().out)
    assert sent["method"] == "POST" and sent["body"] == "a=1&b=2"
    assert ["content-type", "application/x-www-form-urlencoded"] in sent["headers"]


def test_json_body(server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert run(["--json", '{"x": 1}', f"{server.url}/anything"]) == 0
    sent = json.loads(capsysbinary.readouterr().out)
    assert sent["method"] == "POST" and json.loads(sent["body"]) == {"x": 1}
    assert ["content-type", "application/json"] in sent["headers"]


def test_head_prints_the_head(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert run(["-I", f"{server.url}/bytes/10"]) == 0
    out = capsysbinary.readouterr().out
    assert out.startswith(b"HTTP/1.1 200 OK\r\n") and b"content-length: 10\r\n" in out.lower()


def _phase(err: str, name: str) -> float:
    """The milliseconds ``-v`` printed for phase ``name``."""
    match = re.search(rf"^\* {name} +([0-9.]+) ms", err, re.MULTILINE)
    assert match, f"no {name} line in:\n{err}"
    return float(match.group(1))


def test_verbose_prints_heads_and_phase_timings(
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    # A server of its own: the first request opens a connection, so the connect phases
    # are there.
    server = _core.TestServer("127.0.0.1", 0, 1)
    try:
        assert run(["-v", f"http://localhost:{server.port}/bytes/3"]) == 0
    finally:
        server.close()
    captured = capsysbinary.readouterr()
    assert captured.out == b"abc"
    err = captured.err.decode()
    assert "> GET /bytes/3 HTTP/1.1" in err and "< HTTP/1.1 200 OK" in err
    assert "* elapsed" in err
    phases = [_phase(err, name) for name in ("namelookup", "connect", "starttransfer", "total")]
    assert phases == sorted(phases), err  # cumulative, as curl -w prints them
    assert "appconnect" not in err  # no TLS


def test_verbose_prints_the_protocol_actually_spoken(
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    server = _core.TestServer(http2=True)
    try:
        assert run(["-v", "--http2-prior-knowledge", f"{server.url}/bytes/3"]) == 0
    finally:
        server.close()
    err = capsysbinary.readouterr().err.decode()
    assert "> GET /bytes/3 HTTP/2\n" in err and "< HTTP/2 200" in err, err
    assert "HTTP/1.1" not in err
    # The HTTP/2 connect is timed as one step (lookup included).
    assert _phase(err, "connect") <= _phase(err, "starttransfer") <= _phase(err, "total")


def test_fail_exits_22(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert run(["-f", f"{server.url}/status/404"]) == 22
    assert run([f"{server.url}/status/404"]) == 0  # like curl: only -f fails


def test_too_many_redirects_exits_47(server: _core.TestServer) -> None:
    assert run(["-s", "-L", "--max-redirs", "1", f"{server.url}/redirect/3"]) == 47
    assert run(["-s", "-L", f"{server.url}/redirect/2"]) == 0


def test_connection_refused_exits_7() -> None:
    import socket

    with socket.socket() as s:  # a loopback port that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert run(["-s", f"http://127.0.0.1:{port}/"]) == 7


def test_timeout_exits_28(server: _core.TestServer) -> None:
    assert run(["-s", "-m", "0.2", f"{server.url}/delay/3000"]) == 28


def test_protocol_and_url_errors() -> None:
    assert run(["-s", "ftp://127.0.0.1/x"]) == 1
    assert run(["-s", "http://[::1/"]) == 3


def test_exit_code_mapping() -> None:
    assert _get.exit_code(ConnectError("failed to resolve nohost: lookup failed")) == 6
    assert _get.exit_code(ConnectError("failed to connect to 127.0.0.1:1")) == 7
    assert _get.exit_code(ReadTimeout("read timeout")) == 28
    assert _get.exit_code(ReadError("connection reset")) == 56
    assert _get.exit_code(TooManyRedirects("too many")) == 47
