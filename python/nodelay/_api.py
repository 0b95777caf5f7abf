"""Module-level helpers: ``nodelay.get(url)`` and friends.

Each call opens a ``Client``, sends one request and closes the client (like httpx), so no
connection is reused between calls: use a ``Client`` for more than a few requests.
Redirects are not followed unless ``follow_redirects=True`` (or ``allow_redirects=True``).
The keyword arguments are those of ``Client.request`` plus the throw-away client's
``verify``, ``cert``, ``trust_env`` and ``proxy`` (the full typed list: ``_options.py``).
"""

from __future__ import annotations

from contextlib import contextmanager

from ._client import Client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Unpack

    from ._models import Response
    from ._options import ApiBodyOptions, ApiOptions

__all__ = ["delete", "get", "head", "options", "patch", "post", "put", "request", "stream"]

_CLIENT_OPTIONS = ("verify", "cert", "trust_env", "proxy")
"""The keyword arguments that configure the throw-away client, not the request."""
_BODY_OPTIONS = ("content", "data", "files", "json")
"""What ``get``/``head``/``options``/``delete`` do not take (as in httpx)."""


def _bodyless(method: str, url: str, kwargs: ApiOptions) -> Response:
    for name in _BODY_OPTIONS:
        if name in kwargs:
            raise TypeError(f"{method.lower()}() got an unexpected keyword argument {name!r}")
    return request(method, url, **kwargs)


def request(method: str, url: str, **kwargs: Unpack[ApiBodyOptions]) -> Response:
    """Send one request with a throw-away ``Client`` (see ``Client.request``).

    ``cookies`` and ``auth`` apply to this request's origin only (never carried by a
    redirect to another one); ``trust_env``: use ``.netrc`` credentials when no ``auth``,
    and the ``*_proxy`` environment variables when no ``proxy`` (see ``Client``).
    """
    request_kwargs: dict[str, Any] = dict(kwargs)
    client_options = {k: request_kwargs.pop(k) for k in _CLIENT_OPTIONS if k in request_kwargs}
    with Client(**client_options) as client:
        return client.request(method, url, **request_kwargs)


def get(url: str, **kwargs: Unpack[ApiOptions]) -> Response:
    """Send a GET request with a throw-away ``Client``."""
    return _bodyless("GET", url, kwargs)


def head(url: str, **kwargs: Unpack[ApiOptions]) -> Response:
    """Send a HEAD request with a throw-away ``Client``."""
    return _bodyless("HEAD", url, kwargs)


def options(url: str, **kwargs: Unpack[ApiOptions]) -> Response:
    """Send an OPTIONS request with a throw-away ``Client``."""
    return _bodyless("OPTIONS", url, kwargs)


def delete(url: str, **kwargs: Unpack[ApiOptions]) -> Response:
    """Send a DELETE request with a throw-away ``Client``."""
    return _bodyless("DELETE", url, kwargs)


def post(url: str, **kwargs: Unpack[ApiBodyOptions]) -> Response:
    """Send a POST request with a throw-away ``Client``."""
    return request("POST", url, **kwargs)


def put(url: str, **kwargs: Unpack[ApiBodyOptions]) -> Response:
    """Send a PUT request with a throw-away ``Client``."""
    return request("PUT", url, **kwargs)


def patch(url: str, **kwargs: Unpack[ApiBodyOptions]) -> Response:
    """Send a PATCH request with a throw-away ``Client``."""
    return request("PATCH", url, **kwargs)


@contextmanager
def stream(method: str, url: str, **kwargs: Any) -> Iterator[Response]:
    """``with nodelay.stream("GET", url) as r:`` — ``Client.stream`` with a throw-away client
    (``verify``, ``cert``, ``trust_env`` and ``proxy`` configure it; the rest go to the
    request)."""
    client_options = {k: kwargs.pop(k) for k in _CLIENT_OPTIONS if k in kwargs}
    with Client(**client_options) as client, client.stream(method, url, **kwargs) as response:
        yield response
