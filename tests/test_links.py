"""``Response.links`` (the Link header), ``is_permanent_redirect``, ``charset_encoding``."""

from __future__ import annotations

from collections.abc import Callable

import nodelay
import pytest
from nodelay._links import parse_links
from scripted import Recv, ScriptedServer, Send, response


def test_github_style_pagination() -> None:
    value = (
        '<https://api.example/items?page=2>; rel="next", '
        '<https://api.example/items?page=9>; rel="last"'
    )
    assert parse_links(value) == {
        "next": {"url": "https://api.example/items?page=2", "rel": "next"},
        "last": {"url": "https://api.example/items?page=9", "rel": "last"},
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", {}),
        ('""', {}),
        ("<https://a/x>", {"https://a/x": {"url": "https://a/x"}}),  # no rel: keyed by URL
        (
            '<https://a/x,y>; rel=next; title="a, b"',  # commas inside URL and parameter
            {"next": {"url": "https://a/x,y", "rel": "next", "title": "a, b"}},
        ),
        (
            "<https://a/1>; REL='prev'; type=text/html",  # names case-insensitive, quotes
            {"prev": {"url": "https://a/1", "rel": "prev", "type": "text/html"}},
        ),
        (
            "<https://a/1>; rel=next; junk; type=x",  # a parameter without "=" ends the list
            {"next": {"url": "https://a/1", "rel": "next"}},
        ),
        (
            "<https://a/1>; rel=next, <https://a/2>; rel=next",  # the later one wins
            {"next": {"url": "https://a/2", "rel": "next"}},
        ),
        ("garbage;;;==,,", {"garbage": {"url": "garbage"}}),  # never raises
    ],
)
def test_link_values(value: str, expected: dict[str, dict[str, str]]) -> None:
    assert parse_links(value) == expected


def test_response_links_from_one_or_several_link_fields() -> None:
    r = nodelay.Response(200, headers=[("Link", "</p2>; rel=next"), ("link", "</p9>; rel=last")])
    assert r.links == {
        "next": {"url": "/p2", "rel": "next"},
        "last": {"url": "/p9", "rel": "last"},
    }
    assert nodelay.Response(200).links == {}


def test_links_of_a_response_from_the_wire(scripted: Callable[..., ScriptedServer]) -> None:
    link = '<https://api.example/?page=2>; rel="next", <https://api.example/?page=5>; rel="last"'
    srv = scripted([Recv(), Send(response(200, b"[]", [("Link", link)]))])
    with nodelay.Client() as client:
        r = client.get(srv.url)
    assert r.links["next"]["url"] == "https://api.example/?page=2"
    assert r.links["last"]["url"] == "https://api.example/?page=5"


@pytest.mark.parametrize(
    ("status", "location", "permanent"),
    [
        (301, "/x", True),
        (308, "/x", True),
        (302, "/x", False),
        (307, "/x", False),
        (301, None, False),
    ],
)
def test_is_permanent_redirect(status: int, location: str | None, permanent: bool) -> None:
    headers = [("Location", location)] if location else []
    assert nodelay.Response(status, headers=headers).is_permanent_redirect is permanent


def test_charset_encoding() -> None:
    assert (
        nodelay.Response(
            200, headers=[("Content-Type", "text/html; charset=ISO-8859-1")]
        ).charset_encoding
        == "ISO-8859-1"
    )
    assert nodelay.Response(200, headers=[("Content-Type", "text/html")]).charset_encoding is None
    assert nodelay.Response(200).charset_encoding is None
