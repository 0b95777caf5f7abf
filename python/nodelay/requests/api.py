"""The module-level functions: each opens a ``Session``, sends one request and closes it."""

from __future__ import annotations

from typing import Any

from .models import Response
from .sessions import Session

__all__ = ["delete", "get", "head", "options", "patch", "post", "put", "request"]


def request(method: str, url: str | bytes, **kwargs: Any) -> Response:
    """Send a request with ``Session.request``'s arguments; redirects are followed except
    for HEAD (``allow_redirects=`` to choose)."""
    with Session() as session:
        return session.request(method=method, url=url, **kwargs)


def get(url: str | bytes, params: Any = None, **kwargs: Any) -> Response:
    return request("get", url, params=params, **kwargs)


def options(url: str | bytes, **kwargs: Any) -> Response:
    return request("options", url, **kwargs)


def head(url: str | bytes, **kwargs: Any) -> Response:
    kwargs.setdefault("allow_redirects", False)
    return request("head", url, **kwargs)


def post(url: str | bytes, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
    return request("post", url, data=data, json=json, **kwargs)


def put(url: str | bytes, data: Any = None, **kwargs: Any) -> Response:
    return request("put", url, data=data, **kwargs)


def patch(url: str | bytes, data: Any = None, **kwargs: Any) -> Response:
    return request("patch", url, data=data, **kwargs)


def delete(url: str | bytes, **kwargs: Any) -> Response:
    return request("delete", url, **kwargs)
