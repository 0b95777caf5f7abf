"""httpx's "Timeouts", "Resource Limits", "Event Hooks" and "Requests Compatibility"
pages, run with ``httpx`` itself and with ``nodelay`` imported in its place, in the same
run, against PyPI's httpbin under waitress (a third-party WSGI server): a test that fails
on httpx is a wrong test, one that fails on nodelay is a broken promise of issue 15."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")

#: httpbin's /delay/N answers after N seconds; the timeouts below are well under it.
SLOW_S = 2
SHORT_TIMEOUT_S = 0.3
#: Generous enough for any loopback answer on a loaded machine.
TIMEOUT_S = 10.0


# -- Timeouts ---------------------------------------------------------------------------------


def test_timeout_argument_forms(hx: ModuleType, httpbin: str) -> None:
    assert hx.get(httpbin + "/get", timeout=TIMEOUT_S).status_code == 200
    assert hx.get(httpbin + "/get", timeout=None).status_code == 200
    with hx.Client(timeout=TIMEOUT_S) as client:
        assert client.get(httpbin + "/get").status_code == 200
    with hx.Client(timeout=None) as client:
        assert client.get(httpbin + "/get").status_code == 200
    timeout = hx.Timeout(TIMEOUT_S, connect=60.0)
    assert (timeout.connect, timeout.read, timeout.write, timeout.pool) == (
        60.0,
        TIMEOUT_S,
        TIMEOUT_S,
        TIMEOUT_S,
    )
    assert hx.Timeout(TIMEOUT_S, read=None).read is None
    assert hx.Timeout(None, connect=5.0).connect == 5.0
    with hx.Client(timeout=timeout) as client:
        assert client.get(httpbin + "/get").status_code == 200


def test_a_slow_answer_raises_read_timeout(hx: ModuleType, httpbin: str) -> None:
    with hx.Client(timeout=TIMEOUT_S) as client:
        with pytest.raises(hx.ReadTimeout):
            client.get(f"{httpbin}/delay/{SLOW_S}", timeout=SHORT_TIMEOUT_S)
        # The page's catch-all spelling, and the client still works afterwards.
        try:
            client.get(
                f"{httpbin}/delay/{SLOW_S}", timeout=hx.Timeout(TIMEOUT_S, read=SHORT_TIMEOUT_S)
            )
        except hx.TimeoutException as exc:
            assert isinstance(exc, hx.ReadTimeout)
        else:
            pytest.fail("no timeout")
        assert client.get(httpbin + "/get").status_code == 200


def test_async_read_timeout(hx: ModuleType, httpbin: str) -> None:
    async def main() -> None:
        async with hx.AsyncClient(timeout=SHORT_TIMEOUT_S) as client:
            with pytest.raises(hx.ReadTimeout):
                await client.get(f"{httpbin}/delay/{SLOW_S}")

    asyncio.run(main())


# -- Resource limits --------------------------------------------------------------------------


def test_limits(hx: ModuleType, httpbin: str) -> None:
    limits = hx.Limits(max_keepalive_connections=5, max_connections=10)
    assert (limits.max_keepalive_connections, limits.max_connections) == (5, 10)
    with hx.Client(limits=limits, timeout=TIMEOUT_S) as client:
        assert [client.get(f"{httpbin}/anything/{i}").status_code for i in range(12)] == [200] * 12
    unbounded = hx.Limits(max_connections=None, keepalive_expiry=5.0)
    assert unbounded.max_connections is None and unbounded.keepalive_expiry == 5.0


def test_async_requests_beyond_max_connections_wait_for_a_slot(
    hx: ModuleType, httpbin: str
) -> None:
    async def main() -> list[int]:
        limits = hx.Limits(max_connections=2, max_keepalive_connections=2)
        async with hx.AsyncClient(limits=limits, timeout=TIMEOUT_S) as client:
            responses = await asyncio.gather(
                *(client.get(f"{httpbin}/anything/{i}") for i in range(6))
            )
        return [r.status_code for r in responses]

    assert asyncio.run(main()) == [200] * 6


# -- Event hooks ------------------------------------------------------------------------------


def test_request_and_response_hooks(hx: ModuleType, httpbin: str) -> None:
    log: list[str] = []

    def log_request(request: Any) -> None:
        log.append(f"Request event hook: {request.method} {request.url} - Waiting for response")

    def log_response(response: Any) -> None:
        request = response.request
        log.append(
            f"Response event hook: {request.method} {request.url} - Status {response.status_code}"
        )

    client = hx.Client(
        event_hooks={"request": [log_request], "response": [log_response]}, timeout=TIMEOUT_S
    )
    with client:
        client.get(httpbin + "/get")
    assert log == [
        f"Request event hook: GET {httpbin}/get - Waiting for response",
        f"Response event hook: GET {httpbin}/get - Status 200",
    ]


def test_a_response_hook_that_raises_on_errors(hx: ModuleType, httpbin: str) -> None:
    def raise_on_4xx_5xx(response: Any) -> None:
        response.raise_for_status()

    with hx.Client(event_hooks={"response": [raise_on_4xx_5xx]}, timeout=TIMEOUT_S) as client:
        assert client.get(httpbin + "/status/200").status_code == 200
        with pytest.raises(hx.HTTPStatusError) as info:
            client.get(httpbin + "/status/404")
    assert info.value.response.status_code == 404


def test_a_hook_that_reads_the_body_and_hooks_set_after_construction(
    hx: ModuleType, httpbin: str
) -> None:
    seen: list[Any] = []

    def read_json(response: Any) -> None:
        response.read()
        seen.append(response.json()["args"])

    def add_header(request: Any) -> None:
        request.headers["X-Hooked"] = "yes"

    with hx.Client(timeout=TIMEOUT_S) as client:
        client.event_hooks["response"] = [read_json]
        client.event_hooks["request"] = [add_header]
        response = client.get(httpbin + "/get", params={"a": "1"})
    assert seen == [{"a": "1"}]
    assert response.json()["headers"]["X-Hooked"] == "yes"


def test_async_hooks_are_coroutines(hx: ModuleType, httpbin: str) -> None:
    log: list[str] = []

    async def log_request(request: Any) -> None:
        log.append(f"request {request.method}")

    async def log_response(response: Any) -> None:
        log.append(f"response {response.status_code}")

    async def main() -> None:
        async with hx.AsyncClient(
            event_hooks={"request": [log_request], "response": [log_response]}, timeout=TIMEOUT_S
        ) as client:
            await client.get(httpbin + "/get")

    asyncio.run(main())
    assert log == ["request GET", "response 200"]


# -- Requests compatibility (what the page tells a requests user to write instead) ---------


def test_redirects_are_not_followed_unless_asked(hx: ModuleType, httpbin: str) -> None:
    with hx.Client(timeout=TIMEOUT_S) as client:
        response = client.get(httpbin + "/redirect/1")
        assert (response.status_code, response.is_redirect) == (302, True)
        assert response.next_request is not None
        followed = client.get(httpbin + "/redirect/1", follow_redirects=True)
        assert followed.status_code == 200 and len(followed.history) == 1
    with hx.Client(follow_redirects=True, timeout=TIMEOUT_S) as client:
        assert client.get(httpbin + "/redirect/2").url == httpbin + "/get"


def test_content_data_and_json_bodies(hx: ModuleType, httpbin: str) -> None:
    with hx.Client(timeout=TIMEOUT_S) as client:
        raw = client.post(httpbin + "/post", content=b"Hello, world").json()
        form = client.post(httpbin + "/post", data={"key": "value"}).json()
        js = client.post(httpbin + "/post", json={"key": "value"}).json()
    assert raw["data"] == "Hello, world"
    assert form["form"] == {"key": "value"}
    assert js["json"] == {"key": "value"}


def test_build_request_then_send(hx: ModuleType, httpbin: str) -> None:
    # requests' Request(...).prepare() and Session.send(prepared) become these two calls.
    with hx.Client(timeout=TIMEOUT_S) as client:
        request = client.build_request("GET", httpbin + "/headers", headers={"X-Api": "1"})
        request.headers["X-Added"] = "later"
        response = client.send(request)
    headers = response.json()["headers"]
    assert (headers["X-Api"], headers["X-Added"]) == ("1", "later")


def test_status_helpers_and_streaming(hx: ModuleType, httpbin: str) -> None:
    with hx.Client(timeout=TIMEOUT_S) as client:
        ok = client.get(httpbin + "/status/204")
        missing = client.get(httpbin + "/status/404")
        assert (ok.is_success, ok.is_error) == (True, False)
        assert (missing.is_success, missing.is_error) == (False, True)
        # stream=True becomes client.stream(...), and iter_content becomes iter_bytes.
        with client.stream("GET", httpbin + "/bytes/3000") as response:
            assert len(b"".join(response.iter_bytes())) == 3000
        with client.stream("GET", httpbin + "/stream/3") as response:
            assert len(list(response.iter_lines())) == 3
