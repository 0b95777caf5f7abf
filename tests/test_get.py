"""``nodelay get``: output, -o, -H, -d, -I, -f and curl's exit codes (embedded server)."""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import expected_bytes
from nodelay import _core, _get
from nodelay._exceptions import ConnectError, ReadError, ReadTimeout, TooManyRedirects
from scripted import Close, Recv, ScriptedServer, Send, Sleep


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


# -- curl's everyday options: -u -A -e -b -c -F -k --cacert, -o streamed ------------------------


def _sent(capsysbinary: pytest.CaptureFixture[bytes]) -> dict[str, str]:
    """The request headers the embedded server's /anything echoed, lower-cased names."""
    return {k.lower(): v for k, v in json.loads(capsysbinary.readouterr().out)["headers"]}


def test_user_agent_referer_and_basic_credentials(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv = ["-A", "probe/1", "-e", "https://from.example/", "-u", "alice:s3cret"]
    assert run([*argv, f"{server.url}/anything"]) == 0
    headers = _sent(capsysbinary)
    assert headers["user-agent"] == "probe/1" and headers["referer"] == "https://from.example/"
    assert headers["authorization"] == "Basic YWxpY2U6czNjcmV0"
    # -H wins over -A, as in curl.
    assert run(["-A", "probe/1", "-H", "User-Agent: mine", f"{server.url}/anything"]) == 0
    assert _sent(capsysbinary)["user-agent"] == "mine"


def test_cookies_from_a_string_and_saved_then_reloaded(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    assert run(["-b", "a=1; b=2", f"{server.url}/anything"]) == 0
    assert _sent(capsysbinary)["cookie"] == "a=1; b=2"
    jar = tmp_path / "cookies.txt"
    assert run(["-c", str(jar), f"{server.url}/cookies/set?session=xyz"]) == 0
    capsysbinary.readouterr()
    text = jar.read_text()
    assert text.startswith("# Netscape HTTP Cookie File") and "\tsession\txyz" in text
    assert run(["-b", str(jar), f"{server.url}/anything"]) == 0
    assert _sent(capsysbinary)["cookie"] == "session=xyz"


def test_form_fields_and_files(
    server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    upload = tmp_path / "notes.txt"
    upload.write_bytes(b"file body")
    argv = ["-F", "title=hello", "-F", f"doc=@{upload};type=text/plain"]
    assert run([*argv, f"{server.url}/anything"]) == 0
    sent = json.loads(capsysbinary.readouterr().out)
    assert sent["method"] == "POST"
    content_type = dict((k.lower(), v) for k, v in sent["headers"])["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    body = sent["body"]
    assert 'name="title"\r\n\r\nhello\r\n' in body
    assert 'name="doc"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nfile body' in body


def test_bad_form_and_unreadable_files_are_usage_errors(
    server: _core.TestServer, tmp_path: Path
) -> None:
    assert run(["-F", "novalue", f"{server.url}/anything"]) == 2
    assert run(["-F", "a=1", "-d", "b=2", f"{server.url}/anything"]) == 2
    assert run(["-F", f"f=@{tmp_path / 'missing'}", f"{server.url}/anything"]) == 26
    assert run(["-b", str(tmp_path / "no-such-jar"), f"{server.url}/anything"]) == 26


def test_tls_verification_options(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    tls = _core.TestServer(tls=True)
    try:
        url = f"https://localhost:{tls.port}/bytes/4"
        assert run(["-s", url]) == EXIT_CODE_CERTIFICATE  # the test CA is not trusted
        assert run(["-k", url]) == 0
        assert capsysbinary.readouterr().out == b"abcd"
        ca = tmp_path / "ca.pem"
        ca.write_text(_core.test_ca_pem())
        assert run(["--cacert", str(ca), url]) == 0
        assert capsysbinary.readouterr().out == b"abcd"
    finally:
        tls.close()


EXIT_CODE_CERTIFICATE = _get.EXIT_CODES["peer_failed_verification"]


def test_output_is_written_as_it_arrives_and_not_on_fail(
    server: _core.TestServer, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    target = tmp_path / "big.bin"
    assert run(["-o", str(target), "-i", f"{server.url}/chunked/200000"]) == 0
    data = target.read_bytes()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and body == expected_bytes(200000)
    missing = tmp_path / "not-written.bin"
    assert run(["-f", "-o", str(missing), f"{server.url}/status/404"]) == 22
    assert not missing.exists()
    assert run(["-v", "-o", str(target), f"{server.url}/bytes/1000"]) == 0
    assert target.read_bytes() == expected_bytes(1000)


def test_output_errors_are_write_errors_but_read_errors_are_not(
    server: _core.TestServer, tmp_path: Path, scripted: Callable[..., ScriptedServer]
) -> None:
    assert run(["-o", str(tmp_path / "no-dir" / "x"), f"{server.url}/bytes/10"]) == 23
    # A body that stalls half-way while -o writes it: curl's 28, not a write error.
    stalls = scripted(
        [Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"), Sleep(3)]
    )
    started = time.monotonic()
    assert run(["-m", "0.5", "-o", str(tmp_path / "slow"), stalls.url]) == 28
    assert time.monotonic() - started < 2.5
    assert (tmp_path / "slow").read_bytes() == b"0123456789"


def test_retry_sends_the_form_s_files_again(
    scripted: Callable[..., ScriptedServer], tmp_path: Path
) -> None:
    busy = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    srv = scripted([Recv(), Send(busy), Close()], [Recv(), Send(ok), Sleep(0.5)])
    upload = tmp_path / "notes.txt"
    upload.write_bytes(b"the file's body")
    assert (
        run(
            [
                "-s",
                "--retry",
                "1",
                "-o",
                str(tmp_path / "out"),
                "-F",
                f"doc=@{upload}",
                srv.url + "/",
            ]
        )
        == 0
    )
    assert len(srv.requests) == 2
    assert all(b"the file's body" in request for request in srv.requests)
