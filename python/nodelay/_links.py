"""The ``Link`` header (RFC 8288) as requests and httpx read it: ``Response.links``."""

from __future__ import annotations

__all__ = ["parse_links"]

_QUOTES = " '\""


def parse_links(value: str) -> dict[str, dict[str, str]]:
    """``<https://api/x?page=2>; rel="next", <...>; rel="last"`` →
    ``{"next": {"url": "https://api/x?page=2", "rel": "next"}, "last": {...}}``.

    Keyed by ``rel`` (by the URL when a link has none); a later link with the same key
    replaces an earlier one. Parameter names are case-insensitive (lower-cased here); a
    parameter without ``=`` ends a link's list, as in requests. Never raises: a malformed
    value gives what could be read of it.
    """
    links: dict[str, dict[str, str]] = {}
    for piece in _split_links(value.strip(_QUOTES)):
        url, _, params = piece.partition(";")
        link = {"url": url.strip("<> '\"")}
        for param in params.split(";"):
            key, sep, val = param.partition("=")
            if not sep:
                break
            link[key.strip(_QUOTES).lower()] = val.strip(_QUOTES)
        links[link.get("rel") or link["url"]] = link
    return links


def _split_links(value: str) -> list[str]:
    """The links of a Link value: split at the commas that start a new ``<URL>``, so a
    comma inside a URL or a parameter stays where it is."""
    pieces: list[str] = []
    if not value:
        return pieces
    for part in value.split(","):
        if pieces and not part.lstrip().startswith("<"):
            pieces[-1] += "," + part
        else:
            pieces.append(part)
    return pieces
