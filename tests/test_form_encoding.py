"""The engine's form encoder (``_core.form_encode``, ``_core.form_encode_dict``: the body of
``data={...}``) against ``urllib.parse.urlencode``, what requests and httpx send."""

from __future__ import annotations

import random
import urllib.parse

from nodelay import _core

# Every ASCII byte, a space run, Latin-1, a CJK character and an emoji (4 UTF-8 bytes).
ALPHABET = [chr(c) for c in range(128)] + ["  ", "é", "ÿ", "中", "😀"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40)))


def test_pairs_match_urllib() -> None:
    rng = random.Random(27)
    for _ in range(500):
        pairs = [(_text(rng), _text(rng)) for _ in range(rng.randrange(0, 6))]
        assert _core.form_encode(pairs) == urllib.parse.urlencode(pairs).encode("ascii"), pairs


def test_dict_matches_urllib() -> None:
    rng = random.Random(29)
    for _ in range(500):
        data = {_text(rng): _text(rng) for _ in range(rng.randrange(0, 6))}
        assert _core.form_encode_dict(data) == urllib.parse.urlencode(data).encode("ascii"), data


def test_edge_cases_match_urllib() -> None:
    for pairs in ([], [("", "")], [("a", ""), ("", "b")], [(" ", "~-._*")], [("%", "&=+")]):
        assert _core.form_encode(pairs) == urllib.parse.urlencode(pairs).encode("ascii")


def test_dict_with_other_types_is_left_to_the_caller() -> None:
    assert _core.form_encode_dict({"a": 1}) is None
    assert _core.form_encode_dict({b"a": "1"}) is None
