"""URL merging: ``base_url`` + relative URL, and query parameters.

Semantics (documented on ``Client``):
- ``base_url`` joins httpx-style: the base path is kept and the relative URL is appended to
  it with exactly one slash (``"http://h/api"`` + ``"/users"`` → ``"http://h/api/users"``).
  A URL with a scheme (``http://...``) ignores ``base_url``.
- ``params`` are added after any query already in the URL (which is kept byte for byte);
  request params replace client params of the same name; a list value repeats the key;
  ``True``/``False`` become ``"true"``/``"false"`` and ``None`` becomes ``""`` (httpx).
- A ``#fragment`` is never sent.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, TypeAlias

    PrimitiveData: TypeAlias = "str | int | float | bool | None"
    ParamTypes: TypeAlias = (
        "Mapping[str, PrimitiveData | Sequence[PrimitiveData]]"
        " | Sequence[tuple[str, PrimitiveData]] | str | bytes"
    )

__all__ = [
    "DEFAULT_PORTS",
    "HTTP_DEFAULT_PORTS",
    "join_base",
    "merge_params",
    "normalize_base",
    "param_pairs",
    "with_query",
]

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
"""The port of each scheme when a URL names none (httpx's ``URL`` table)."""
HTTP_DEFAULT_PORTS = {scheme: DEFAULT_PORTS[scheme] for scheme in ("http", "https")}
"""The schemes a client sends requests to (a redirect anywhere else is refused)."""


# isinstance() with a tuple: ``int | float`` would build a UnionType object on every
# call (callgrind: ~5% of a small form POST's instructions went to those).
_NUMBERS = (int, float)
_SEQUENCES = (list, tuple)


def _primitive(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, _NUMBERS):
        return str(value)
    raise TypeError(f"query parameter values must be str, int, float, bool or None: {value!r}")


def param_pairs(params: ParamTypes | None) -> list[tuple[str, str]]:
    """Normalise ``params`` into ``(name, value)`` pairs (lists expand to repeated names)."""
    if params is None:
        return []
    # ``type(x) is`` first: a failing isinstance() also looks up ``x.__class__``, and the
    # checks below ran ~14 of them per form POST (callgrind: 8% of its instructions).
    if type(params) is dict:
        items: Any = params.items()
    else:
        if isinstance(params, bytes):
            params = params.decode("ascii")
        if isinstance(params, str):
            from urllib.parse import parse_qsl

            return parse_qsl(params.lstrip("?"), keep_blank_values=True)
        items = params.items() if hasattr(params, "items") else params
    out: list[tuple[str, str]] = []
    for key, value in items:
        if type(value) is str:  # what _primitive returns for it, without the call
            out.append((key if type(key) is str else str(key), value))
        elif isinstance(value, _SEQUENCES):
            out.extend((str(key), _primitive(v)) for v in value)
        else:
            out.append((str(key), _primitive(value)))
    return out


def merge_params(
    base: list[tuple[str, str]], extra: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Client ``base`` params overridden by name with request ``extra`` params."""
    if not extra:
        return base
    if not base:
        return extra
    names = {name for name, _ in extra}
    return [pair for pair in base if pair[0] not in names] + extra


def with_query(url: str, pairs: list[tuple[str, str]]) -> str:
    """``url`` without its fragment, with ``pairs`` appended to its query."""
    url = url.partition("#")[0]
    if not pairs:
        return url
    from urllib.parse import urlencode

    query = urlencode(pairs)
    if "?" not in url:
        return f"{url}?{query}"
    if url.endswith(("?", "&")):
        return url + query
    return f"{url}&{query}"


def _has_scheme(url: str) -> bool:
    """True for ``scheme://...`` (RFC 3986 scheme characters)."""
    colon = url.find("://")
    if colon <= 0:
        return False
    scheme = url[:colon]
    return (
        scheme[0].isascii()
        and scheme[0].isalpha()
        and all(c.isascii() and (c.isalnum() or c in "+-.") for c in scheme)
    )


def normalize_base(base_url: str) -> str:
    """``base_url`` without query or fragment, ending with exactly one ``/`` ("" stays "")."""
    base_url = str(base_url)
    if not base_url:
        return ""
    base = base_url.partition("#")[0].partition("?")[0]
    if not _has_scheme(base):
        from ._exceptions import InvalidURL

        raise InvalidURL(f"base_url must be an absolute URL, got {base_url!r}", url=base_url)
    return base.rstrip("/") + "/"


def join_base(base: str, url: str) -> str:
    """Join a relative ``url`` onto a normalised ``base`` (see ``normalize_base``)."""
    if not base or _has_scheme(url):
        return url
    if url.startswith("//"):  # scheme-relative
        return base[: base.index(":") + 1] + url
    return base + url.lstrip("/")
