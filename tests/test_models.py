"""``Headers``, ``Request`` and hand-built ``Response`` objects (no network)."""

from __future__ import annotations

import asyncio
import datetime
import pickle
from collections.abc import AsyncIterator

import nodelay
import pytest
from nodelay import Headers


def test_headers_case_insensitive_multi_value() -> None:
    h = Headers([("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2")])
    assert h["set-cookie"] == "a=1, b=2"
    assert h["CONTENT-TYPE"] == "text/plain"
    assert h.get_list("Set-Cookie") == ["a=1", "b=2"]
    assert h.get_list("missing") == []
    assert "content-type" in h and "Content-Type" in h and "x" not in h
    assert 3 not in h  # type: ignore[operator]
    assert len(h) == 2
    assert list(h) == ["Set-Cookie", "Content-Type"]
    assert list(h.keys()) == ["Set-Cookie", "Content-Type"]
    assert dict(h.items()) == {"Set-Cookie": "a=1, b=2", "Content-Type": "text/plain"}
    assert h.multi_items() == [
        ("Set-Cookie", "a=1"),
        ("Content-Type", "text/plain"),
        ("set-cookie", "b=2"),
    ]
    assert h.raw == h.multi_items()
    assert h.get("nope") is None and h.get("nope", "d") == "d"
    with pytest.raises(KeyError):
        h["nope"]


def test_headers_constructors() -> None:
    assert Headers({"A": "1"}).raw == [("A", "1")]
    assert Headers([("A", "1"), ("A", "2")]).raw == [("A", "1"), ("A", "2")]
    assert Headers(Headers({"A": "1"})).raw == [("A", "1")]
    assert Headers({b"A": b"\xe9"}).raw == [("A", "\xe9")]
    assert Headers().raw == [] and len(Headers()) == 0
    with pytest.raises(TypeError):
        Headers({"A": 1})  # type: ignore[dict-item]


def test_headers_mutation_keeps_order_and_copies() -> None:
    h = Headers([("A", "1"), ("B", "2"), ("a", "3"), ("C", "4")])
    before = h.raw
    h["a"] = "x"
    assert h.raw == [("A", "x"), ("B", "2"), ("C", "4")]
    assert before == [("A", "1"), ("B", "2"), ("a", "3"), ("C", "4")]
    h["D"] = "5"
    assert h.raw[-1] == ("D", "5")
    del h["b"]
    assert "B" not in h
    with pytest.raises(KeyError):
        del h["b"]
    h.add("c", "6")
    assert h.get_list("C") == ["4", "6"]
    h.update({"c": "7", "E": "8"})
    assert h.raw == [("A", "x"), ("c", "7"), ("D", "5"), ("E", "8")]
    h.update(Headers([("e", "9"), ("e", "10")]))
    assert h.get_list("E") == ["9", "10"]
    assert h.pop("d") == "5"
    assert h.setdefault("F", "11") == "11"
    copy = h.copy()
    copy["A"] = "changed"
    assert h["a"] == "x"
    h.clear()
    assert len(h) == 0 and h.raw == []


def test_headers_equality_and_repr() -> None:
    h = Headers([("Content-Type", "a"), ("X", "1")])
    assert h == {"content-type": "a", "x": "1"}
    assert h == [("x", "1"), ("CONTENT-TYPE", "a")]
    assert h == Headers({"X": "1", "Content-Type": "a"})
    assert h != {"content-type": "a"}
    assert h != "not headers"
    assert repr(h) == "Headers({'Content-Type': 'a', 'X': '1'})"
    assert repr(Headers([("a", "1"), ("A", "2")])) == "Headers([('a', '1'), ('A', '2')])"
    assert pickle.loads(pickle.dumps(h)) == h


def test_request() -> None:
    r = nodelay.Request("post", "http://127.0.0.1/x", headers={"A": "1"}, content="é")
    assert r.method == "POST"
    assert r.url == "http://127.0.0.1/x"
    assert r.headers["a"] == "1"
    assert r.content == "é".encode()
    assert repr(r) == "<Request('POST', 'http://127.0.0.1/x')>"
    assert nodelay.Request("GET", "http://127.0.0.1/").content == b""


def test_hand_built_response() -> None:
    request = nodelay.Request("GET", "http://127.0.0.1/x")
    r = nodelay.Response(
        200, headers={"Content-Type": "application/json"}, content=b'{"a": 1}', request=request
    )
    assert r.status_code == 200
    assert r.reason_phrase == "OK" and r.reason == "OK"
    assert r.http_version == "HTTP/1.1"
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"a": 1}
    assert r.text == '{"a": 1}'
    assert r.encoding == "utf-8"
    assert r.url == "http://127.0.0.1/x"
    assert r.request is request
    assert r.history == []
    assert r.elapsed == datetime.timedelta(0)
    assert repr(r) == "<Response [200 OK]>"
    assert r.raise_for_status() is r
    assert r.ok and r.is_success and not r.is_error


@pytest.mark.parametrize(
    ("status", "flags"),
    [
        (101, {"is_informational", "ok"}),
        (204, {"is_success", "ok"}),
        (302, {"is_redirect", "ok"}),
        (404, {"is_client_error", "is_error"}),
        (503, {"is_server_error", "is_error"}),
    ],
)
def test_status_predicates(status: int, flags: set[str]) -> None:
    r = nodelay.Response(status)
    for name in (
        "is_informational",
        "is_success",
        "is_redirect",
        "is_client_error",
        "is_server_error",
        "is_error",
        "ok",
    ):
        assert getattr(r, name) is (name in flags), name


def test_has_redirect_location() -> None:
    assert nodelay.Response(302, headers={"Location": "/x"}).has_redirect_location
    assert not nodelay.Response(302).has_redirect_location
    assert not nodelay.Response(300, headers={"Location": "/x"}).has_redirect_location
    assert not nodelay.Response(200, headers={"Location": "/x"}).has_redirect_location


@pytest.mark.parametrize(("status", "kind"), [(404, "Client error"), (502, "Server error")])
def test_raise_for_status(status: int, kind: str) -> None:
    request = nodelay.Request("GET", "http://127.0.0.1/y")
    r = nodelay.Response(status, request=request)
    with pytest.raises(nodelay.HTTPStatusError) as info:
        r.raise_for_status()
    assert info.value.response is r
    assert info.value.request is request
    message = str(info.value)
    assert message.startswith(f"{kind} '{status} {r.reason_phrase}' for url 'http://127.0.0.1/y'")
    assert f"https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/{status}" in message


def test_text_uses_charset_and_settable_encoding() -> None:
    body = "héllo wörld".encode("latin-1")
    r = nodelay.Response(
        200, headers={"Content-Type": 'text/plain; charset="ISO-8859-1"'}, content=body
    )
    assert r.encoding == "ISO-8859-1"
    assert r.text == "héllo wörld"
    r.encoding = "utf-8"
    assert r.text == "h\ufffdllo w\ufffdrld"
    r.encoding = None
    assert r.text == "héllo wörld"
    unknown = nodelay.Response(
        200, headers={"Content-Type": "text/plain; charset=nope"}, content=b"ok\xff"
    )
    assert unknown.text == "ok\ufffd"
    assert nodelay.Response(200, content="ü").text == "ü"


def test_response_pickles_as_a_detached_copy() -> None:
    r = nodelay.Response(201, headers=[("A", "1"), ("A", "2")], content=b"body")
    back = pickle.loads(pickle.dumps(r))
    assert back.status_code == 201
    assert back.headers.get_list("a") == ["1", "2"]
    assert back.content == b"body"


def test_a_streamed_body_read_by_the_other_kind_of_iterator_is_refused_and_left_unread() -> None:
    # httpx's RuntimeError; the refused iteration does not consume the body.
    async def chunks() -> AsyncIterator[bytes]:
        yield b"ab"
        yield b"c"

    async def read_async(response: nodelay.Response) -> bytes:
        return b"".join([chunk async for chunk in response.aiter_bytes()])

    r = nodelay.Response(200, content=chunks())
    with pytest.raises(RuntimeError, match="a sync iterator on an async stream"):
        list(r.iter_bytes())
    assert asyncio.run(read_async(r)) == b"abc"
    r = nodelay.Response(200, content=iter([b"ab", b"c"]))
    with pytest.raises(RuntimeError, match="an async iterator on a sync stream"):
        asyncio.run(read_async(r))
    assert b"".join(r.iter_bytes()) == b"abc"
