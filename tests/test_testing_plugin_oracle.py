"""``nodelay_mock`` against its model: each scenario runs twice, with pytest-httpx's
``httpx_mock`` on ``httpx`` and with ``nodelay_mock`` on ``nodelay`` (the same calls:
the two APIs share their names), and asserts one expected outcome for both. A
difference between the two is a bug of ours, or a wrong expectation.

No request here reaches a network: the hosts are names under ``.test`` (RFC 2606),
which never resolve, so an unmocked request would fail to connect instead.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

import nodelay
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("pytest_httpx")

HOST = "http://api.test"


@pytest.fixture(params=["httpx", "nodelay"])
def lib(request: pytest.FixtureRequest) -> tuple[ModuleType, Any]:
    """``(library, its mock fixture)``: httpx with pytest-httpx, or nodelay."""
    if request.param == "httpx":
        return httpx, request.getfixturevalue("httpx_mock")
    return nodelay, request.getfixturevalue("nodelay_mock")


def _answered(lib: ModuleType, client: Any, method: str, url: str, **kwargs: Any) -> int | None:
    """The status the mock answered with, or None when nothing matched."""
    try:
        return int(client.request(method, url, **kwargs).status_code)
    except lib.TimeoutException as exc:
        assert str(exc).startswith(f"No response can be found for {method} request on ")
        return None


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False)
def test_query_parameters_are_compared_apart_and_repeats_in_order(
    lib: tuple[ModuleType, Any],
) -> None:
    module, mock = lib
    mock.add_response(url=f"{HOST}/p?a=1&b=2&a=3", is_reusable=True)
    with module.Client() as client:
        got = [
            _answered(module, client, "GET", f"{HOST}/p?{query}")
            for query in ("a=1&b=2&a=3", "b=2&a=1&a=3", "a=3&b=2&a=1", "a=1&b=2", "a=1&b=2&a=3&c=")
        ]
    assert got == [200, 200, None, None, None]


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False)
def test_match_params_with_the_url_and_the_path_compared_exactly(
    lib: tuple[ModuleType, Any],
) -> None:
    module, mock = lib
    mock.add_response(url=f"{HOST}/q", match_params={"x": ["1", "2"], "y": "z"}, status_code=201)
    with module.Client() as client:
        got = [
            _answered(module, client, "GET", url)
            for url in (f"{HOST}/q?y=z&x=1&x=2", f"{HOST}/q/?y=z&x=1&x=2", f"{HOST}/q?x=1&y=z")
        ]
    assert got == [201, None, None]


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False)
def test_first_unused_match_then_the_last_one_if_reusable(lib: tuple[ModuleType, Any]) -> None:
    module, mock = lib
    mock.add_response(url=f"{HOST}/r", status_code=200)
    mock.add_response(url=f"{HOST}/r", status_code=201)
    mock.add_response(url=f"{HOST}/s", status_code=202)
    mock.add_response(url=f"{HOST}/s", status_code=203, is_reusable=True)
    with module.Client() as client:
        got = [_answered(module, client, "GET", f"{HOST}/{p}") for p in "rrrssss"]
    assert got == [200, 201, None, 202, 203, 203, 203]


@pytest.mark.httpx_mock(can_send_already_matched_responses=True)
@pytest.mark.nodelay_mock(can_send_already_matched_responses=True)
def test_the_option_makes_every_response_reusable(lib: tuple[ModuleType, Any]) -> None:
    module, mock = lib
    mock.add_response(url=f"{HOST}/o", status_code=204)
    with module.Client() as client:
        assert [_answered(module, client, "GET", f"{HOST}/o") for _ in range(3)] == [204] * 3


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False)
def test_method_regex_headers_and_body_matchers(lib: tuple[ModuleType, Any]) -> None:
    module, mock = lib
    mock.add_response(method="post", url=re.compile(r".*/items/\d+$"), status_code=201)
    mock.add_response(url=f"{HOST}/h", match_headers={"X-Key": "k1"}, status_code=202)
    mock.add_response(url=f"{HOST}/c", match_content=b"exact", status_code=203)
    mock.add_response(url=f"{HOST}/j", match_json={"a": [1, 2]}, status_code=204)
    with module.Client() as client:
        got = [
            _answered(module, client, "POST", f"{HOST}/items/12"),
            _answered(module, client, "GET", f"{HOST}/items/13"),
            _answered(module, client, "POST", f"{HOST}/items/x"),
            _answered(module, client, "GET", f"{HOST}/h", headers={"X-Key": "k2"}),
            _answered(module, client, "GET", f"{HOST}/h", headers={"X-Key": "k1"}),
            _answered(module, client, "POST", f"{HOST}/c", content=b"other"),
            _answered(module, client, "POST", f"{HOST}/c", content=b"exact"),
            _answered(module, client, "POST", f"{HOST}/j", content=b'{"a": [1, 2]}'),
        ]
    assert got == [201, None, None, None, 202, None, 203, 204]


def test_get_requests_and_get_request(lib: tuple[ModuleType, Any]) -> None:
    module, mock = lib
    mock.add_response(url=re.compile(".*"), is_reusable=True)
    with module.Client() as client:
        client.get(f"{HOST}/a?n=1")
        client.post(f"{HOST}/a?n=1", content=b"body")
        client.get(f"{HOST}/b")
    assert [(r.method, str(r.url)) for r in mock.get_requests(url=f"{HOST}/a?n=1")] == [
        ("GET", f"{HOST}/a?n=1"),
        ("POST", f"{HOST}/a?n=1"),
    ]
    assert mock.get_request(method="POST").content == b"body"
    assert mock.get_request(url=f"{HOST}/nothing") is None
    with pytest.raises(AssertionError, match=r"More than one request \(2\) matched"):
        mock.get_request(url=f"{HOST}/a?n=1")


def test_add_exception_is_raised_with_the_request(lib: tuple[ModuleType, Any]) -> None:
    module, mock = lib
    mock.add_exception(module.ReadTimeout("too slow"), url=f"{HOST}/slow")
    with module.Client() as client, pytest.raises(module.ReadTimeout, match="too slow") as caught:
        client.get(f"{HOST}/slow")
    assert str(caught.value.request.url) == f"{HOST}/slow"


@pytest.mark.httpx_mock(assert_all_requests_were_expected=False)
@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False)
def test_the_unmatched_message_lists_the_registrations(lib: tuple[ModuleType, Any]) -> None:
    module, mock = lib
    mock.add_response(method="GET", url=f"{HOST}/x", match_headers={"X-A": "1"})
    mock.add_response(method="PUT", url=f"{HOST}/y", is_reusable=True)
    with module.Client() as client, pytest.raises(module.TimeoutException) as caught:
        client.get(f"{HOST}/x", headers={"X-A": "2"})
    assert str(caught.value) == (
        f"No response can be found for GET request on {HOST}/x with {{'X-A': '2'}} headers "
        "amongst:\n"
        f"- Match GET request on {HOST}/x with {{'X-A': '1'}} headers\n"
        f"- Match PUT request on {HOST}/y"
    )
    mock.reset()
