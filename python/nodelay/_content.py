"""A body's bytes as text and JSON: the charset a Content-Type names, the encoding a
client falls back to, the body of a response built by hand.

Below the models: it knows bytes and strings, not ``Request`` or ``Response``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["DefaultEncoding"]


def _known_encoding(name: str) -> bool:
    import codecs

    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


def _charset(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value, if any."""
    if not content_type:
        return None
    for param in content_type.split(";")[1:]:
        name, sep, value = param.partition("=")
        if sep and name.strip().lower() == "charset":
            value = value.strip().strip("\"'").strip()
            return value or None
    return None


def _response_body(
    content: bytes | str | None, text: str | None, html: str | None, json: Any
) -> tuple[bytes, str | None]:
    """The body of a hand-built ``Response`` and its Content-Type (httpx's encodings)."""
    if content is not None:
        return (content.encode("utf-8") if isinstance(content, str) else bytes(content)), None
    if text is not None:
        return text.encode("utf-8"), "text/plain; charset=utf-8"
    if html is not None:
        return html.encode("utf-8"), "text/html; charset=utf-8"
    if json is not None:
        from json import dumps

        encoded = dumps(json, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return encoded.encode("utf-8"), "application/json"
    return b"", None


class DefaultEncoding:
    """``Client(default_encoding=)`` as a response holds it (in ``_encoding``, until an
    explicit ``encoding = ...`` replaces it): a name, or a function of the body's bytes
    returning a name or None."""

    __slots__ = ("value",)

    def __init__(self, value: str | Callable[[bytes], str | None]) -> None:
        self.value = value


def _utf8_json_error(content: bytes, exc: UnicodeDecodeError) -> ValueError:
    """``json.JSONDecodeError`` for a body that is not valid UTF-8 (what ``json.loads``
    reports as ``UnicodeDecodeError``), positioned at the first bad byte."""
    import json

    text = content.decode("utf-8", "replace")
    pos = len(content[: exc.start].decode("utf-8", "replace"))
    return json.JSONDecodeError(f"Invalid UTF-8 in JSON body ({exc.reason})", text, pos)
