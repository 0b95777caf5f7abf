"""``Client.get_many`` and ``Client.map`` go where ``Client.get`` goes: to the Unix socket
or from the local address of the client's ``HTTPTransport``, and through its transport or
mounts (a ``MockTransport``, an ``HTTPTransport`` with retries), never around them."""

from __future__ import annotations

import nodelay
import pytest

URLS = ["http://svc.local/a", "http://svc.local/b?x=1", "http://other:8080/c"]
ANSWERS = ["/a svc.local unix", "/b?x=1 svc.local unix", "/c other:8080 unix"]


def test_batches_go_to_the_transports_unix_socket(unix_server: str) -> None:
    with nodelay.Client(transport=nodelay.HTTPTransport(uds=unix_server)) as client:
        assert [r.text for r in client.get_many(URLS)] == ANSWERS
        assert [r.text for r in client.map([("GET", u) for u in URLS])] == ANSWERS


def test_batches_through_a_retrying_transport_or_a_mount(unix_server: str) -> None:
    # Neither transport's engine is the client's: the batch must route through them.
    retrying = nodelay.HTTPTransport(uds=unix_server, retries=1)
    with nodelay.Client(transport=retrying) as client:
        assert [r.text for r in client.get_many(URLS)] == ANSWERS
    mounts = {"http://svc.local": nodelay.HTTPTransport(uds=unix_server)}
    with nodelay.Client(mounts=mounts) as client:
        assert [r.text for r in client.get_many(URLS[:2])] == ANSWERS[:2]
        with pytest.raises(nodelay.ConnectError):
            client.get_many(URLS[2:])  # not mounted: the client's own engine, over TCP


def test_batches_from_the_transports_local_address(tcp_port: int) -> None:
    url = f"http://127.0.0.1:{tcp_port}/a"
    transport = nodelay.HTTPTransport(local_address="127.0.0.2")
    with nodelay.Client(transport=transport) as client:
        answers = [r.text for r in client.get_many([url] * 4, concurrency=2)]
    assert answers == [f"/a 127.0.0.1:{tcp_port} 127.0.0.2"] * 4


def test_batches_through_a_mock_transport(tcp_port: int) -> None:
    seen: list[str] = []

    def handler(request: nodelay.Request) -> nodelay.Response:
        seen.append(str(request.url))
        return nodelay.Response(200, text="mock")

    url = f"http://127.0.0.1:{tcp_port}/a"
    with nodelay.Client(transport=nodelay.MockTransport(handler)) as client:
        assert [r.text for r in client.get_many([url, url])] == ["mock", "mock"]
        assert [r.text for r in client.map([("POST", url, {"content": b"x"})])] == ["mock"]
    assert seen == [url] * 3
