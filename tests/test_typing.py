"""What type checkers see of the public API where users of httpx and requests rely on a
precise type: ``Response.request`` and ``HTTPStatusError.request`` are a ``Request`` (never
``None``, as in httpx), and ``nodelay.requests.codes.ok`` is a status code. A user's
snippet is checked by mypy (strict) here, and the run-time side against httpx."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import nodelay
import nodelay.requests
import pytest

USER_CODE = """\
import nodelay
import nodelay.requests as requests


def request_of(response: nodelay.Response) -> nodelay.Request:
    return response.request


def failed_request(error: nodelay.HTTPStatusError) -> nodelay.Request:
    return error.request


def is_ok(response: requests.Response) -> bool:
    return response.status_code == requests.codes.ok


reveal_type(nodelay.Response(200).request)
reveal_type(requests.codes.ok)
reveal_type(requests.codes.not_found)
reveal_type(nodelay.codes.im_a_teapot)
"""


@pytest.mark.timeout(600)  # a cold mypy run over the package, on a loaded machine
def test_mypy_strict_accepts_what_httpx_and_requests_users_write(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is a dev dependency (make dev installs it)")
    snippet = tmp_path / "user_code.py"
    snippet.write_text(USER_CODE)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), snippet],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    marker = "Revealed type is "
    revealed = [line.split(marker)[1] for line in out.splitlines() if marker in line]
    assert revealed == [
        '"nodelay._models.Request"',
        '"nodelay._codes.codes"',
        '"nodelay._codes.codes"',
        '"nodelay._codes.codes"',
    ]


def test_request_unset_raises_runtime_error_as_in_httpx() -> None:
    for lib in (httpx, nodelay):
        response = lib.Response(404)
        with pytest.raises(RuntimeError, match="request instance has not been set"):
            response.request  # noqa: B018 (the property access is the test)
        request = lib.Request("GET", "http://127.0.0.1/x")
        response.request = request
        assert response.request is request
        with pytest.raises(lib.HTTPStatusError) as info:
            response.raise_for_status()
        assert info.value.request is request
    assert nodelay.requests.codes.ok == 200 == nodelay.codes.OK
