"""``Client.get``'s run-time ``**kwargs`` signature behaves like the typed one."""

from __future__ import annotations

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core


def test_get_refuses_arguments_it_does_not_take(client: nodelay.Client) -> None:
    for name in ("json", "content", "data", "files", "bogus"):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
            client.get("http://127.0.0.1:1/", **{name: b"x"})


def test_get_keyword_arguments_take_the_full_path(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    r = client.get(f"{server.url}/anything", params={"a": "1"}, headers={"X-T": "y"})
    data = r.json()
    assert data["query"] == "a=1"
    assert ["x-t", "y"] in data["headers"]
    assert client.get(f"{server.url}/bytes/9#frag").content == expected_bytes(9)
    with pytest.raises(TypeError):
        client.get()  # type: ignore[call-arg]
