"""``Client.get_many`` and ``Client.map``: many requests from worker threads, GIL released."""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Callable

import nodelay
import pytest
from children import exit_code_after_ctrl_c
from conftest import expected_bytes
from nodelay import _core
from scripted import Close, Recv, ScriptedServer, Send, Sleep, response


def test_get_many_returns_responses_in_input_order(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    sizes = [1 + (i * 37) % 3000 for i in range(200)]
    urls = [f"{server.url}/bytes/{n}" for n in sizes]
    responses = client.get_many(urls, concurrency=8)
    assert len(responses) == len(urls)
    for n, url, r in zip(sizes, urls, responses, strict=True):
        assert r.status_code == 200
        assert r.content == expected_bytes(n)
        assert r.url == url
        assert r.request.method == "GET"
        assert r.request.url == url


def test_get_many_reuses_at_most_concurrency_connections(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        for _ in range(3):
            rs = client.get_many([f"{server.url}/bytes/10"] * 50, concurrency=4)
            assert all(r.content == expected_bytes(10) for r in rs)
        assert server.connections() - before <= 4


def test_get_many_empty_and_single(client: nodelay.Client, server: _core.TestServer) -> None:
    assert client.get_many([]) == []
    (r,) = client.get_many(iter([f"{server.url}/bytes/3"]))
    assert r.content == b"abc"


def test_get_many_rejects_bad_arguments(client: nodelay.Client, server: _core.TestServer) -> None:
    with pytest.raises(TypeError, match="iterable of URLs"):
        client.get_many(f"{server.url}/bytes/3")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="concurrency"):
            client.get_many([f"{server.url}/bytes/3"], concurrency=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="between 1 and"):
        client.get_many([f"{server.url}/bytes/3"], concurrency=100_000)


def test_get_many_applies_client_defaults(server: _core.TestServer) -> None:
    with nodelay.Client(
        base_url=server.url, headers={"X-Team": "perf"}, params={"a": "1"}
    ) as client:
        rs = client.get_many(["/anything/x", "/anything/y"], headers={"X-Call": "2"})
        for r, path in zip(rs, ["/anything/x", "/anything/y"], strict=True):
            data = r.json()
            assert data["path"] == path
            assert data["query"] == "a=1"
            headers = dict(data["headers"])
            assert headers["x-team"] == "perf"
            assert headers["x-call"] == "2"
            assert headers["user-agent"].startswith("nodelay/")


def test_get_many_sends_and_stores_cookies(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        client.cookies.set("seen", "yes", domain="127.0.0.1")
        (r, r2) = client.get_many(
            [f"{server.url}/cookies", f"{server.url}/cookies/set?batch=1"], concurrency=2
        )
        assert r.json()["cookies"] == {"seen": "yes"}
        assert r2.status_code == 200
        assert client.cookies.get("batch") == "1"
        assert client.get(f"{server.url}/cookies").json()["cookies"] == {
            "seen": "yes",
            "batch": "1",
        }


def test_get_many_follows_redirects_when_asked(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        urls = [f"{server.url}/redirect/2", f"{server.url}/bytes/5"]
        plain = client.get_many(urls)
        assert plain[0].status_code == 302
        followed = client.get_many(urls, follow_redirects=True)
        assert followed[0].status_code == 200
        assert len(followed[0].history) == 2
        assert followed[1].content == expected_bytes(5)


def test_get_many_uses_auth_through_the_per_request_path(server: _core.TestServer) -> None:
    with nodelay.Client(auth=("user", "pw")) as client:
        rs = client.get_many([f"{server.url}/headers"] * 3)
        for r in rs:
            headers = r.json()["headers"]
            assert headers["authorization"] == "Basic dXNlcjpwdw=="


def test_map_mixed_methods_and_bodies(client: nodelay.Client, server: _core.TestServer) -> None:
    rs = client.map(
        [
            ("GET", f"{server.url}/bytes/7"),
            ("POST", f"{server.url}/echo", {"content": b"raw body"}),
            ("PUT", f"{server.url}/anything", {"json": {"k": [1, 2]}}),
            ("POST", f"{server.url}/anything", {"data": {"a": "b c"}, "params": {"q": "1"}}),
            nodelay.Request("PATCH", f"{server.url}/echo", content=b"patched"),
            nodelay.Request("DELETE", f"{server.url}/anything", headers={"X-Del": "1"}),
        ],
        concurrency=3,
    )
    assert [r.status_code for r in rs] == [200] * 6
    assert rs[0].content == expected_bytes(7)
    assert rs[1].content == b"raw body"
    put = rs[2].json()
    assert put["method"] == "PUT"
    assert put["body"] == '{"k":[1,2]}'
    assert ["content-type", "application/json"] in put["headers"]
    post = rs[3].json()
    assert post["body"] == "a=b+c"
    assert post["query"] == "q=1"
    assert rs[4].content == b"patched"
    deleted = rs[5].json()
    assert deleted["method"] == "DELETE"
    assert ["x-del", "1"] in deleted["headers"]


def test_map_rejects_unknown_items(client: nodelay.Client, server: _core.TestServer) -> None:
    with pytest.raises(TypeError, match=r"Client\.map items"):
        client.map([f"{server.url}/bytes/1"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="unsupported request arguments"):
        client.map([("GET", f"{server.url}/bytes/1", {"stream": True})])


def test_first_error_is_raised_and_the_rest_is_not_started(
    scripted: Callable[..., ScriptedServer],
) -> None:
    make = scripted
    srv = make([Recv(), Close()])  # the first connection is closed without an answer
    with nodelay.Client() as client:
        urls = [f"{srv.url}/x"] + [f"{srv.url}/y{i}" for i in range(20)]
        with pytest.raises(nodelay.RemoteProtocolError) as info:
            client.get_many(urls, concurrency=1)
        assert info.value.request is not None
        assert info.value.request.url == urls[0]
        time.sleep(0.2)
        assert srv.connections == 1  # nothing after the failure was sent


def test_return_exceptions_puts_errors_in_the_list(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    urls = [f"{server.url}/bytes/4", "http://127.0.0.1:1/refused", f"{server.url}/bytes/6"]
    rs = client.get_many(urls, return_exceptions=True)
    assert isinstance(rs[0], nodelay.Response) and rs[0].content == expected_bytes(4)
    assert isinstance(rs[1], nodelay.ConnectError)
    assert rs[1].request is not None and rs[1].request.url == urls[1]
    assert isinstance(rs[2], nodelay.Response) and rs[2].content == expected_bytes(6)
    with pytest.raises(nodelay.ConnectError):
        client.get_many(urls)


def test_timeouts_apply_per_request(client: nodelay.Client, server: _core.TestServer) -> None:
    started = time.monotonic()
    rs = client.get_many(
        [f"{server.url}/delay/3000", f"{server.url}/bytes/1"],
        timeout=0.3,
        return_exceptions=True,
    )
    assert isinstance(rs[0], nodelay.ReadTimeout)
    assert isinstance(rs[1], nodelay.Response)
    assert time.monotonic() - started < 2.5


def test_the_gil_is_released_while_the_batch_runs(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        client.get_many([f"{server.url}/delay/300"] * 4, concurrency=4)
    finally:
        stop.set()
        t.join()
    assert ticks > 50  # the other thread ran during the ~300 ms batch


def test_a_closed_client_refuses_batches(server: _core.TestServer) -> None:
    client = nodelay.Client()
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.get_many([f"{server.url}/bytes/1"])


def test_scripted_answers_arrive_in_order(scripted: Callable[..., ScriptedServer]) -> None:
    make = scripted
    srv = make(*[[Recv(), Send(response(200, f"r{i}".encode()))] for i in range(6)])
    with nodelay.Client() as client:
        rs = client.get_many([f"{srv.url}/{i}" for i in range(6)], concurrency=6)
    assert sorted(r.content for r in rs) == [f"r{i}".encode() for i in range(6)]


def test_ctrl_c_interrupts_a_batch(server: _core.TestServer) -> None:
    script = textwrap.dedent(
        """
        import sys, nodelay
        print("ready", flush=True)
        try:
            nodelay.Client().get_many([sys.argv[1] + "/delay/10000"] * 4, timeout=30)
        except KeyboardInterrupt:
            sys.exit(42)
        sys.exit(0)
        """
    )
    assert exit_code_after_ctrl_c(script, server.url) == 42


def test_a_batch_redirect_chain_shares_the_total_with_its_first_hop(
    scripted: Callable[..., ScriptedServer],
) -> None:
    # The first hop (0.8 s) runs in the batch, the rest in the redirect flow: the flow's
    # budget is what that hop left (0.4 s), so the second hop times out and /c is never
    # asked for (with a fresh budget the second hop fit and the third was sent). The flow
    # may go on the batch's connection or open one: both answer /b the same way.
    rest = [
        Recv(),
        Sleep(0.8),
        Send(response(302, headers=[("Location", "/c")], reason="Found")),
        Recv(),
        Send(response(body=b"end")),
    ]
    srv = scripted(
        [
            Recv(),
            Sleep(0.8),
            Send(response(302, headers=[("Location", "/b")], reason="Found")),
            *rest,
        ],
        rest,
    )
    with nodelay.Client(timeout=nodelay.Timeout(5.0, total=1.2), follow_redirects=True) as c:
        (result,) = c.get_many([srv.url + "/a"], return_exceptions=True)
    assert isinstance(result, nodelay.ReadTimeout), result
    assert [r.split(b" ")[1] for r in srv.requests] == [b"/a", b"/b"]
