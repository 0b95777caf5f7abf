"""The request body of ``nodelay get``, as curl builds it from its data options.

``-d``/``--data``, ``--data-ascii``, ``--data-binary``, ``--data-raw`` and
``--data-urlencode`` each add one part; the parts are joined with ``&`` in command-line
order (curl's rule). ``--json`` parts are joined with nothing. ``-G`` moves the data
parts into the URL's query instead. ``-F`` builds a multipart form.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, NamedTuple
from urllib.parse import quote_plus

__all__ = [
    "DataPart",
    "data_ascii",
    "data_binary",
    "data_raw",
    "data_urlencode",
    "form_fields",
    "join_data",
    "join_json",
    "with_query",
]


class DataPart(NamedTuple):
    """One data option as given: which option (``ascii``, ``binary``, ``raw``,
    ``urlencode``) and its argument."""

    kind: str
    value: str


def data_ascii(value: str) -> DataPart:
    """``-d``/``--data``/``--data-ascii``: ``@FILE`` reads FILE without its CR and LF."""
    return DataPart("ascii", value)


def data_binary(value: str) -> DataPart:
    """``--data-binary``: ``@FILE`` reads FILE as it is."""
    return DataPart("binary", value)


def data_raw(value: str) -> DataPart:
    """``--data-raw``: the text as it is, ``@`` included."""
    return DataPart("raw", value)


def data_urlencode(value: str) -> DataPart:
    """``--data-urlencode``: ``content``, ``=content``, ``name=content``, ``@FILE`` or
    ``name@FILE``, the content percent-encoded."""
    return DataPart("urlencode", value)


def _read(source: str) -> bytes:
    """The bytes of ``@source``: a file, or standard input for ``-``."""
    return sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()


def _encode(content: bytes) -> bytes:
    # curl's --data-urlencode: every byte but the unreserved ALPHA DIGIT - . _ ~ (RFC 3986
    # §2.3) percent-encoded, a space as "+" (the form encoding).
    return quote_plus(content, safe="").encode("ascii")


def _urlencoded(value: str) -> bytes:
    name, sep, content = value.partition("=")
    if sep:  # "=content" or "name=content"
        prefix = name.encode("utf-8") + b"=" if name else b""
        return prefix + _encode(content.encode("utf-8"))
    name, at, source = value.partition("@")
    if at:  # "@file" or "name@file"
        prefix = name.encode("utf-8") + b"=" if name else b""
        return prefix + _encode(_read(source))
    return _encode(value.encode("utf-8"))


def _part_bytes(part: DataPart) -> bytes:
    if part.kind == "urlencode":
        return _urlencoded(part.value)
    if part.kind != "raw" and part.value.startswith("@"):
        raw = _read(part.value[1:])
        if part.kind == "ascii":
            # curl -d @file: "carriage returns and newlines will be stripped out".
            return raw.replace(b"\r", b"").replace(b"\n", b"")
        return raw
    return part.value.encode("utf-8")


def join_data(parts: list[DataPart]) -> bytes:
    """The body of the data options: every part, in order, joined with ``&``."""
    return b"&".join(_part_bytes(part) for part in parts)


def join_json(values: list[str]) -> bytes:
    """The body of the ``--json`` options, concatenated as curl does; ``@FILE`` (or
    ``@-``) reads a file as it is."""
    return b"".join(_read(v[1:]) if v.startswith("@") else v.encode("utf-8") for v in values)


def with_query(url: str, data: bytes) -> str:
    """``-G``: ``url`` with ``data`` appended to its query (after ``?``, or ``&`` when it
    has one), the fragment dropped as curl does."""
    base = url.partition("#")[0]
    if not data:
        return base
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}{data.decode('latin-1')}"


def form_fields(
    values: list[str],
) -> tuple[dict[str, str], dict[str, tuple[str, IO[bytes], str | None]]]:
    """``-F`` values as ``data=`` fields and ``files=`` (``NAME=@FILE[;type=MIME]``);
    the files stay open until the process ends (one request)."""
    data: dict[str, str] = {}
    files: dict[str, tuple[str, IO[bytes], str | None]] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise ValueError(f"bad -F {value!r}: expected NAME=VALUE or NAME=@FILE")
        if rest.startswith("@"):
            path, _, mime = rest[1:].partition(";type=")
            files[name] = (Path(path).name, Path(path).open("rb"), mime or None)
        else:
            data[name] = rest
    return data, files
