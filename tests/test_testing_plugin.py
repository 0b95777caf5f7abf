"""The ``nodelay_mock`` fixture (``nodelay.testing``): every path a nodelay client sends
through is answered by it, and the embedded server, which counts the requests it
serves, sees none of them; the client's behaviour above the transport (redirects,
cookies, auth, hooks) still applies to mocked responses.

Each test runs with ``Client`` and with ``AsyncClient`` (``both_drivers``) unless marked
``sync_only``; pytest-httpx is the oracle for the matching rules
(``test_testing_plugin_oracle.py``) and for the checks at teardown
(``test_testing_plugin_pytester.py``).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from typing import Any

import nodelay
import nodelay.requests
import pytest
from nodelay import _core
from nodelay._async_client import AsyncClient
from nodelay._base import BaseClient
from nodelay._client import Client
from nodelay.testing import NodelayMock

pytestmark = pytest.mark.both_drivers

_HOT_PATH_METHODS = ("get", "head", "options", "delete", "post", "put", "patch", "request")
_HOT_PATHS = [Client.__dict__[name] for name in _HOT_PATH_METHODS]
_ASYNC_GET = AsyncClient.__dict__["get"]
"""The request methods as defined (this module is imported before any test patches them)."""


@pytest.fixture
def untouched(server: _core.TestServer) -> Iterator[str]:
    """The embedded server's URL; the test fails if the server served any request
    while it ran."""
    before = server.requests()
    yield server.url
    assert server.requests() == before, "a mocked request reached the server"


def test_every_method_is_answered_by_the_mock(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    # ``client`` was made before the fixture: clients made earlier are covered too.
    for method in ("GET", "HEAD", "OPTIONS", "DELETE", "POST", "PUT", "PATCH"):
        nodelay_mock.add_response(
            method=method, url=f"{untouched}/thing", status_code=201, json={"m": method}
        )
    for method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        response = getattr(client, method.lower())(f"{untouched}/thing")
        assert (response.status_code, response.json()) == (201, {"m": method})
    for method in ("POST", "PUT", "PATCH"):
        response = getattr(client, method.lower())(f"{untouched}/thing", json={"x": 1})
        assert response.json() == {"m": method}
    assert [r.method for r in nodelay_mock.get_requests()] == [
        "GET",
        "HEAD",
        "OPTIONS",
        "DELETE",
        "POST",
        "PUT",
        "PATCH",
    ]
    assert nodelay_mock.get_request(method="POST").content == b'{"x":1}'  # type: ignore[union-attr]


def test_request_and_send_are_answered(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(method="PUT", url=f"{untouched}/r", text="via request")
    nodelay_mock.add_response(method="POST", url=f"{untouched}/s", text="via send")
    assert client.request("PUT", f"{untouched}/r", content=b"x").text == "via request"
    request = client.build_request("POST", f"{untouched}/s", data={"a": "1"})
    assert client.send(request).text == "via send"
    sent = nodelay_mock.get_request(url=f"{untouched}/s")
    assert sent is not None and sent.content == b"a=1"
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"


def test_a_client_with_a_warm_pool_is_answered_by_the_mock(
    client: nodelay.Client, server: _core.TestServer, request: pytest.FixtureRequest
) -> None:
    assert client.get(f"{server.url}/bytes/3").content == b"abc"  # a real request first
    mock: NodelayMock = request.getfixturevalue("nodelay_mock")
    mock.add_response(url=f"{server.url}/bytes/3", content=b"mocked")
    before = server.requests()
    assert client.get(f"{server.url}/bytes/3").content == b"mocked"
    assert server.requests() == before


def test_the_response_is_a_full_nodelay_response(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(
        url=f"{untouched}/full",
        status_code=418,
        http_version="HTTP/2",
        headers={"X-Answer": "42", "Set-Cookie": "a=b"},
        json={"key": ["value", 1]},
    )
    response = client.get(f"{untouched}/full")
    assert response.status_code == 418
    assert response.reason_phrase == "I'm a Teapot"
    assert response.http_version == "HTTP/2"
    assert response.headers["x-answer"] == "42"
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"key": ["value", 1]}
    assert response.text == '{"key":["value",1]}'
    assert str(response.url) == f"{untouched}/full"
    assert response.request.method == "GET"
    with pytest.raises(nodelay.HTTPStatusError):
        response.raise_for_status()


def test_redirects_are_followed_through_mocked_responses(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(
        url=f"{untouched}/from", status_code=302, headers={"Location": "/to?x=1"}
    )
    nodelay_mock.add_response(url=f"{untouched}/to?x=1", text="arrived")
    response = client.get(f"{untouched}/from", follow_redirects=True)
    assert response.text == "arrived"
    assert str(response.url) == f"{untouched}/to?x=1"
    assert [r.status_code for r in response.history] == [302]


def test_cookies_set_by_a_mocked_response_are_sent_next_time(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(
        url=f"{untouched}/login", headers={"Set-Cookie": "session=s1; Path=/"}
    )
    nodelay_mock.add_response(url=f"{untouched}/me", json={"user": "u"})
    client.get(f"{untouched}/login")
    assert client.cookies["session"] == "s1"
    assert client.get(f"{untouched}/me").json() == {"user": "u"}
    me = nodelay_mock.get_request(url=f"{untouched}/me")
    assert me is not None and me.headers["cookie"] == "session=s1"


def test_auth_runs_above_the_mock(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    url = f"{untouched}/private"
    nodelay_mock.add_response(url=url, match_headers={"Authorization": "Basic dTpw"}, text="basic")
    assert client.get(url, auth=("u", "p")).text == "basic"
    challenge = 'Digest realm="r", nonce="n0", qop="auth", algorithm=MD5'
    nodelay_mock.add_response(url=url, status_code=401, headers={"WWW-Authenticate": challenge})
    nodelay_mock.add_response(url=url, text="digest")
    response = client.get(url, auth=nodelay.DigestAuth("u", "p"))
    assert response.text == "digest"
    answered = nodelay_mock.get_requests(url=url)[-1]
    assert answered.headers["authorization"].startswith('Digest username="u", realm="r"')


def test_event_hooks_and_raise_for_status_see_mocked_responses(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    seen: list[str] = []

    def on_response(response: nodelay.Response) -> None:
        seen.append(f"{response.request.method} {response.status_code}")
        response.raise_for_status()

    client.event_hooks = {"request": [lambda r: seen.append(str(r.url))], "response": [on_response]}
    nodelay_mock.add_response(url=f"{untouched}/missing", status_code=404)
    with pytest.raises(nodelay.HTTPStatusError, match="404"):
        client.get(f"{untouched}/missing")
    assert seen == [f"{untouched}/missing", "GET 404"]


def test_add_exception_raises_it_with_the_request(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_exception(nodelay.ConnectError("refused by the mock"), url=f"{untouched}/down")
    with pytest.raises(nodelay.ConnectError, match="refused by the mock") as caught:
        client.get(f"{untouched}/down")
    assert caught.value.request is not None
    assert str(caught.value.request.url) == f"{untouched}/down"


def test_add_callback_answers_from_the_request(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    def echo(request: nodelay.Request) -> nodelay.Response:
        return nodelay.Response(
            200, json={"got": request.content.decode(), "q": request.url.params["q"]}
        )

    nodelay_mock.add_callback(echo, method="POST", url=re.compile(r".*/echo\?q=\w+$"))
    assert client.post(f"{untouched}/echo?q=hi", content=b"body").json() == {
        "got": "body",
        "q": "hi",
    }


@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False)
def test_an_unmatched_request_raises_naming_it(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(method="POST", url=f"{untouched}/a")
    client.post(f"{untouched}/a")
    with pytest.raises(nodelay.TimeoutException) as caught:
        client.get(f"{untouched}/b?x=1")
    assert str(caught.value) == (
        f"No response can be found for GET request on {untouched}/b?x=1 amongst:\n"
        f"- Already matched POST request on {untouched}/a\n\n"
        "To answer more than one request with a response, register it with "
        "is_reusable=True (see docs/testing.md)"
    )
    assert isinstance(caught.value, nodelay.RequestError)
    assert caught.value.request is not None and caught.value.request.method == "GET"


@pytest.mark.nodelay_mock(should_mock=lambda request: "/bytes/" not in str(request.url))
def test_should_mock_sends_the_other_requests_to_the_network(
    client: nodelay.Client, nodelay_mock: NodelayMock, server: _core.TestServer, driver: str
) -> None:
    nodelay_mock.add_response(url=f"{server.url}/mocked", text="mocked")
    before = server.requests()
    assert client.get(f"{server.url}/bytes/4").content == b"abcd"
    assert client.get(f"{server.url}/mocked").text == "mocked"
    assert server.requests() == before + 1
    transport = nodelay.HTTPTransport if driver == "sync" else nodelay.AsyncHTTPTransport
    with nodelay.Client(transport=transport(retries=1)) as through_transport:
        assert through_transport.get(f"{server.url}/bytes/2").content == b"ab"
    assert server.requests() == before + 2


@pytest.mark.sync_only("streams with the sync API; the async one: test_async_paths")
def test_stream_reads_a_mocked_body_in_chunks(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(url=f"{untouched}/s", stream=[b"ab", b"cd", b"ef"], is_reusable=True)
    with client.stream("GET", f"{untouched}/s") as response:
        assert list(response.iter_bytes()) == [b"ab", b"cd", b"ef"]
    with nodelay.stream("GET", f"{untouched}/s") as response:
        assert b"".join(response.iter_raw()) == b"abcdef"
    assert client.get(f"{untouched}/s", stream=True).read() == b"abcdef"


@pytest.mark.sync_only("module-level calls make a Client")
def test_module_level_calls_are_answered(nodelay_mock: NodelayMock, untouched: str) -> None:
    nodelay_mock.add_response(method="GET", url=f"{untouched}/m", text="got")
    nodelay_mock.add_response(
        method="POST", url=f"{untouched}/m", match_json={"a": 1}, text="posted"
    )
    nodelay_mock.add_response(method="DELETE", url=f"{untouched}/m", status_code=204)
    assert nodelay.get(f"{untouched}/m").text == "got"
    assert nodelay.post(f"{untouched}/m", json={"a": 1}).text == "posted"
    assert nodelay.request("DELETE", f"{untouched}/m").status_code == 204


@pytest.mark.sync_only("get_many and map are Client's")
def test_get_many_and_map_answer_every_request_in_order(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    urls = [f"{untouched}/item/{i}" for i in range(6)]
    for i, url in enumerate(reversed(urls)):  # registered in another order than asked
        nodelay_mock.add_response(url=url, json=5 - i)
    assert [r.json() for r in client.get_many(urls, concurrency=4)] == list(range(6))
    nodelay_mock.add_response(method="POST", url=urls[0], text="posted")
    nodelay_mock.add_exception(nodelay.ReadTimeout("slow"), url=urls[1])
    results = client.map(
        [("POST", urls[0], {"json": {}}), ("GET", urls[1])], return_exceptions=True
    )
    assert results[0].text == "posted"  # type: ignore[union-attr]
    assert isinstance(results[1], nodelay.ReadTimeout)


@pytest.mark.sync_only("nodelay.requests is synchronous")
def test_the_requests_facade_is_answered(nodelay_mock: NodelayMock, untouched: str) -> None:
    nodelay_mock.add_response(
        url=f"{untouched}/r", json={"facade": True}, headers={"Set-Cookie": "f=1"}
    )
    nodelay_mock.add_response(url=f"{untouched}/r2", status_code=500)
    with nodelay.requests.Session() as session:
        response = session.get(f"{untouched}/r")
        assert response.json() == {"facade": True}
        assert session.cookies["f"] == "1"
        with pytest.raises(nodelay.requests.exceptions.HTTPError):
            session.get(f"{untouched}/r2").raise_for_status()
    sent = nodelay_mock.get_request(url=f"{untouched}/r2")
    assert sent is not None and sent.headers["cookie"] == "f=1"
    nodelay_mock.add_response(method="POST", url=f"{untouched}/r3", match_content=b"a=1")
    assert nodelay.requests.post(f"{untouched}/r3", data={"a": "1"}).status_code == 200


@pytest.mark.sync_only("the transports are Client's (the async ones are the same seam)")
def test_engine_transports_are_answered_and_others_are_left_alone(
    nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(url=f"{untouched}/t", text="mocked", is_reusable=True)
    with nodelay.Client(transport=nodelay.HTTPTransport()) as adopted:
        assert adopted.get(f"{untouched}/t").text == "mocked"
    with nodelay.Client(transport=nodelay.HTTPTransport(retries=2)) as retrying:
        assert retrying.get(f"{untouched}/t").text == "mocked"
    own = nodelay.MockTransport(lambda request: nodelay.Response(200, text="the test's own"))
    with nodelay.Client(mounts={"all://": own}) as mounted:
        assert mounted.get(f"{untouched}/t").text == "the test's own"
    assert len(nodelay_mock.get_requests()) == 2


@pytest.mark.sync_only("threads share one Client")
def test_requests_from_threads_are_all_answered_and_recorded(
    client: nodelay.Client, nodelay_mock: NodelayMock, untouched: str
) -> None:
    nodelay_mock.add_response(url=re.compile(rf"{re.escape(untouched)}/t/\d+"), is_reusable=True)
    statuses: list[int] = []

    def worker(n: int) -> None:
        for i in range(10):
            statuses.append(client.get(f"{untouched}/t/{n * 10 + i}").status_code)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 40
    assert sorted(str(r.url) for r in nodelay_mock.get_requests()) == sorted(
        f"{untouched}/t/{i}" for i in range(40)
    )


@pytest.mark.sync_only("runs its own event loop")
def test_async_paths(nodelay_mock: NodelayMock, untouched: str) -> None:
    async def answer(request: nodelay.Request) -> nodelay.Response:
        await asyncio.sleep(0)
        return nodelay.Response(200, text=f"async {request.method}")

    nodelay_mock.add_response(url=f"{untouched}/a", json=[1])
    nodelay_mock.add_response(url=f"{untouched}/s", stream=[b"x", b"y"])
    nodelay_mock.add_callback(answer, url=f"{untouched}/cb")

    async def main() -> list[Any]:
        async with nodelay.AsyncClient() as client:
            got: list[Any] = [(await client.get(f"{untouched}/a")).json()]
            async with client.stream("GET", f"{untouched}/s") as response:
                got.append([chunk async for chunk in response.aiter_bytes()])
            got.append((await client.post(f"{untouched}/cb")).text)
        return got

    assert asyncio.run(main()) == [[1], [b"x", b"y"], "async POST"]


@pytest.mark.sync_only("checks the classes, once")
def test_nothing_is_patched_without_the_fixture(server: _core.TestServer) -> None:
    assert BaseClient._routed is False and BaseClient._intercept is None
    assert [Client.__dict__[name] for name in _HOT_PATH_METHODS] == _HOT_PATHS
    assert AsyncClient.__dict__["get"] is _ASYNC_GET
    before = server.requests()
    with nodelay.Client() as client:
        assert client._plain and not client._routed
        assert client.get(f"{server.url}/bytes/2").content == b"ab"
    assert server.requests() == before + 1


@pytest.mark.sync_only("reads the installed distribution once")
def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    from importlib.metadata import entry_points

    (plugin,) = [ep for ep in entry_points(group="pytest11") if ep.name == "nodelay"]
    assert plugin.value == "nodelay.testing._plugin"
