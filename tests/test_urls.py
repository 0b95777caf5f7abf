"""URL joining and query merging (pure functions)."""

from __future__ import annotations

import nodelay
import pytest
from nodelay import _urls


@pytest.mark.parametrize(
    ("base", "url", "expected"),
    [
        ("http://h/api", "users", "http://h/api/users"),
        ("http://h/api", "/users", "http://h/api/users"),
        ("http://h/api/", "/users", "http://h/api/users"),
        ("http://h", "users", "http://h/users"),
        ("http://h/api", "", "http://h/api/"),
        ("http://h/api", "http://other/x", "http://other/x"),
        ("http://h/api", "//other/x", "http://other/x"),
        ("http://h/api?q=1#f", "x", "http://h/api/x"),
        ("", "http://h/x", "http://h/x"),
    ],
)
def test_join_base(base: str, url: str, expected: str) -> None:
    assert _urls.join_base(_urls.normalize_base(base), url) == expected


def test_base_url_must_be_absolute() -> None:
    with pytest.raises(nodelay.InvalidURL):
        _urls.normalize_base("/relative")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (None, []),
        ({"a": "1", "b": 2}, [("a", "1"), ("b", "2")]),
        ({"a": ["1", "2"], "b": (3,)}, [("a", "1"), ("a", "2"), ("b", "3")]),
        ([("a", "1"), ("a", "2")], [("a", "1"), ("a", "2")]),
        ("a=1&b=&a=2", [("a", "1"), ("b", ""), ("a", "2")]),
        ("?a=1", [("a", "1")]),
        (
            {"t": True, "f": False, "n": None, "x": 1.5},
            [("t", "true"), ("f", "false"), ("n", ""), ("x", "1.5")],
        ),
    ],
)
def test_param_pairs(params: object, expected: list[tuple[str, str]]) -> None:
    assert _urls.param_pairs(params) == expected  # type: ignore[arg-type]


def test_merge_params_request_wins_by_name() -> None:
    base = [("a", "1"), ("b", "2"), ("b", "3")]
    assert _urls.merge_params(base, [("b", "9"), ("c", "4")]) == [
        ("a", "1"),
        ("b", "9"),
        ("c", "4"),
    ]
    assert _urls.merge_params(base, []) == base
    assert _urls.merge_params([], [("x", "1")]) == [("x", "1")]


@pytest.mark.parametrize(
    ("url", "pairs", "expected"),
    [
        ("http://h/p", [], "http://h/p"),
        ("http://h/p#frag", [], "http://h/p"),
        ("http://h/p", [("a", "1 2"), ("b", "&=")], "http://h/p?a=1+2&b=%26%3D"),
        ("http://h/p?x=%20", [("a", "1")], "http://h/p?x=%20&a=1"),
        ("http://h/p?", [("a", "1")], "http://h/p?a=1"),
        ("http://h/p?x=1#f", [("a", "1")], "http://h/p?x=1&a=1"),
    ],
)
def test_with_query(url: str, pairs: list[tuple[str, str]], expected: str) -> None:
    assert _urls.with_query(url, pairs) == expected
