"""Turning request arguments into what the engine sends: headers, body, cookies.

Shared by ``Client`` and ``AsyncClient`` (no I/O here).
"""

from __future__ import annotations

from . import _core
from ._cookies import CookieJar
from ._headers import Headers, _to_str
from ._upload import encode_content, encode_multipart
from ._urls import HTTP_DEFAULT_PORTS, param_pairs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import IO, Any, TypeAlias

    from ._cookies import CookieTypes
    from ._headers import HeaderTypes
    from ._upload import Body, RequestFiles

    RequestHeaderTypes: TypeAlias = "HeaderTypes | Mapping[str, str | None]"
    RequestContent: TypeAlias = "bytes | bytearray | memoryview | str | IO[bytes] | Iterable[bytes]"
    RequestData: TypeAlias = "Mapping[str, Any] | Sequence[tuple[str, Any]] | str | bytes"
    Pairs: TypeAlias = "list[tuple[str, str]]"

_BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))
_FORM = "application/x-www-form-urlencoded"
_JSON = "application/json"
DEFAULT_PORTS = HTTP_DEFAULT_PORTS

# Everything the engine decodes (gzip incl. multi-member, zlib/raw deflate, brotli, zstd):
# the engine's one default, which the C ABI's clients (Perl, Ruby) send too.
ACCEPT_ENCODING: str = _core.DEFAULTS["accept_encoding"]


# A tuple, not ``A | B``: that would build a UnionType object on every call.
_RAW_DATA = (str, bytes, bytearray, memoryview)


def default_headers() -> Pairs:
    """A client's default fields (crates/nodelay-front/src/defaults.rs), before its own."""
    return [
        ("User-Agent", _core.DEFAULTS["user_agent"]),
        ("Accept", _core.DEFAULTS["accept"]),
        ("Accept-Encoding", ACCEPT_ENCODING),
    ]


def header_items(headers: RequestHeaderTypes | None) -> list[tuple[str, str | None]]:
    """Per-request headers as pairs; ``None`` values (Mapping only) mean "remove"."""
    if headers is None:
        return []
    if isinstance(headers, Headers):
        return list(headers._list)
    if hasattr(headers, "items"):
        return [(_to_str(k), None if v is None else _to_str(v)) for k, v in headers.items()]
    return [(_to_str(k), _to_str(v)) for k, v in headers]


def has_header(pairs: Pairs, lower_name: str) -> bool:
    return any(name.lower() == lower_name for name, _ in pairs)


def encode_body(
    method: str,
    content: RequestContent | None,
    data: RequestData | None,
    json: Any,
    files: RequestFiles | None = None,
) -> tuple[Body | None, str | None]:
    """``(body, content_type)`` for the body arguments (at most one may be given, except
    ``data`` fields with ``files``). The body is bytes, or an ``Upload`` streamed by the
    engine (iterables, files, multipart forms with files; see ``_upload``)."""
    if (content is not None) + (data is not None) + (json is not None) > 1:
        raise TypeError("give at most one of content=, data= and json=")
    if files is not None:
        if content is not None or json is not None:
            raise TypeError("files= combines with data= only, not with content= or json=")
        if isinstance(data, _RAW_DATA):
            raise TypeError("with files=, data= must be a dict or (name, value) pairs")
        return encode_multipart(data, files)
    if content is not None:
        return encode_content(content), None
    if data is not None:
        if type(data) is dict:  # the usual form: no failing isinstance() checks
            body = _core.form_encode_dict(data)  # None unless every key and value is a str
            if body is None:
                body = _core.form_encode(param_pairs(data))
            return body, _FORM
        if isinstance(data, _RAW_DATA):
            return encode_content(data), None  # requests: str/bytes data is the raw body
        # Encoded in Rust, byte-identical to urllib.parse.urlencode (~10x faster).
        return _core.form_encode(param_pairs(data)), _FORM
    if json is not None:
        import json as _json

        text = _json.dumps(json, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8"), _JSON
    # No body: POST/PUT/PATCH still say "Content-Length: 0" (b""), others send none.
    return (b"" if method in _BODY_METHODS else None), None


def origin(url: str) -> tuple[str, str | None, int | None] | None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return (scheme, parts.hostname, parts.port or DEFAULT_PORTS.get(scheme))
    except ValueError:
        return None  # unparsable: never equal to anything, so credentials get stripped


def without(pairs: Pairs, lower_names: frozenset[str]) -> Pairs:
    return [pair for pair in pairs if pair[0].lower() not in lower_names]


def request_cookies(cookies: CookieTypes, url: str) -> dict[str, str]:
    """Per-request ``cookies=`` as name → value (a jar gives the cookies it has for url)."""
    if isinstance(cookies, CookieJar):
        header = cookies.header_for(url)
        return dict(p.partition("=")[::2] for p in header.split("; ")) if header else {}
    return {_to_str(k): _to_str(v) for k, v in cookies.items()}
