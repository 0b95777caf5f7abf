"""``Response.json()`` / ``_core.json_loads``: the same results and errors as ``json.loads``."""

from __future__ import annotations

import json
import random
import sys

import nodelay
import pytest
from nodelay import _core

SEEDS = range(40)


def same(a: object, b: object) -> bool:
    """Equal values of exactly the same types, dict order included (floats by repr:
    NaN equals NaN, -0.0 differs from 0.0). Iterative: documents may be deep."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if repr(x) != repr(y):
                return False
        elif isinstance(x, list):
            assert isinstance(y, list)
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            assert isinstance(y, dict)
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


def outcome(loads: object, data: bytes) -> tuple[str, object]:
    try:
        return "ok", loads(data)  # type: ignore[operator]
    except RecursionError:
        return "RecursionError", None
    except json.JSONDecodeError as exc:
        return "JSONDecodeError", (exc.msg, exc.pos)
    except (ValueError, TypeError) as exc:
        return type(exc).__name__, str(exc)


def check(data: bytes) -> None:
    ours, theirs = outcome(_core.json_loads, data), outcome(json.loads, data)
    assert ours[0] == theirs[0], data[:200]
    assert same(ours[1], theirs[1]), data[:200]


_CHARS = 'aZ09 "\\/\b\f\n\r\t\x00\x1f\x7f é€😀\u2028\ud7ff\ue000\uffff'


def random_string(rng: random.Random) -> str:
    return "".join(rng.choice(_CHARS) for _ in range(rng.randrange(0, 12)))


def random_number(rng: random.Random) -> object:
    kind = rng.randrange(7)
    if kind == 0:
        return rng.randrange(-(10**30), 10**30)
    if kind == 1:
        return rng.randrange(-1000, 1000)
    if kind == 2:
        return rng.uniform(-1e6, 1e6)
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e-320, 5e-324, 1.7976931348623157e308, 1e22, 0.1])
    if kind == 4:
        return rng.choice([float("nan"), float("inf"), float("-inf")])
    if kind == 5:
        return rng.choice([2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**18, -(10**18)])
    return rng.random() * 10 ** rng.randrange(-300, 300)


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 6 else 5)
    if kind == 0:
        return random_string(rng)
    if kind == 1:
        return random_number(rng)
    if kind == 2:
        return rng.choice([True, False, None])
    if kind in (3, 4):
        return random_number(rng) if kind == 3 else random_string(rng)
    if kind == 5 or kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 6))]
    return {random_string(rng): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 6))}


@pytest.mark.parametrize("seed", SEEDS)
def test_random_documents_match_json_loads(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(30):
        value = random_value(rng)
        for ascii_only in (True, False):
            text = json.dumps(value, ensure_ascii=ascii_only, indent=rng.choice([None, 1, "\t"]))
            data = text.encode("utf-8", "surrogatepass")
            check(data)
            # Hostile variants: truncated, one byte changed, one byte inserted.
            if data:
                cut = rng.randrange(len(data))
                check(data[:cut])
                pos = rng.randrange(len(data))
                check(data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :])
                check(
                    data[:pos]
                    + rng.choice([b",", b"]", b"}", b":", b'"', b"\\", b" "])
                    + data[pos:]
                )


@pytest.mark.parametrize(
    "data",
    [
        b"0",
        b"-0",
        b"-0.0",
        b"1.5",
        b"1E2",
        b"1e-2",
        b"1E+2",
        b"-1e400",
        b"1e400",
        b"1e-400",
        b"123456789012345678",
        b"1234567890123456789",
        b"-9223372036854775808",
        b"9223372036854775808",
        b"1" * 4300,
        b"1" * 4301,
        b"0." + b"1" * 1000,
        b"01",
        b"-",
        b"--1",
        b"+1",
        b"1.",
        b".5",
        b"1e",
        b"1e+",
        b"0x10",
        b"1_000",
        b"NaN",
        b"-NaN",
        b"Infinity",
        b"-Infinity",
        b"infinity",
        b"nan",
        b"[NaN,-Infinity]",
        b"true",
        b"false",
        b"null",
        b"tru",
        b"nul",
        b"True",
        b"None",
        b'""',
        b'"\\u00e9"',
        b'"\\ud83d\\ude00"',
        b'"\\ud800"',
        b'"\\udc00"',
        b'"\\ud800x"',
        b'"\\ud800\\u0041"',
        b'"\\ud800\\udbff"',
        b'"\\u12"',
        b'"\\u12g4"',
        b'"\\x41"',
        b'"\\/\\b\\f\\n\\r\\t\\"\\\\"',
        b'"a\x00b"',
        b'"a\x1fb"',
        b'"a\x7fb"',
        b'"tab\there"',
        b'"\xc3\xa9"',
        b'"\xff"',
        b'"\xc3"',
        b'"\xed\xa0\x80"',
        b'"\xf4\x90\x80\x80"',
        b"\xef\xbb\xbf[1]",
        b"\xef\xbb\xbf",
        b"\xff\xfe[\x001\x00]\x00",
        b"\xfe\xff\x00[\x001\x00]",
        "[1, 2]".encode("utf-16-le"),
        "[1, 2]".encode("utf-16-be"),
        "[1]".encode("utf-32"),
        "{}".encode("utf-32-le"),
        b"\x00",
        b"",
        b" \t\r\n[ 1 , 2 ]\n",
        b"\x0c[1]",
        b"[1]\x0c",
        b"[1] x",
        b"[1][2]",
        b"[1,]",
        b"[,1]",
        b"[",
        b"]",
        b"{",
        b'{"a"}',
        b'{"a":}',
        b'{"a":1,}',
        b"{1:2}",
        b'{"a":1 "b":2}',
        b'{"a":1,"a":2,"b":3,"a":4}',
        b'{"":0}',
        b'{"a":{"a":{"a":[]}}}',
        b"[[],{},[[{}]]]",
        b'{"\\u0061":1,"a":2}',
        b'{"k' + b"x" * 100 + b'":1}',
        # Keys past 16 bytes whose first non-ASCII byte comes after the 16th.
        b'{"xxxxxxxxxxxxxxxxx\xe2\x80\xa8":1}',
        b'{"xxxxxxxxxxxxxxxx\xc3\xa9":1,"xxxxxxxxxxxxxxxx\xc3\xa9":2}',
    ],
)
def test_edge_cases_match_json_loads(data: bytes) -> None:
    check(data)


def test_duplicate_keys_keep_the_first_position_and_the_last_value() -> None:
    value = _core.json_loads(b'{"a":1,"b":2,"a":3}')
    assert list(value.items()) == [("a", 3), ("b", 2)]  # type: ignore[attr-defined]


def test_repeated_keys_share_one_str() -> None:
    docs = _core.json_loads(b'[{"name":1},{"name":2}]')
    (k1,), (k2,) = docs[0], docs[1]  # type: ignore[index]
    assert k1 is k2
    # The lab's document shape: every item's keys are the same str objects (as with
    # json.loads' memo), and short repeated values mostly are.
    items = [
        {"i": i, "name": f"item-{i}", "tags": ["a", "b"], "id": 1, "ok": True} for i in range(300)
    ]
    parsed = _core.json_loads(json.dumps(items).encode())
    for position in range(5):
        assert len({id(list(d)[position]) for d in parsed}) == 1  # type: ignore[union-attr]
    # Values share a bounded cache with unique ones ("item-N"), so an eviction may
    # make a second "a"; hundreds of them would mean no sharing.
    assert len({id(d["tags"][0]) for d in parsed}) < 10  # type: ignore[index]


@pytest.mark.parametrize("depth", [1, 255, 256, 257, 600, 100_000])
def test_deep_nesting_is_bounded(depth: int) -> None:
    for open_, close in ((b"[", b"]"), (b'{"k":', b"}")):
        check(open_ * depth + b"1" + close * depth)
        check(open_ * depth)  # unterminated


def _depth_of_nested_lists(value: object) -> int:
    # Walked iteratively: list equality this deep meets the interpreter's recursion limits.
    depth = 1
    while value:
        assert isinstance(value, list) and len(value) == 1
        value, depth = value[0], depth + 1
    assert value == []
    return depth


def test_deep_nesting_follows_the_recursion_limit() -> None:
    # json.loads's own outcome is the reference at each recursion limit: which depth it
    # accepts differs between versions (3.11 follows sys.setrecursionlimit; 3.12 stops at
    # a fixed C limit; 3.13 measures the C stack), and nodelay must give the same answer.
    data = b"[" * 3000 + b"]" * 3000
    old = sys.getrecursionlimit()
    try:
        for limit in (old, 10_000):
            sys.setrecursionlimit(limit)
            try:
                json.loads(data)
            except RecursionError:
                with pytest.raises(RecursionError):
                    _core.json_loads(data)
            else:
                assert _depth_of_nested_lists(_core.json_loads(data)) == 3000
    finally:
        sys.setrecursionlimit(old)


def test_large_document() -> None:
    value = [
        {"id": i, "name": f"item {i}", "tags": ["a", "é"], "score": i / 7} for i in range(5000)
    ]
    data = json.dumps(value).encode()
    assert same(_core.json_loads(data), json.loads(data))


def _response(body: bytes, content_type: str = "application/json") -> nodelay.Response:
    return nodelay.Response(200, headers={"Content-Type": content_type}, content=body)


def test_response_json_uses_the_fast_path_and_kwargs_fall_back() -> None:
    r = _response(b'{"a": 1.5, "b": [1, 2]}')
    assert r.json() == {"a": 1.5, "b": [1, 2]}
    from decimal import Decimal

    assert r.json(parse_float=Decimal) == {"a": Decimal("1.5"), "b": [1, 2]}


def test_response_json_of_utf16_and_utf32_bodies() -> None:
    for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
        r = _response('{"é": "€"}'.encode(codec), f"application/json; charset={codec}")
        assert r.json() == {"é": "€"}


def test_response_json_errors_are_json_decode_errors() -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        _response(b'{"a": }').json()
    assert (info.value.msg, info.value.pos) == ("Expecting value", 6)
    with pytest.raises(json.JSONDecodeError, match="Invalid UTF-8") as bad:
        _response(b'{"a": "\xff"}').json()
    assert bad.value.pos == 7
    assert isinstance(bad.value, ValueError)


def test_response_json_from_the_server(client: nodelay.Client, server: _core.TestServer) -> None:
    r = client.get(f"{server.url}/json/16384")
    assert same(r.json(), json.loads(r.content))


# -- differential corpus for the fast paths (short strings as two words, the str caches,
# one-allocation UTF-8 decoding, Clinger's float fast path) ------------------------------

_WIDE = ["a", "é", "ÿ", "Ā", "߿", "ࠀ", "€", "\uffff", "😀", "\U0010ffff", "\x7f"]


@pytest.mark.parametrize("seed", range(8))
def test_strings_of_every_width_and_length_match_json_loads(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        # Lengths around the 8- and 16-byte word boundaries and the 64-byte key limit.
        n = rng.choice([0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200])
        text = "".join(rng.choice(_WIDE + ["x"] * 8) for _ in range(n))
        for escaped in (False, True):
            body = json.dumps(text, ensure_ascii=escaped).encode()
            check(body)
            check(b"{" + body + b":" + body + b"}")
            # Near the end of the document (less than 16 bytes to read ahead) and not.
            check(b"[" + body + b"]")
            check(b"[" + body + b"," + body + b", 1234567890123456789]")


def test_escapes_between_runs_of_text_match_json_loads() -> None:
    pieces = ["plain", "\n", '"', "\\", "/", "\b\f\r\t", "é€😀", "\x00", "\u2028", "x" * 40]
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12)))
        check(json.dumps(text).encode())
        check(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        check(json.dumps({text: [text]}).encode())
    check(b'"\\/ solidus \\u002F"')


def test_many_distinct_keys_and_values_evicting_each_other_match_json_loads() -> None:
    # Far more distinct short keys and values than cache slots, repeated out of order.
    keys = [f"k{i}" for i in range(1000)] + [f"key-{i:012d}" for i in range(300)]
    rng = random.Random(3)
    objs = [{rng.choice(keys): rng.choice(keys) for _ in range(8)} for _ in range(300)]
    check(json.dumps(objs).encode())
    long_keys = [("p" * 20) + str(i) for i in range(400)]  # same first 16 bytes
    check(json.dumps([{k: i} for i, k in enumerate(long_keys * 2)]).encode())


_FLOAT_TEXTS = [
    "0.1",
    "0.2",
    "0.3",
    "1.0",
    "-1.5",
    "3.141592653589793",
    "2.718281828459045",
    "9007199254740992.0",
    "9007199254740993.0",
    "9007199254740994.5",
    "123456789012345678.0",
    "1234567890123456789.0",
    "12345678901234567890.0",
    "0.000000000000000000001",
    "1e22",
    "1e23",
    "1.5e22",
    "9007199254740993e22",
    "1e-22",
    "1e-23",
    "4.9e-324",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "1E+0",
    "1e-0",
    "0e0",
    "-0e5",
    "0.0e-999999999",
    "1e999999999999",
    "123.456e-7",
    "0.30000000000000004",
    "100000000000000000000000.0",
    "1." + "0" * 30,
    "0." + "0" * 30 + "1",
    "5" + "0" * 25 + "e-25",
]


@pytest.mark.parametrize("text", _FLOAT_TEXTS)
def test_float_texts_match_json_loads(text: str) -> None:
    check(text.encode())
    check(f"[{text}, -{text}]".encode())


def test_random_float_texts_round_trip_like_json_loads() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 22)))
        point = rng.randrange(len(digits) + 1)
        whole, fraction = digits[:point].lstrip("0") or "0", digits[point:]
        text = whole + ("." + fraction if fraction else "")
        if rng.random() < 0.5:
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 40))
        check(text.encode())
        value = rng.random() * 10 ** rng.randrange(-30, 30)
        check(repr(value).encode())


def test_whitespace_everywhere_matches_json_loads() -> None:
    rng = random.Random(5)
    tokens = ["{", '"a"', ":", "[", "1", ",", "2.5", ",", '"é"', "]", ",", '"b"', ":", "null", "}"]
    for _ in range(200):
        parts = [rng.choice(["", " ", "\t", "\n", "\r\n", "  \n\t "]) + t for t in tokens]
        check(("".join(parts) + rng.choice(["", " ", "\n"])).encode())


# -- generated documents built from raw JSON text (escapes json.dumps never writes, invalid
# UTF-8, number texts at the rounding edges), compared value and type for type ------------

_ESCAPES = [
    "\\u00e9",
    "\\u20AC",
    "\\ud83d\\ude00",  # surrogate pair
    "\\uDBFF\\uDFFF",
    "\\ud800",  # lone high surrogate: json.loads keeps it, the fast path falls back
    "\\udc00",  # lone low surrogate
    "\\ud800\\u0041",
    "\\u0000",
    "\\n",
    '\\"',
    "\\\\",
    "\\/",
]
_RAW_TEXT = ["a", "item-", "é", "€", "😀", "\u2028", "x" * 17, "key", " "]
_NUMBER_TEXTS = [
    "0",
    "-0",
    "-0.0",
    "1e400",
    "-1e400",
    "5e-324",
    "4.9e-324",
    "2e-324",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "0.1",
    "9007199254740993",
    "9007199254740993.0",
    "1023",
    "1024",
    "255",
    "256",
    "257",
    "-5",
    "-6",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "1" * 50,
    "1E5",
    "1e-5",
    "2.5e+3",
]


def _raw_string(rng: random.Random) -> bytes:
    parts = [
        rng.choice(_ESCAPES) if rng.random() < 0.3 else rng.choice(_RAW_TEXT)
        for _ in range(rng.randrange(0, 6))
    ]
    data = ('"' + "".join(parts) + '"').encode()
    if rng.random() < 0.03:  # invalid UTF-8 inside the string
        cut = rng.randrange(1, len(data))
        data = data[:cut] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]) + data[cut:]
    return data


def _raw_value(rng: random.Random, depth: int) -> bytes:
    kind = rng.randrange(10 if depth < 8 else 4)
    if kind == 0:
        return _raw_string(rng)
    if kind == 1:
        return rng.choice(_NUMBER_TEXTS).encode()
    if kind == 2:
        return rng.choice([b"true", b"false", b"null", b"NaN", b"Infinity", b"-Infinity"])
    if kind == 3:
        return str(rng.randrange(-2000, 2000)).encode()
    if kind in (4, 5, 6):
        items = [_raw_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
        return b"[" + b", ".join(items) + b"]"
    keys = [_raw_string(rng) for _ in range(rng.randrange(0, 5))]
    if keys and rng.random() < 0.3:
        keys.append(rng.choice(keys))  # duplicate key
    pairs = [k + b": " + _raw_value(rng, depth + 1) for k in keys]
    return b"{" + b",".join(pairs) + b"}"


@pytest.mark.parametrize("seed", range(10))
def test_generated_raw_documents_match_json_loads(seed: int) -> None:
    rng = random.Random(1000 + seed)
    for _ in range(200):
        check(_raw_value(rng, 0))
    # Deep nesting around the fast path's limit, with content at the bottom.
    for depth in (255, 256, 257, 300):
        check(b"[" * depth + _raw_value(rng, 8) + b"]" * depth)
        check(b'{"\xc3\xa9":' * depth + _raw_value(rng, 8) + b"}" * depth)


def test_documents_in_succession_match_json_loads() -> None:
    # The string caches outlive a document: entries of one must never answer for
    # different text in the next. Long keys share their first 16 bytes and sit at the
    # same offset in each document; short values recur with other neighbours.
    for tail in ("AAAA", "BBBB", "AAAA", "AAAB", "é€", "CCCC"):
        check(('{"pppppppppppppppp' + tail + '": 1}').encode())
        check(('[{"pppppppppppppppp' + tail + '": "v' + tail + '"}]').encode())
    rng = random.Random(9)
    words = ["a", "b", "ab", "é", "item-1", "item-10", "x" * 16, "x" * 15 + "y", ""]
    for _ in range(300):
        doc = {rng.choice(words): [rng.choice(words) for _ in range(3)] for _ in range(4)}
        check(json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode())


def test_a_parse_inside_a_parse_matches_json_loads() -> None:
    # A finalizer run by the garbage collection one of the parse's allocations
    # triggers can call json_loads again while the outer parse holds its caches.
    import gc

    inner = json.dumps([{"k" * 20: "v", "i": i, "name": f"item-{i}"} for i in range(50)]).encode()
    results: list[object] = []

    class Parses:
        def __init__(self) -> None:
            self.cycle = self

        def __del__(self) -> None:
            results.append(_core.json_loads(inner))

    outer = json.dumps([{"k" * 20: i, "name": f"item-{i}", "tags": ["a"]} for i in range(2000)])
    data = outer.encode()
    old, enabled = gc.get_threshold(), gc.isenabled()
    try:
        gc.disable()
        for _ in range(20):
            Parses()  # garbage for the first collection, inside the parse
        gc.set_threshold(1)
        gc.enable()
        parsed = _core.json_loads(data)
        during = len(results)
    finally:
        gc.set_threshold(*old)
        if not enabled:
            gc.disable()
        gc.collect()
    assert during, "no finalizer ran during the parse"
    assert same(parsed, json.loads(outer))
    for value in results:
        assert same(value, json.loads(inner))


def test_shared_small_ints_match_json_loads() -> None:
    check(b"[0, 1, 255, 256, 257, 1023, 1024, -0, -1, -1023, 1023.0, 00]")
    assert _core.json_loads(b"[1000, 1000]") == [1000, 1000]
