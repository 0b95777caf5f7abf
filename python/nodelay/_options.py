"""Keyword-argument sets shared by the request functions, for type checkers only.

``nodelay.get(url, **kwargs: Unpack[ApiOptions])`` gives mypy, pyright and IDEs the full
keyword list (names and types) without repeating it in every function: the functions
forward ``**kwargs`` to the one that takes them by name, which rejects an unknown name
with the usual ``TypeError``. Nothing imports this module at run time (annotations are
strings), so it costs ``import nodelay`` nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any, TypedDict

from ._auth import AuthTypes
from ._config import CertTypes, TimeoutTypes, VerifyTypes, _Unset
from ._cookies import CookieTypes
from ._prepare import RequestContent, RequestData, RequestHeaderTypes
from ._proxy import ProxyTypes
from ._upload import RequestFiles
from ._urls import ParamTypes

__all__ = [
    "ApiBodyOptions",
    "ApiOptions",
    "AsyncBodyOptions",
    "AsyncBuildOptions",
    "BodyOptions",
    "BuildOptions",
    "RequestOptions",
    "ThrowawayClientOptions",
]


class RequestOptions(TypedDict, total=False):
    """What every request takes, with or without a body (see ``Client.request``)."""

    params: ParamTypes | None
    headers: RequestHeaderTypes | None
    timeout: TimeoutTypes | _Unset
    follow_redirects: bool | None
    allow_redirects: bool | None
    cookies: CookieTypes | None
    auth: AuthTypes | None
    stream: bool


class _BodyFields(TypedDict, total=False):
    data: RequestData | None
    files: RequestFiles | None
    json: Any


class BodyOptions(RequestOptions, _BodyFields, total=False):
    """A request with a body: one of ``content``, ``data`` (+ ``files``) or ``json``."""

    content: RequestContent | None


class AsyncBodyOptions(RequestOptions, _BodyFields, total=False):
    """``BodyOptions`` for ``AsyncClient``, whose ``content`` may be an async iterable."""

    content: RequestContent | AsyncIterable[bytes] | None


class _BuildFields(_BodyFields, total=False):
    params: ParamTypes | None
    headers: RequestHeaderTypes | None
    cookies: CookieTypes | None


class BuildOptions(_BuildFields, total=False):
    """``Client.build_request``: what makes up a request (how it is sent is ``send``'s)."""

    content: RequestContent | None


class AsyncBuildOptions(_BuildFields, total=False):
    """``AsyncClient.build_request``: ``content`` may be an async iterable."""

    content: RequestContent | AsyncIterable[bytes] | None


class ThrowawayClientOptions(TypedDict, total=False):
    """What configures the throw-away ``Client`` of ``nodelay.get`` and friends."""

    verify: VerifyTypes
    cert: CertTypes | None
    trust_env: bool
    proxy: ProxyTypes | None


class ApiOptions(RequestOptions, ThrowawayClientOptions, total=False):
    """``nodelay.get`` / ``head`` / ``options`` / ``delete``."""


class ApiBodyOptions(BodyOptions, ThrowawayClientOptions, total=False):
    """``nodelay.request`` / ``post`` / ``put`` / ``patch``."""
