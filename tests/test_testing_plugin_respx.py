"""respx over nodelay's own API: ``respx.mock(using="nodelay")`` (``nodelay.testing.
respx_mocker``), through respx's documented examples (https://lundberg.github.io/respx/:
guide, api), with nodelay clients where they use httpx's. The embedded server counts
the requests it serves: a mocked one never reaches it, a ``pass_through()`` one does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import nodelay
import pytest
from nodelay import _core
from nodelay._base import BaseClient

respx = pytest.importorskip("respx")
httpx = pytest.importorskip("httpx")


@pytest.fixture
def hits(server: _core.TestServer) -> Iterator[list[int]]:
    """``[requests the server served during the test]``, filled in at its end, which must
    match what the test expects in ``hits[0]`` (default 0)."""
    before = server.requests()
    expected = [0]
    yield expected
    assert server.requests() - before == expected[0]


def test_the_mocker_is_registered_by_the_plugin() -> None:
    from nodelay.testing.respx_mocker import NodelayMocker

    assert respx.mocks.Mocker.registry["nodelay"] is NodelayMocker


def test_the_decorator_example(server: _core.TestServer, hits: list[int]) -> None:
    url = f"{server.url}/"

    # respx's decorator with settings makes a router of its own, which it passes to
    # the function (respx's guide: "Router Settings"); ``respx.get`` would add the route
    # to the global router, which uses respx's default mocker.
    @respx.mock(using="nodelay")
    def test_example(respx_mock: respx.MockRouter) -> None:
        my_route = respx_mock.get(url).mock(return_value=httpx.Response(204))
        response = nodelay.get(url)
        assert my_route.called
        assert response.status_code == 204

    test_example()
    assert BaseClient._routed is False  # stopped with the decorated function


def test_the_context_manager_example_with_a_base_url(
    server: _core.TestServer, hits: list[int]
) -> None:
    with respx.mock(base_url=server.url, assert_all_called=False, using="nodelay") as respx_mock:
        users_route = respx_mock.get("/users/", name="list_users")
        users_route.return_value = httpx.Response(200, json=[])
        respx_mock.get("/unused/")
        with nodelay.Client() as client:
            response = client.get(f"{server.url}/users/")
        assert users_route.called
        assert respx_mock["list_users"].call_count == 1
        assert response.json() == []
        assert respx.calls.call_count == 0  # the global router was not used
        assert respx_mock.calls.last.request.url == f"{server.url}/users/"


def test_side_effects_exceptions_and_functions(server: _core.TestServer, hits: list[int]) -> None:
    def my_side_effect(request: httpx.Request, slug: str) -> httpx.Response:
        return httpx.Response(201, json={"slug": slug, "body": request.content.decode()})

    with respx.mock(base_url=server.url, using="nodelay") as respx_mock:
        respx_mock.post(path__regex=r"/(?P<slug>\w+)/$").mock(side_effect=my_side_effect)
        route = respx_mock.get("/down/")
        route.side_effect = httpx.ConnectError
        with nodelay.Client() as client:
            response = client.post(f"{server.url}/foobar/", content=b"hi")
            assert response.status_code == 201
            assert response.json() == {"slug": "foobar", "body": "hi"}
            with pytest.raises(nodelay.ConnectError) as caught:
                client.get(f"{server.url}/down/")
        assert isinstance(caught.value.__cause__, httpx.ConnectError)
        assert caught.value.request is not None
        assert str(caught.value.request.url) == f"{server.url}/down/"


def test_side_effect_sequence_and_recorded_calls(server: _core.TestServer, hits: list[int]) -> None:
    with respx.mock(using="nodelay") as respx_mock:
        route = respx_mock.get(f"{server.url}/seq").mock(
            side_effect=[httpx.Response(500), httpx.Response(200, text="second")]
        )
        with nodelay.Client() as client:
            assert client.get(f"{server.url}/seq").status_code == 500
            assert client.get(f"{server.url}/seq").text == "second"
        assert route.call_count == 2
        assert route.calls.last.response.status_code == 200
        assert route.calls[0].request.headers["user-agent"].startswith("nodelay/")


def test_pass_through_sends_to_the_server(server: _core.TestServer, hits: list[int]) -> None:
    with respx.mock(using="nodelay") as respx_mock:
        respx_mock.route(path__startswith="/bytes/").pass_through()
        respx_mock.get(f"{server.url}/mocked").respond(text="mocked")
        with nodelay.Client() as client:
            assert client.get(f"{server.url}/bytes/5").content == b"abcde"
            assert client.get(f"{server.url}/mocked").text == "mocked"
    hits[0] = 1


def test_unmatched_requests_raise_or_get_an_empty_200(
    server: _core.TestServer, hits: list[int]
) -> None:
    with respx.mock(using="nodelay", assert_all_called=False), nodelay.Client() as client:
        with pytest.raises(respx.models.AllMockedAssertionError, match="not mocked"):
            client.get(f"{server.url}/nothing")
    with respx.mock(using="nodelay", assert_all_mocked=False), nodelay.Client() as client:
        response = client.get(f"{server.url}/nothing")
        assert (response.status_code, response.content) == (200, b"")


def test_redirects_cookies_and_get_many_run_above_respx(
    server: _core.TestServer, hits: list[int]
) -> None:
    with respx.mock(base_url=server.url, using="nodelay") as respx_mock:
        respx_mock.get("/old").respond(301, headers={"Location": "/new", "Set-Cookie": "c=1"})
        respx_mock.get("/new").respond(json={"new": True})
        respx_mock.get(path__regex=r"/n/(?P<n>\d+)").mock(
            side_effect=lambda request, n: httpx.Response(200, json=int(n))
        )
        with nodelay.Client(follow_redirects=True) as client:
            response = client.get(f"{server.url}/old")
            assert response.json() == {"new": True}
            assert [r.status_code for r in response.history] == [301]
            assert respx_mock.calls.last.request.headers["cookie"] == "c=1"
            urls = [f"{server.url}/n/{i}" for i in range(5)]
            assert [r.json() for r in client.get_many(urls)] == list(range(5))


def test_async_client(server: _core.TestServer, hits: list[int]) -> None:
    async def main() -> tuple[int, str]:
        async with respx.mock(using="nodelay") as respx_mock:
            route = respx_mock.get(f"{server.url}/a").respond(418, text="teapot")
            async with nodelay.AsyncClient() as client:
                response = await client.get(f"{server.url}/a")
            assert route.called
            return response.status_code, response.text

    assert asyncio.run(main()) == (418, "teapot")


@pytest.mark.respx(using="nodelay", base_url="http://api.test")
def test_the_respx_mock_fixture(respx_mock: respx.MockRouter) -> None:
    respx_mock.get("/fixture").respond(json={"fixture": True})
    assert nodelay.get("http://api.test/fixture").json() == {"fixture": True}


def test_the_requests_facade(server: _core.TestServer, hits: list[int]) -> None:
    import nodelay.requests

    with respx.mock(using="nodelay") as respx_mock:
        route = respx_mock.get(f"{server.url}/facade").respond(json={"via": "facade"})
        with nodelay.requests.Session() as session:
            assert session.get(f"{server.url}/facade").json() == {"via": "facade"}
        assert route.called
